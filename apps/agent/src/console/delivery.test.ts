import type { AgentObservationsIn, AgentObservationsReply, DesiredState } from "@tide/contracts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { sample } from "@tide/diagnostics/fixtures";
import { BATCH_MAX_BYTES } from "./batch-size";
import { ConsoleLink } from "./console-link";
import { deliveryFailure, ThrottledLog } from "./delivery";
import { testHello } from "./testing";

const DESIRED: DesiredState = {
  revision: 1,
  sampleIntervalMs: 1000,
  batchMaxObservations: 60,
  pmtuTargets: [],
  directorTables: [],
  healthChecks: [],
};

/**
 * A console in a function: hello and desired answer as a console would (the long poll waits until
 * aborted); each observations POST goes to `observations`, which answers a status and a body.
 */
function fakeConsole(observations: (batch: AgentObservationsIn) => { status: number; body: unknown }) {
  const posts: string[][] = [];
  const fetch = (async (url: URL | string, init?: RequestInit) => {
    const path = new URL(String(url)).pathname;
    const json = (status: number, body: unknown) =>
      new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
    if (path === "/api/v1/agent/hello") return json(200, { hostId: "lb-fra-03", desired: DESIRED });
    if (path === "/api/v1/agent/desired") {
      if (new URL(String(url)).searchParams.has("waitMs")) {
        await new Promise((_, reject) =>
          init?.signal?.addEventListener("abort", () => reject(new Error("aborted"))),
        );
      }
      return json(200, DESIRED);
    }
    const batch = JSON.parse(String(init?.body)) as AgentObservationsIn;
    posts.push(batch.observations.map((o) => o.sampledAt));
    const r = observations(batch);
    return json(r.status, r.body);
  }) as typeof globalThis.fetch;
  return { fetch, posts };
}

function linkTo(
  fetch: typeof globalThis.fetch,
  logs: string[],
  o: { bufferCapacity?: number; spoolDir?: string; consoleUrls?: string[] } = {},
) {
  return new ConsoleLink({
    consoleUrl: "http://console.test",
    consoleUrls: o.consoleUrls,
    token: "tide_host_secret",
    bufferCapacity: o.bufferCapacity ?? 1000,
    spoolDir: o.spoolDir ?? null,
    hello: () => testHello("lb-fra-03"),
    log: (line) => logs.push(line),
    onDesired: () => Promise.resolve(),
    fetch,
  });
}

/** Queue samples t = 0 .. n - 1 and deliver (the last one through offer, as the agent does). */
async function offerAll(link: ConsoleLink, n: number) {
  for (let t = 0; t < n - 1; t++) link.buffer.push(sample(t));
  await link.offer(sample(n - 1), []);
}

const stored = (batch: AgentObservationsIn): AgentObservationsReply => ({
  accepted: batch.observations.length,
  desiredRevision: 1,
});

let link: ConsoleLink | null = null;
afterEach(async () => {
  await link?.close();
  link = null;
  vi.useRealTimers();
});

describe("deliveryFailure", () => {
  it.each([
    [null, "unreachable"],
    [500, "unreachable"],
    [502, "unreachable"],
    [503, "unreachable"],
    [404, "unreachable"],
    [408, "unreachable"],
    [429, "unreachable"],
    [401, "token"],
    [403, "token"],
    [400, "refused"],
    [413, "refused"],
    [415, "refused"],
    [422, "refused"],
  ] as const)("HTTP %s is %s", (status, failure) => {
    expect(deliveryFailure(status)).toBe(failure);
  });
});

describe("ConsoleLink: a refused batch never blocks the samples behind it", () => {
  it("drops only the sample the console refuses (400), counts and logs it, delivers the rest", async () => {
    const poison = sample(37).sampledAt;
    const delivered: string[] = [];
    const c = fakeConsole((batch) => {
      if (batch.observations.some((o) => o.sampledAt === poison))
        return { status: 400, body: { message: "Invalid input", code: "BAD_REQUEST" } };
      delivered.push(...batch.observations.map((o) => o.sampledAt));
      return { status: 200, body: stored(batch) };
    });
    const logs: string[] = [];
    link = linkTo(c.fetch, logs);
    await offerAll(link, 100);

    expect(link.buffer.size).toBe(0);
    expect(delivered).toEqual(
      Array.from({ length: 100 }, (_, t) => sample(t).sampledAt).filter((at) => at !== poison),
    );
    expect(link.samplesDropped).toEqual({
      buffer_full: 0,
      refused: 1,
      in_future: 0,
      too_old: 0,
      spool_damaged: 0,
    });
    expect(link.connected).toBe(true);
    expect(logs.some((l) => l.includes(`refused the sample of ${poison}`) && l.includes("HTTP 400"))).toBe(
      true,
    );
    expect(logs.join("\n")).not.toMatch(/unreachable|tide_host_secret/);
    // Halving finds one sample among 100 in a few requests, not one request per sample.
    expect(c.posts.length).toBeLessThan(20);
  });

  it("keeps every sample and backs off while the console answers 503, then delivers them", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    let up = false;
    const c = fakeConsole((batch) =>
      up ? { status: 200, body: stored(batch) } : { status: 503, body: { message: "busy" } },
    );
    const logs: string[] = [];
    link = linkTo(c.fetch, logs);
    await offerAll(link, 10);
    expect(link.buffer.size).toBe(10);
    expect(link.connected).toBe(false);
    expect(link.samplesDropped.refused).toBe(0);
    // Busy, not down: the console answered (its in-flight bound, a locked row).
    expect(logs.at(-1)).toMatch(/console busy .*HTTP 503.*; 10 samples buffered/);

    up = true;
    vi.setSystemTime(Date.now() + 2_000); // past the first backoff (1 s + 20 % jitter)
    await link.offer(sample(10), []);
    expect(link.buffer.size).toBe(0);
    expect(c.posts.at(-1)).toHaveLength(11);
  });

  it("keeps every sample on 401 and says the token is the problem", async () => {
    const c = fakeConsole(() => ({ status: 401, body: { message: "Unauthorized" } }));
    const logs: string[] = [];
    link = linkTo(c.fetch, logs);
    // The hello already fails with 401 in a real console; here only the batch does.
    await offerAll(link, 5);
    expect(link.buffer.size).toBe(5);
    expect(link.samplesDropped.refused).toBe(0);
    expect(logs.at(-1)).toMatch(/rejected the host token/);
  });

  it("logs and counts samples a 200 reply lists as refused (rate-limited), duplicates not as drops", async () => {
    const c = fakeConsole((batch) => ({
      status: 200,
      body: {
        accepted: 0,
        desiredRevision: 1,
        refused: batch.observations.map((o, i) => ({
          sampledAt: o.sampledAt,
          reason: i === 0 ? "duplicate" : "in_future",
          detail: "dated more than 5 min after the console's clock",
        })),
      },
    }));
    const logs: string[] = [];
    link = linkTo(c.fetch, logs);
    await offerAll(link, 50);
    expect(link.buffer.size).toBe(0);
    expect(link.samplesDropped).toEqual({
      buffer_full: 0,
      refused: 0,
      in_future: 49,
      too_old: 0,
      spool_damaged: 0,
    });
    expect(logs.filter((l) => l.includes("in_future"))).toHaveLength(1);
    expect(logs.filter((l) => l.includes("duplicate"))).toHaveLength(1);
  });
});

describe("ConsoleLink: replies of a newer console", () => {
  it("takes a batch reply with a field it does not know as delivered", async () => {
    const c = fakeConsole((batch) => ({ status: 200, body: { ...stored(batch), newerField: [1] } }));
    const logs: string[] = [];
    link = linkTo(c.fetch, logs);
    await offerAll(link, 3);
    expect(link.buffer.size).toBe(0);
    expect(c.posts).toHaveLength(1);
    expect(link.lastError).toBeNull();
  });
});

describe("ConsoleLink: the console's batch interval", () => {
  it("holds samples for the interval the reply asks, then sends them in one batch", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    let intervalMs: number | undefined = 5_000;
    const c = fakeConsole((batch) => ({
      status: 200,
      body: { ...stored(batch), batchIntervalMs: intervalMs },
    }));
    link = linkTo(c.fetch, []);
    const t0 = Date.now();
    await link.offer(sample(0), []); // the first delivery after hello goes at once
    expect(c.posts).toEqual([[sample(0).sampledAt]]);
    expect(link.batchInterval).toBe(5_000);
    for (let t = 1; t <= 4; t++) {
      vi.setSystemTime(t0 + t * 1_000);
      await link.offer(sample(t), []);
    }
    expect(c.posts).toHaveLength(1); // held: 4 s < 90 % of 5 s
    expect(link.buffer.size).toBe(4);
    vi.setSystemTime(t0 + 4_500); // a tick a little early still ends the interval
    await link.offer(sample(5), []);
    expect(c.posts).toHaveLength(2);
    expect(c.posts[1]).toEqual([1, 2, 3, 4, 5].map((t) => sample(t).sampledAt));
    expect(link.buffer.size).toBe(0);

    // A console that no longer asks (fewer agents, or an older console) gets each sample at once.
    intervalMs = undefined;
    vi.setSystemTime(t0 + 9_500);
    await link.offer(sample(6), []);
    expect(link.batchInterval).toBe(0);
    vi.setSystemTime(t0 + 9_600);
    await link.offer(sample(7), []);
    expect(c.posts.slice(2)).toEqual([[sample(6).sampledAt], [sample(7).sampledAt]]);
  });

  it("never holds a replay: after an outage the buffered samples go as soon as the console answers", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    let up = true;
    const c = fakeConsole((batch) =>
      up
        ? { status: 200, body: { ...stored(batch), batchIntervalMs: 5_000 } }
        : { status: 503, body: { message: "busy" } },
    );
    link = linkTo(c.fetch, []);
    const t0 = Date.now();
    await link.offer(sample(0), []);
    up = false;
    vi.setSystemTime(t0 + 5_000);
    await link.offer(sample(1), []); // fails: buffered, backs off
    expect(link.buffer.size).toBe(1);
    up = true;
    vi.setSystemTime(t0 + 7_000); // past the backoff, within 5 s of the failed send
    await link.offer(sample(2), []);
    expect(link.buffer.size).toBe(0);
    expect(c.posts.at(-1)).toEqual([sample(1).sampledAt, sample(2).sampledAt]);
  });
});

describe("ConsoleLink: several consoles (consoleUrls)", () => {
  /** Two fake consoles, a.test and b.test; `a` and `b` answer their observations POSTs. */
  function twoConsoles(
    a: (batch: AgentObservationsIn) => { status: number; body: unknown },
    b: (batch: AgentObservationsIn) => { status: number; body: unknown },
  ) {
    const ca = fakeConsole(a);
    const cb = fakeConsole(b);
    const fetch = ((url: URL | string, init?: RequestInit) =>
      new URL(String(url)).host === "a.test"
        ? ca.fetch(url, init)
        : cb.fetch(url, init)) as typeof globalThis.fetch;
    return { fetch, a: ca.posts, b: cb.posts };
  }
  const urls = ["http://a.test", "http://b.test"];

  it("moves to the next console when one is unreachable, says so, and stays there", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    let aUp = false;
    const c = twoConsoles(
      (batch) => (aUp ? { status: 200, body: stored(batch) } : { status: 502, body: { message: "down" } }),
      (batch) => ({ status: 200, body: stored(batch) }),
    );
    const logs: string[] = [];
    link = linkTo(c.fetch, logs, { consoleUrls: urls });
    expect(link.consoleUrl).toBe("http://a.test");
    await offerAll(link, 3);
    expect(link.buffer.size).toBe(3);
    expect(link.consoleUrl).toBe("http://b.test");
    expect(logs.at(-1)).toMatch(
      /^console http:\/\/a\.test unreachable \(POST \/api\/v1\/agent\/observations: HTTP 502 .*\); trying http:\/\/b\.test; 3 samples buffered, retry in \d+ ms$/,
    );
    await link.offer(sample(3), []); // within the backoff: nothing sent
    expect(c.b).toEqual([]);
    vi.setSystemTime(Date.now() + 2_000); // past the first backoff (1 s + 20 % jitter)
    await link.offer(sample(4), []);
    expect(link.buffer.size).toBe(0);
    expect(logs).toContain("console reachable again at http://b.test");
    aUp = true; // sticky: A answering again does not take the agent back
    await link.offer(sample(5), []);
    expect(c.b.flat()).toEqual([0, 1, 2, 3, 4, 5].map((t) => sample(t).sampledAt));
    expect(c.a.flat()).toEqual([0, 1, 2].map((t) => sample(t).sampledAt)); // refused with 502, not stored
    expect(link.consoleUrl).toBe("http://b.test");
  });

  it("stays on a console that refuses the host token (401): no outage, every console would say the same", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const c = twoConsoles(
      () => ({ status: 401, body: { message: "invalid host token" } }),
      (batch) => ({ status: 200, body: stored(batch) }),
    );
    const logs: string[] = [];
    link = linkTo(c.fetch, logs, { consoleUrls: urls });
    await offerAll(link, 2);
    vi.setSystemTime(Date.now() + 2_000);
    await link.offer(sample(2), []);
    expect(link.consoleUrl).toBe("http://a.test");
    expect(c.b).toEqual([]);
    expect(link.buffer.size).toBe(3);
    expect(logs.at(-1)).toMatch(/^console http:\/\/a\.test rejected the host token/);
  });

  it("stays on a console that refuses a sample (400): the sample is dropped, the rest go on there", async () => {
    const poison = sample(1).sampledAt;
    const c = twoConsoles(
      (batch) =>
        batch.observations.some((o) => o.sampledAt === poison)
          ? { status: 400, body: { message: "Invalid input" } }
          : { status: 200, body: stored(batch) },
      (batch) => ({ status: 200, body: stored(batch) }),
    );
    const logs: string[] = [];
    link = linkTo(c.fetch, logs, { consoleUrls: urls });
    await offerAll(link, 4);
    expect(link.buffer.size).toBe(0);
    expect(link.consoleUrl).toBe("http://a.test");
    expect(c.b).toEqual([]);
    expect(link.samplesDropped.refused).toBe(1);
  });
});

describe("ThrottledLog", () => {
  it("says a kind of line once per interval, then how many it held back", () => {
    let now = 0;
    const lines: string[] = [];
    const log = new ThrottledLog(
      (l) => lines.push(l),
      60_000,
      () => now,
    );
    log.say("a", "first");
    log.say("a", "second");
    log.say("b", "other kind");
    now = 30_000;
    log.say("a", "third");
    now = 60_001;
    log.say("a", "fourth");
    expect(lines).toEqual(["first", "other kind", "fourth (and 2 more like it since the last such line)"]);
  });
});

describe("ConsoleLink: batches bounded in bytes", () => {
  it("splits a replay of large samples into bodies under BATCH_MAX_BYTES, oldest first, losing none", async () => {
    // About 1 MiB per sample (a host with very many namespaces): 12 samples are 3+ bodies, not one.
    const big = (t: number) => ({ ...sample(t), padding: "x".repeat(1024 * 1024) });
    const bodies: number[] = [];
    const c = fakeConsole((b) => {
      bodies.push(Buffer.byteLength(JSON.stringify(b)));
      return { status: 200, body: stored(b) };
    });
    link = linkTo(c.fetch, []);
    for (let t = 0; t < 11; t++) link.buffer.push(big(t) as unknown as ReturnType<typeof sample>);
    await link.offer(big(11) as unknown as ReturnType<typeof sample>, []);
    expect(c.posts.flat()).toEqual(Array.from({ length: 12 }, (_, t) => sample(t).sampledAt));
    expect(c.posts.length).toBeGreaterThanOrEqual(3);
    for (const size of bodies) expect(size).toBeLessThanOrEqual(BATCH_MAX_BYTES + 64 * 1024);
  });
});

describe("ConsoleLink: the buffer on disk", () => {
  it("replays after a restart, counts what the bound dropped and tells the console", async () => {
    const spoolDir = mkdtempSync(path.join(tmpdir(), "tide-link-spool-"));
    try {
      // The console is down (503): 5 samples into a buffer of 3 drop the 2 oldest.
      const down = fakeConsole(() => ({ status: 503, body: { message: "down" } }));
      const first = linkTo(down.fetch, [], { bufferCapacity: 3, spoolDir });
      await first.open();
      for (let t = 0; t < 5; t++) await first.offer(sample(t), []);
      expect(first.samplesDropped.buffer_full).toBe(2);
      await first.close();

      const sent: AgentObservationsIn[] = [];
      const up = fakeConsole((b) => {
        sent.push(b);
        return { status: 200, body: stored(b) };
      });
      const logs: string[] = [];
      link = linkTo(up.fetch, logs, { bufferCapacity: 3, spoolDir });
      await link.open();
      expect(link.buffer.size).toBe(3);
      expect(link.samplesDropped.buffer_full).toBe(2);
      expect(logs).toContain(`spool ${spoolDir}: 3 undelivered samples from an earlier run to replay`);
      await link.offer(sample(5), []);
      // The newest sample pushed the oldest spooled one out (a buffer of 3): 3 to 5 go, replayed.
      expect(up.posts).toEqual([[3, 4, 5].map((t) => sample(t).sampledAt)]);
      expect(sent[0]!.replayed).toBe(true);
      expect(sent[0]!.dropped).toEqual({
        buffer_full: 3,
        refused: 0,
        in_future: 0,
        too_old: 0,
        spool_damaged: 0,
      });
    } finally {
      await link?.close();
      link = null;
      rmSync(spoolDir, { recursive: true, force: true });
    }
  });
});
