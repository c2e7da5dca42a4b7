/**
 * Failover between consoles (issue 16: agents given a list of URLs): two consoles on loopback,
 * plain node:http servers in front of the console's real REST handler (packages/api's restCall, as
 * in delivery.integration-test.ts) over one throwaway PostgreSQL, the way two console processes
 * share one database. Console A stops answering mid-run (listener closed, connections cut); the
 * agent's ConsoleLink moves to B, and every sample is stored exactly once, in order on each console.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { AgentObservationsIn, AgentObservationsReply, Observation } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import { HOST, sample } from "@tide/diagnostics/fixtures";
import { ConsoleLink } from "./console-link";
import { storedSampleTimes, testHello, useConsoleDb } from "./testing";

const c = useConsoleDb(HOST);

async function bodyOf(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return chunks.length === 0 ? undefined : (JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown);
}

/**
 * One console on 127.0.0.1: each request goes to the REST handler; `stored` lists the sampledAt of
 * each sample this console stored, in the order it stored them; `refused` what it did not store.
 * Once `dies` says so, the next request finds it killed: no answer, and no console listening.
 */
async function fakeConsoleProcess(
  dies: (stored: string[]) => boolean = () => false,
  /** Answer this many batches 503 busy with `Retry-After: 2` (its in-flight bound), as the console does. */
  busyBatches = 0,
): Promise<{
  server: Server;
  url: string;
  stored: string[];
  refused: string[];
  busyAt: number[];
  batchAt: number[];
}> {
  const stored: string[] = [];
  const refused: string[] = [];
  /** When each batch arrived, and when each one answered busy arrived (ms). */
  const batchAt: number[] = [];
  const busyAt: number[] = [];
  const server = createServer((req, res) => {
    if (dies(stored)) {
      kill(server);
      return;
    }
    if (req.url?.startsWith("/api/v1/agent/observations")) {
      batchAt.push(Date.now());
      if (busyAt.length < busyBatches) {
        busyAt.push(Date.now());
        req.resume();
        res
          .writeHead(503, { "content-type": "application/json", "retry-after": "2" })
          .end(JSON.stringify({ message: "The console is busy: it is working on 64 agent batches." }));
        return;
      }
    }
    void (async () => {
      const u = new URL(req.url ?? "/", "http://console");
      // The desired-state long poll answers at once here: nothing is left waiting on the database.
      u.searchParams.delete("waitMs");
      const body = await bodyOf(req);
      const r = await c.restCall(c.db, req.method ?? "GET", u.pathname.replace(/^\/api\/v1/, "") + u.search, {
        token: req.headers.authorization?.replace(/^Bearer /, ""),
        body,
      });
      if (u.pathname === "/api/v1/agent/observations" && r.status === 200) {
        const not = new Set(((r.body as AgentObservationsReply).refused ?? []).map((x) => x.sampledAt));
        for (const o of (body as AgentObservationsIn).observations)
          (not.has(o.sampledAt) ? refused : stored).push(o.sampledAt);
      }
      res.writeHead(r.status, { "content-type": "application/json" }).end(JSON.stringify(r.body));
    })().catch((err: unknown) => {
      res.writeHead(500).end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, stored, refused, busyAt, batchAt };
}

/** Stop answering: no new connection is accepted and open ones are cut (a killed process). */
function kill(server: Server): void {
  server.close();
  server.closeAllConnections();
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe("agent with two consoles: console A stops mid-run", () => {
  it("moves to console B and delivers every sample exactly once, in order on each console", async () => {
    const A_STORES = 10; // console A is killed once it has stored this many samples
    let aKilled = false;
    const a = await fakeConsoleProcess((stored) => (aKilled ||= stored.length >= A_STORES));
    const b = await fakeConsoleProcess();
    const logs: string[] = [];
    const link = new ConsoleLink({
      consoleUrls: [a.url, b.url],
      token: c.hostToken,
      bufferCapacity: 1000,
      hello: () => testHello(HOST),
      log: (line) => logs.push(line),
      onDesired: () => Promise.resolve(),
    });
    // Samples one second apart in the recent past (inside the console's retention), offered every
    // 100 ms so the run takes seconds; the agent goes on sampling through the outage.
    const start = Math.floor(Date.now() / 1000) * 1000 - 5 * 60_000;
    const offered: Observation[] = [];
    const next = (): Observation => {
      const t = offered.length;
      const o = { ...sample(t), sampledAt: new Date(start + t * 1000).toISOString() };
      offered.push(o);
      return o;
    };
    const deadline = Date.now() + 45_000;
    try {
      // At least 40 samples, and on until the switch is done and the buffer is empty.
      while (offered.length < 40 || link.buffer.size > 0 || b.stored.length === 0) {
        if (Date.now() > deadline) throw new Error(`no failover in 45 s; logs:\n${logs.join("\n")}`);
        await link.offer(next(), []);
        await sleep(100);
      }
    } finally {
      await link.close();
      kill(a.server);
      kill(b.server);
    }

    const all = offered.map((o) => o.sampledAt);
    const seq = (ts: string[]) => ts.map((t) => all.indexOf(t));
    // A stored the first samples, B all the others: each one once, in order on each console.
    expect(aKilled).toBe(true);
    expect(a.stored.length).toBeGreaterThanOrEqual(A_STORES);
    expect(b.stored.length).toBeGreaterThan(0);
    expect([...a.stored, ...b.stored]).toEqual(all);
    for (const s of [seq(a.stored), seq(b.stored)]) expect(s).toEqual(s.map((_, i) => s[0]! + i));
    expect([...a.refused, ...b.refused]).toEqual([]); // nothing sent twice (no duplicate)
    // What both consoles stored in the one database: every sample, once.
    expect(await storedSampleTimes(c.db)).toEqual(all);
    expect(link.consoleUrl).toBe(b.url);
    expect(
      logs.some((l) => l.startsWith(`console ${a.url} unreachable (`) && l.includes(`; trying ${b.url};`)),
    ).toBe(true);
    expect(logs).toContain(`console reachable again at ${b.url}`);
    console.log(
      `[failover it] ${all.length} samples: ${a.stored.length} stored by A, ${b.stored.length} by B after the switch`,
    );
  });
});

describe("agent with one busy console", () => {
  it("waits the 503's Retry-After, keeps the batch, and delivers every sample once, in order", async () => {
    const a = await fakeConsoleProcess(() => false, 2);
    const logs: string[] = [];
    const link = new ConsoleLink({
      consoleUrls: [a.url],
      token: c.hostToken,
      bufferCapacity: 1000,
      hello: () => testHello(HOST),
      log: (line) => logs.push(line),
      onDesired: () => Promise.resolve(),
    });
    const start = Math.floor(Date.now() / 1000) * 1000 - 4 * 60_000;
    const offered: string[] = [];
    const deadline = Date.now() + 45_000;
    try {
      while (offered.length < 30 || link.buffer.size > 0 || a.stored.length === 0) {
        if (Date.now() > deadline) throw new Error(`not delivered in 45 s; logs:\n${logs.join("\n")}`);
        const o = {
          ...sample(offered.length),
          sampledAt: new Date(start + offered.length * 1000).toISOString(),
        };
        offered.push(o.sampledAt);
        await link.offer(o, []);
        await sleep(100);
      }
    } finally {
      await link.close();
      kill(a.server);
    }
    expect(a.busyAt).toHaveLength(2);
    // Each busy answer was waited out: the next batch came no sooner than its Retry-After (2 s),
    // not after the 1 s a first failure backs off.
    for (const t of a.busyAt) {
      const after = a.batchAt.find((b) => b > t);
      expect(after, "a batch after the busy answer").toBeDefined();
      expect(after! - t).toBeGreaterThanOrEqual(2_000);
    }
    expect(a.stored).toEqual(offered);
    expect(a.refused).toEqual([]);
    expect(logs.filter((l) => l.startsWith("console busy (")).length).toBe(2);
    expect(logs.some((l) => l.includes("unreachable"))).toBe(false);
  });
});
