import { newId, type Observation } from "@tide/contracts";
import { createDb, storeBatch, type Db, type Prisma } from "@tide/db";
import { waitFor } from "@tide/devstack/wait";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { truncateAll } from "../../testing/fixtures";
import { evaluateHost, evaluateHosts, windowCacheFor } from "./host-evaluation";
import { findingEvaluatorFor, FindingEvaluator } from "./evaluation-scheduler";

let db: Db;

beforeAll(() => {
  db = createDb(inject("databaseUrl"), { max: 8 });
});
afterAll(async () => {
  await db.$disconnect();
});
beforeEach(async () => {
  await truncateAll(db);
});
afterEach(async () => {
  await findingEvaluatorFor(db).flush();
});

const T0 = Date.parse("2026-11-22T23:00:00.000Z");
const at = (t: number) => new Date(T0 + t * 1000).toISOString();

/** Sample at T0 + t s of `hostname`, its web namespace overflowing 10/s (critical). */
function sample(hostname: string, t: number): Observation {
  const ns = (inode: number, name: string | null, overflows: number) => ({
    netns: { inode, name, root: name === null },
    pids: [1],
    counters: { TcpPassiveOpens: 92_117_004, TcpExtListenDrops: 1_051, TcpExtListenOverflows: overflows },
    sockstat: { tcpInuse: 812, tcpOrphan: 0, tcpTw: 2_310, tcpAlloc: 950, tcpMemPages: 412 },
    sysctls: {
      somaxconn: 4096,
      tcpMaxSynBacklog: 4096,
      tcpSyncookies: 1 as const,
      tcpRmem: [4096, 131072, 6291456] as [number, number, number],
      ipLocalPortRange: [32768, 60999] as [number, number],
      tcpMtuProbing: 0 as const,
    },
    listeners: [{ address: "0.0.0.0", port: 8080, recvQ: 0, sendQ: 4096, requestedBacklog: null }],
    listenPorts: [{ port: 8080, sockets: 1 }],
  });
  return {
    schemaVersion: 1,
    hostId: hostname,
    agentVersion: "0.1.0",
    kernelRelease: "6.12.48-tide",
    sampledAt: at(t),
    namespaces: [ns(4026531840, null, 1_043), ns(4026532511, "web", 5_000 + 10 * t)],
    cpus: [],
    probes: [],
    probeResults: {
      listenCapped: [],
      listenOverflow: [],
      connectLatency: [],
      netRxSoftirq: [],
      icmpFragNeeded: [],
    },
    paths: [],
  };
}

async function makeHost(name: string): Promise<string> {
  const id = newId("host");
  await db.host.create({ data: { id, name, roles: ["proxy"] } });
  return id;
}

/** Store samples t = from .. to-1 the way ingest does (no evaluation scheduled). */
async function store(hostId: string, name: string, from: number, to: number) {
  const samples = [];
  for (let t = from; t < to; t++) {
    samples.push({
      id: newId("observation"),
      sampledAt: new Date(at(t)),
      payload: sample(name, t) as unknown as Prisma.InputJsonValue,
    });
  }
  return storeBatch(db, hostId, samples, 60 * 60_000, {
    dataPlane: [],
    agentVersion: "0.1.0",
    kernelRelease: "6.12.48-tide",
  });
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** How long and how often the tests below look again. */
const POLL = { timeoutMs: 15_000, intervalMs: 50 };

describe("finding evaluator", () => {
  it("coalesces batches that arrive during a host's evaluation into one more, never concurrent per host", async () => {
    const a = await makeHost("lb-a");
    const others = await Promise.all(["lb-b", "lb-c", "lb-d"].map(makeHost));
    const names = new Map([[a, "lb-a"], ...others.map((id, i) => [id, `lb-${"bcd"[i]}`] as const)]);
    await store(a, "lb-a", 0, 60);
    for (const id of others) await store(id, names.get(id)!, 0, 60);

    const calls: string[] = [];
    const active = new Map<string, number>();
    let running = 0;
    let maxRunning = 0;
    let maxPerHost = 0;
    const gate = deferred();
    const firstStarted = deferred();
    const evaluator = new FindingEvaluator(db, {
      concurrency: 2,
      intervalMs: 0,
      evaluate: async (d, hostId) => {
        calls.push(hostId);
        running++;
        active.set(hostId, (active.get(hostId) ?? 0) + 1);
        maxRunning = Math.max(maxRunning, running);
        maxPerHost = Math.max(maxPerHost, active.get(hostId)!);
        try {
          if (hostId === a && calls.filter((h) => h === a).length === 1) {
            firstStarted.resolve();
            await gate.promise; // hold the first evaluation of A while more batches come
          }
          return await evaluateHost(d, hostId);
        } finally {
          running--;
          active.set(hostId, active.get(hostId)! - 1);
        }
      },
    });

    evaluator.schedule(a);
    await firstStarted.promise;
    for (let b = 0; b < 5; b++) {
      await store(a, "lb-a", 60 + b, 61 + b);
      evaluator.schedule(a);
      for (const id of others) evaluator.schedule(id);
    }
    gate.resolve();
    await evaluator.idle();

    console.info(
      `evaluator: ${calls.length} evaluations for ${calls.filter((h) => h === a).length} of host A (5 batches during its first), max ${maxRunning} at once`,
    );
    expect(calls.filter((h) => h === a)).toHaveLength(2);
    for (const id of others) expect(calls.filter((h) => h === id).length).toBeGreaterThanOrEqual(1);
    expect(maxPerHost).toBe(1);
    expect(maxRunning).toBeLessThanOrEqual(2);
    expect(evaluator.stats).toMatchObject({ evaluations: calls.length, failures: 0 });
    // The second evaluation of A saw the newest batch.
    const found = await db.finding.findMany({ where: { hostId: a } });
    expect(found.map((f) => [f.kind, f.severity, f.status, f.lastSeenAt.toISOString()])).toEqual([
      ["accept_queue_overflow", "critical", "open", at(64)],
    ]);
  });

  it("retries a failed evaluation on the host's next batch, and after a backoff without one", async () => {
    const a = await makeHost("lb-a");
    await store(a, "lb-a", 0, 60);
    let fail = 0;
    const errors: string[] = [];
    const evaluator = new FindingEvaluator(db, {
      intervalMs: 0,
      evaluate: async (d, hostId) => {
        if (fail > 0) {
          fail--;
          throw new Error("injected failure");
        }
        return evaluateHost(d, hostId);
      },
      log: (m) => errors.push(m),
    });
    try {
      fail = 1;
      evaluator.schedule(a);
      await evaluator.idle();
      expect(evaluator.failing()).toEqual([a]);
      expect(errors).toHaveLength(1);
      expect(await db.finding.count()).toBe(0);

      // The next batch retries it.
      await store(a, "lb-a", 60, 61);
      evaluator.schedule(a);
      await evaluator.idle();
      expect(evaluator.failing()).toEqual([]);
      expect(await db.finding.count({ where: { hostId: a, status: "open" } })).toBe(1);

      // No further batch: the backoff timer retries by itself.
      await db.finding.deleteMany();
      fail = 1;
      await store(a, "lb-a", 61, 62);
      evaluator.schedule(a);
      await evaluator.idle();
      expect(evaluator.failing()).toEqual([a]);
      await waitFor("the timed retry", async () => (await db.finding.count()) === 1, POLL);
      await evaluator.idle();
      expect(evaluator.failing()).toEqual([]);
      expect(evaluator.stats.failures).toBe(2);
    } finally {
      evaluator.stop();
    }
  });

  it("evaluates a host at most once per interval, however many batches come", async () => {
    const a = await makeHost("lb-a");
    await store(a, "lb-a", 0, 60);
    const calls: number[] = [];
    const evaluator = new FindingEvaluator(db, {
      intervalMs: 60_000,
      evaluate: (d, hostId) => {
        calls.push(Date.now());
        return evaluateHost(d, hostId);
      },
    });
    evaluator.schedule(a);
    await evaluator.idle();
    expect(calls).toHaveLength(1);
    for (let b = 0; b < 5; b++) {
      await store(a, "lb-a", 60 + b, 61 + b);
      evaluator.schedule(a);
    }
    let idle = false;
    const waiting = evaluator.idle().then(() => (idle = true));
    await new Promise((r) => setTimeout(r, 200));
    expect(calls).toHaveLength(1); // the five batches wait for the interval
    expect(idle).toBe(false);
    await evaluator.flush();
    await waiting;
    expect(calls).toHaveLength(2);
    const found = await db.finding.findFirstOrThrow({ where: { hostId: a } });
    expect(found.lastSeenAt.toISOString()).toBe(at(64));
  });

  it("evaluates a batch of hosts together, and one host's failed write fails only that host", async () => {
    const [a, b, c, d] = await Promise.all(["lb-a", "lb-b", "lb-c", "lb-d"].map(makeHost));
    await store(a!, "lb-a", 0, 61);
    await store(d!, "lb-d", 0, 61);
    // B is healthy: its overflow counter stays flat.
    await storeBatch(
      db,
      b!,
      Array.from({ length: 61 }, (_, t) => {
        const o = sample("lb-b", t);
        o.namespaces[1]!.counters.TcpExtListenOverflows = 5_000;
        return {
          id: newId("observation"),
          sampledAt: new Date(at(t)),
          payload: o as unknown as Prisma.InputJsonValue,
        };
      }),
      60 * 60_000,
      { dataPlane: [], agentVersion: "0.1.0", kernelRelease: "6.12.48-tide" },
    );
    // C has no samples. D's finding cannot be written: a health finding of B already has its id.
    expect(await evaluateHost(db, d!)).toMatchObject({ opened: 1 });
    const dFinding = await db.finding.findFirstOrThrow({ where: { hostId: d } });
    await db.findingEvent.deleteMany();
    await db.finding.deleteMany();
    await db.finding.create({
      data: {
        ...dFinding,
        hostId: b!,
        fingerprint: "health-finding-in-the-way",
        kind: "proxy_unhealthy",
        subject: dFinding.subject as Prisma.InputJsonValue,
        evidence: dFinding.evidence as Prisma.InputJsonValue,
        remedy: dFinding.remedy as Prisma.InputJsonValue,
      },
    });

    const results = await evaluateHosts(db, [a!, b!, c!, d!]);
    expect(results.get(a!)).toEqual({ opened: 1, resolved: 0, written: 1 });
    expect(results.get(b!)).toEqual({ opened: 0, resolved: 0, written: 0 });
    expect(results.get(c!)).toEqual({ opened: 0, resolved: 0, written: 0 });
    expect(results.get(d!)).toBeInstanceOf(Error);
    const open = await db.finding.findMany({ where: { kind: "accept_queue_overflow" } });
    expect(open.map((f) => [f.hostId, f.status, f.lastSeenAt.toISOString()])).toEqual([[a, "open", at(60)]]);
    expect(await db.findingEvent.count({ where: { type: "opened" } })).toBe(1);

    // Once the way is clear, the same batch writes D's finding and leaves A's as it is.
    await db.finding.deleteMany({ where: { kind: "proxy_unhealthy" } });
    const again = await evaluateHosts(db, [a!, b!, c!, d!]);
    expect([...again.values()]).toEqual([
      { opened: 0, resolved: 0, written: 0 },
      { opened: 0, resolved: 0, written: 0 },
      { opened: 0, resolved: 0, written: 0 },
      { opened: 1, resolved: 0, written: 1 },
    ]);
  });

  it("writes nothing when a re-evaluation finds the same findings", async () => {
    const a = await makeHost("lb-a");
    await store(a, "lb-a", 0, 60);
    expect(await evaluateHost(db, a)).toEqual({ opened: 1, resolved: 0, written: 1 });
    const before = await db.finding.findFirstOrThrow({ where: { hostId: a } });
    expect(await evaluateHost(db, a)).toEqual({ opened: 0, resolved: 0, written: 0 });
    expect(await db.findingEvent.count()).toBe(1);
    await store(a, "lb-a", 60, 61);
    expect(await evaluateHost(db, a)).toEqual({ opened: 0, resolved: 0, written: 1 });
    const after = await db.finding.findFirstOrThrow({ where: { hostId: a } });
    expect(after.lastSeenAt.getTime() - before.lastSeenAt.getTime()).toBe(1000);
    expect(await db.findingEvent.count()).toBe(1);
  });

  it("uses this process's cached window only while the database holds exactly it", async () => {
    const a = await makeHost("lb-a");
    await store(a, "lb-a", 0, 61);
    expect(await evaluateHost(db, a)).toMatchObject({ opened: 1 }); // read, and cached
    // The cache says the counter went flat over the same instants: a hit shows it (the finding
    // resolves), where a read of the database would keep it open.
    const flat = Array.from({ length: 61 }, (_, t) => {
      const o = sample("lb-a", t);
      o.namespaces[1]!.counters.TcpExtListenOverflows = 5_000;
      return { sampledAt: new Date(at(t)), payload: o };
    });
    windowCacheFor(db).fill(a, flat);
    expect(await evaluateHost(db, a)).toMatchObject({ resolved: 1 });
    // A sample this process did not ingest (another console stored it): the shapes differ, the
    // window is read, and the overflow the database holds reopens the finding.
    await store(a, "lb-a", 61, 62);
    expect(await evaluateHost(db, a)).toMatchObject({ opened: 1 });
    const f = await db.finding.findFirstOrThrow({ where: { hostId: a } });
    expect([f.status, f.lastSeenAt.toISOString()]).toEqual(["open", at(61)]);
  });

  it("evaluates the newer window when a sample arrives while it waits for the host's lock", async () => {
    const a = await makeHost("lb-a");
    await store(a, "lb-a", 0, 61);
    expect(await evaluateHost(db, a)).toMatchObject({ opened: 1 });
    await store(a, "lb-a", 61, 62); // the finding's lastSeenAt is now behind: a write is due
    let evaluation: Promise<unknown> | null = null;
    await db.$transaction(async (tx) => {
      // Another process evaluating the host holds its lock; ours reads t = 0..61 and waits.
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`findings:${a}`}))`;
      evaluation = evaluateHost(db, a);
      await waitFor(
        "the evaluation to wait for the lock",
        async () =>
          (
            await db.$queryRaw<{ n: number }[]>`
              SELECT count(*)::int AS n FROM pg_stat_activity
               WHERE datname = current_database() AND wait_event_type = 'Lock'`
          )[0]!.n > 0,
        POLL,
      );
      await store(a, "lb-a", 62, 63); // a newer batch, stored meanwhile
    });
    // Not the window it read (t = 0..61) but the one the database holds under the lock (t = 62).
    expect(await evaluation).toEqual({ opened: 0, resolved: 0, written: 1 });
    const f = await db.finding.findFirstOrThrow({ where: { hostId: a } });
    expect(f.lastSeenAt.toISOString()).toBe(at(62));
  });
});
