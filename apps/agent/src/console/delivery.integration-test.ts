/**
 * ConsoleLink against the console's real REST handler, in-process (packages/api's restCall, the
 * way packages/api's tests call it) over the integration tier's throwaway PostgreSQL: no console
 * build needed. Issue 11 items 1 and 6: a sample the console refuses (invalid: 400; dated 2099:
 * refused in the reply) is dropped and counted, and every other sample is stored.
 */
import type { Observation } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import { HOST, sample } from "@tide/diagnostics/fixtures";
import { ConsoleLink } from "./console-link";
import { storedSampleTimes, testHello, useConsoleDb } from "./testing";

const c = useConsoleDb(HOST);

/** fetch answered by the console's REST handler in this process. */
const inProcessFetch = (async (url: URL | string, init?: RequestInit) => {
  const u = new URL(String(url));
  const token = new Headers(init?.headers).get("authorization")?.replace(/^Bearer /, "");
  const r = await c.restCall(c.db, init?.method ?? "GET", u.pathname.replace(/^\/api\/v1/, "") + u.search, {
    token,
    body: init?.body === undefined ? undefined : (JSON.parse(String(init.body)) as unknown),
  });
  return new Response(JSON.stringify(r.body), { status: r.status });
}) as typeof fetch;

describe("agent <-> console REST handler: refusals", () => {
  it("drops the invalid and the 2099 sample, stores the other 28, and says why", async () => {
    const start = Math.floor(Date.now() / 1000) * 1000 - 60_000;
    const samples: Observation[] = Array.from({ length: 30 }, (_, t) => ({
      ...sample(t),
      sampledAt: new Date(start + t * 1000).toISOString(),
    }));
    // An invalid reading (the contract wants a whole number): the console answers 400 to its batch.
    samples[10] = { ...samples[10]!, cpus: [{ ...samples[10]!.cpus[0]!, softnetDropped: 0.5 }] };
    samples[29] = { ...samples[29]!, sampledAt: "2099-01-01T00:00:00.000Z" };

    const logs: string[] = [];
    const link = new ConsoleLink({
      consoleUrl: "http://console.test",
      token: c.hostToken,
      bufferCapacity: 100,
      hello: () => testHello(HOST),
      log: (line) => logs.push(line),
      onDesired: () => Promise.resolve(),
      fetch: inProcessFetch,
    });
    try {
      for (const s of samples.slice(0, -1)) link.buffer.push(s);
      await link.offer(samples[29]!, []);
      expect(link.lastError).toBeNull();
      expect(link.buffer.size).toBe(0);
      expect(link.samplesDropped).toEqual({
        buffer_full: 0,
        refused: 1,
        in_future: 1,
        too_old: 0,
        spool_damaged: 0,
      });
      expect(await storedSampleTimes(c.db)).toEqual(
        samples.filter((_, i) => i !== 10 && i !== 29).map((s) => s.sampledAt),
      );
      expect(logs.some((l) => l.includes(`refused the sample of ${samples[10]!.sampledAt}`))).toBe(true);
      expect(logs.some((l) => l.includes("2099-01-01T00:00:00.000Z: in_future"))).toBe(true);
      expect(logs.join("\n")).not.toContain("unreachable");
    } finally {
      await link.close();
    }
  });
});
