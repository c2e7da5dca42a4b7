import type { DesiredState } from "@tide/contracts";
import { sample } from "@tide/diagnostics/fixtures";
import { afterEach, describe, expect, it, vi } from "vitest";
import { RETRY_AFTER_MAX_MS } from "./backoff";
import { ConsoleHttpError, ConsoleLink } from "./console-link";
import { testHello } from "./testing";

/**
 * Issue 26 item 6: a console answers 503 busy with Retry-After when its database times out, on any
 * route. The agent waits it out (bounded) before it sends that console anything again, whichever
 * route said busy and whichever route comes next.
 */

const DESIRED: DesiredState = {
  revision: 1,
  sampleIntervalMs: 1000,
  batchMaxObservations: 60,
  pmtuTargets: [],
  directorTables: [],
  healthChecks: [],
};

/** Every route the agent calls on a console (ConsoleLink, the health reporter, table downloads). */
const ROUTES = [
  ["POST", "/api/v1/agent/hello"],
  ["POST", "/api/v1/agent/observations"],
  ["GET", "/api/v1/agent/desired"],
  ["GET", "/api/v1/agent/desired?after=1&waitMs=20000"],
  ["POST", "/api/v1/agent/health"],
  ["GET", "/api/v1/pools/pool_1/tables/3/glbd"],
] as const;

/** A body each route accepts (the fake only answers; it does not check). */
const BODY: Record<string, unknown> = {
  "/api/v1/agent/hello": testHello("lb-fra-03"),
  "/api/v1/agent/observations": { observations: [sample(0)], dataPlane: [], replayed: false },
  "/api/v1/agent/health": { views: [] },
};

/**
 * A console in a function: `busy(path)` says whether to answer 503 (with the Retry-After it gives,
 * null for none) or as a console would. Records each request that reached it, with its time.
 */
function fakeConsole(busy: (path: string, host: string) => string | null | false) {
  const sent: { host: string; path: string; at: number }[] = [];
  const fetch = (async (url: URL | string, init?: RequestInit) => {
    const u = new URL(String(url));
    sent.push({ host: u.host, path: u.pathname + u.search, at: Date.now() });
    const retryAfter = busy(u.pathname + u.search, u.host);
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
      new Response(JSON.stringify(body), {
        status,
        headers: { "content-type": "application/json", ...headers },
      });
    if (retryAfter !== false) {
      return json(
        503,
        { message: "The database is busy (no database connection was free in time).", code: "busy" },
        retryAfter === null ? {} : { "retry-after": retryAfter },
      );
    }
    if (u.pathname === "/api/v1/agent/hello") return json(200, { hostId: "host_1", desired: DESIRED });
    if (u.pathname === "/api/v1/agent/desired") {
      if (u.searchParams.has("waitMs")) {
        await new Promise((_, reject) =>
          init?.signal?.addEventListener("abort", () => reject(new Error("aborted"))),
        );
      }
      return json(200, DESIRED);
    }
    if (u.pathname === "/api/v1/agent/observations") return json(200, { accepted: 1, desiredRevision: 1 });
    if (u.pathname === "/api/v1/agent/health") return json(200, { changed: [], ignored: [] });
    return new Response(new Uint8Array(8), { status: 200 });
  }) as typeof globalThis.fetch;
  return { fetch, sent };
}

function linkTo(fetch: typeof globalThis.fetch, logs: string[], consoleUrls = ["http://console.test"]) {
  return new ConsoleLink({
    consoleUrls,
    token: "tide_host_secret",
    bufferCapacity: 1000,
    hello: () => testHello("lb-fra-03"),
    log: (line) => logs.push(line),
    onDesired: () => Promise.resolve(),
    fetch,
  });
}

/** The call's rejection (a ConsoleHttpError), or null when it was answered. */
async function attempt(
  link: ConsoleLink,
  method: "GET" | "POST",
  path: string,
): Promise<ConsoleHttpError | null> {
  // A long poll the fake holds open is not awaited: only whether it was sent matters.
  const call = link.fetchRaw(method, path, BODY[new URL(path, "http://x").pathname], { timeoutMs: 100 });
  return call.then(
    () => null,
    (e: unknown) => {
      if (e instanceof ConsoleHttpError) return e;
      if (e instanceof Error && /abort|timeout/i.test(e.name + e.message)) return null;
      throw e;
    },
  );
}

let link: ConsoleLink | null = null;
afterEach(async () => {
  await link?.close();
  link = null;
  vi.useRealTimers();
});

describe("ConsoleLink: a console that answers 503 busy", () => {
  it.each(ROUTES)(
    "after %s %s says busy (Retry-After: 5), nothing is sent to it on any route for 5 s",
    async (method, path) => {
      vi.useFakeTimers({ toFake: ["Date"] });
      let busyPath: string | null = path;
      const c = fakeConsole((p) => (p === busyPath ? "5" : false));
      link = linkTo(c.fetch, []);
      const t0 = Date.now();
      const first = await attempt(link, method, path);
      expect(first?.status).toBe(503);
      expect(first?.retryAfterMs).toBe(5_000);
      expect(c.sent).toHaveLength(1);
      busyPath = null;

      vi.setSystemTime(t0 + 4_900);
      for (const [m, p] of ROUTES) {
        const held = await attempt(link, m, p);
        // Refused here, as busy, with what is left of the wait: each caller backs off on it.
        expect(held?.status, `${m} ${p}`).toBe(503);
        expect(held?.retryAfterMs, `${m} ${p}`).toBe(100);
        expect(held?.message, `${m} ${p}`).toMatch(/not sent, the console said it is busy/);
      }
      expect(c.sent).toHaveLength(1);

      vi.setSystemTime(t0 + 5_000);
      for (const [m, p] of ROUTES) expect(await attempt(link, m, p), `${m} ${p}`).toBeNull();
      expect(c.sent.map((s) => s.path)).toEqual([path, ...ROUTES.map(([, p]) => p)]);
    },
  );

  it("waits 1 s after a 503 without Retry-After, and at most RETRY_AFTER_MAX_MS for a long one", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    let retryAfter: string | null | false = null;
    const c = fakeConsole(() => retryAfter);
    link = linkTo(c.fetch, []);
    const t0 = Date.now();
    expect((await attempt(link, "POST", "/api/v1/agent/health"))?.status).toBe(503);
    retryAfter = false;
    vi.setSystemTime(t0 + 999);
    expect((await attempt(link, "POST", "/api/v1/agent/health"))?.status).toBe(503);
    vi.setSystemTime(t0 + 1_000);
    expect(await attempt(link, "POST", "/api/v1/agent/health")).toBeNull();
    expect(c.sent).toHaveLength(2);

    // A day's Retry-After (a wrong header, a proxy's own) holds the agent back a minute at most.
    retryAfter = "86400";
    const t1 = Date.now();
    expect((await attempt(link, "GET", "/api/v1/agent/desired"))?.retryAfterMs).toBe(86_400_000);
    retryAfter = false;
    vi.setSystemTime(t1 + RETRY_AFTER_MAX_MS - 1);
    expect((await attempt(link, "GET", "/api/v1/agent/desired"))?.status).toBe(503);
    vi.setSystemTime(t1 + RETRY_AFTER_MAX_MS);
    expect(await attempt(link, "GET", "/api/v1/agent/desired")).toBeNull();
    expect(c.sent).toHaveLength(4);
  });

  it("holds only the console that said busy: with several, the next one is asked at once", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const c = fakeConsole((_, host) => (host === "a.test" ? "30" : false));
    const logs: string[] = [];
    link = linkTo(c.fetch, logs, ["http://a.test", "http://b.test"]);
    await link.offer(sample(0), []);
    expect(logs.at(-1)).toMatch(/^console http:\/\/a\.test busy \(.*HTTP 503.*\); trying http:\/\/b\.test/);
    vi.setSystemTime(Date.now() + 2_000); // past the first backoff (1 s + 20 % jitter)
    await link.offer(sample(1), []);
    expect(link.buffer.size).toBe(0);
    // (The desired-state watch starts after the hello; its long poll is left out here.)
    const calls = c.sent.filter((s) => !s.path.includes("waitMs"));
    expect(calls.map((s) => `${s.host}${s.path}`)).toEqual([
      "a.test/api/v1/agent/hello",
      "b.test/api/v1/agent/hello",
      "b.test/api/v1/agent/observations",
    ]);
  });

  it("keeps the samples and waits the Retry-After before the next batch, bounded", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    let retryAfter: string | false = "86400";
    const c = fakeConsole((p) => (p === "/api/v1/agent/hello" ? retryAfter : false));
    const logs: string[] = [];
    link = linkTo(c.fetch, logs);
    const t0 = Date.now();
    await link.offer(sample(0), []);
    expect(logs.at(-1)).toMatch(/^console busy \(.*HTTP 503.*\); 1 samples buffered, retry in 60000 ms$/);
    retryAfter = false;
    vi.setSystemTime(t0 + RETRY_AFTER_MAX_MS - 1_000);
    await link.offer(sample(1), []);
    expect(c.sent).toHaveLength(1);
    vi.setSystemTime(t0 + RETRY_AFTER_MAX_MS + 100);
    await link.offer(sample(2), []);
    expect(link.buffer.size).toBe(0);
    expect(c.sent.filter((s) => !s.path.includes("waitMs")).map((s) => s.path)).toEqual([
      "/api/v1/agent/hello",
      "/api/v1/agent/hello",
      "/api/v1/agent/observations",
    ]);
  });

  it("the desired-state watch waits out a busy answer's Retry-After, not only its backoff", async () => {
    vi.useFakeTimers();
    let polls = 0;
    const c = fakeConsole((p) => {
      if (!p.includes("waitMs")) return false;
      polls++;
      return polls === 1 ? "5" : false;
    });
    link = linkTo(c.fetch, []);
    await link.offer(sample(0), []);
    const longPolls = () => c.sent.filter((s) => s.path.includes("waitMs")).map((s) => s.at);
    await vi.advanceTimersByTimeAsync(100);
    expect(longPolls()).toHaveLength(1);
    const first = longPolls()[0]!;
    // Without the Retry-After the watch would ask again after its backoff (1-1.2 s) and, held
    // back by the link until 5 s, next at its second or third backoff (3.3-3.6 s, 7.7-8.4 s).
    await vi.advanceTimersByTimeAsync(4_800);
    expect(longPolls()).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(longPolls()).toHaveLength(2);
    expect(longPolls()[1]! - first).toBeGreaterThanOrEqual(5_000);
    expect(longPolls()[1]! - first).toBeLessThan(6_000);
  });
});
