import { newId, type Observation } from "@tide/contracts";
import {
  COMPACTOR_LOCK_KEY,
  countSamples,
  createDb,
  encodeChunk,
  evaluationWindow,
  latestSample,
  observationHistory,
  rollupMinute,
  rollupsBetween,
  samplesBetween,
  storeBatch,
  type Db,
  type JsonValue,
  type Prisma,
} from "@tide/db";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { truncateAll } from "../../testing/fixtures";
import { TelemetryCompactor } from "./telemetry-compactor";

let db: Db;

beforeAll(() => {
  db = createDb(inject("databaseUrl"), { max: 6 });
});
afterAll(async () => {
  await db.$disconnect();
});
beforeEach(async () => {
  await truncateAll(db);
});

/** A minute boundary; samples are at T0 + t s (+ a few ms of jitter, as agents send them). */
const T0 = Date.parse("2026-11-22T23:00:00.000Z");
const at = (t: number) => new Date(T0 + t * 1000 + (t % 4));
const RETENTION_MIN = 60;
const RETENTION_MS = RETENTION_MIN * 60_000;

/** Sample at T0 + t s: counters rising (one reset at t = 100), a histogram, gauges. */
function sample(t: number): Observation {
  const drops = t < 100 ? 5_000 + 10 * t : 3 * (t - 100);
  return {
    schemaVersion: 1,
    hostId: "lb-a",
    agentVersion: "0.1.0",
    kernelRelease: "6.12.48-tide",
    sampledAt: at(t).toISOString(),
    namespaces: [
      {
        netns: { inode: 4026531840, name: null, root: true },
        pids: [1],
        counters: {
          TcpPassiveOpens: 92_117_004 + 400 * t + (t % 7),
          TcpExtListenDrops: drops,
          IpFragFails: 0,
        },
        sockstat: { tcpInuse: 800 + (t % 13), tcpOrphan: 0, tcpTw: 2_310, tcpAlloc: 950, tcpMemPages: 412 },
        sysctls: {
          somaxconn: 4096,
          tcpMaxSynBacklog: 4096,
          tcpSyncookies: 1,
          tcpRmem: [4096, 131072, 6291456],
          ipLocalPortRange: [32768, 60999],
          tcpMtuProbing: 0,
        },
        listeners: [{ address: "0.0.0.0", port: 8080, recvQ: t % 3, sendQ: 4096, requestedBacklog: null }],
        listenPorts: [{ port: 8080, sockets: 1 }],
      },
    ],
    cpus: [
      {
        cpu: 0,
        softnetProcessed: 9_000_000 + 2_000 * t,
        softnetDropped: 0,
        softnetTimeSqueeze: t,
        netRxSoftirqs: 7,
      },
    ],
    probes: [],
    probeResults: {
      listenCapped: [],
      listenOverflow: [],
      connectLatency: [],
      netRxSoftirq: [
        { cpu: 0, durationUs: [0, 2 * t, 5 * t, t % 2 === 0 ? t : t - 1], intervalMaxUs: 180.5 },
      ],
      icmpFragNeeded: [],
    },
    paths: [],
  };
}

async function makeHost(name = "lb-a"): Promise<string> {
  const id = newId("host");
  await db.host.create({ data: { id, name, roles: ["proxy"] } });
  return id;
}

/** Store samples `ts` in one batch as ingest does (console clock `now`). */
function store(hostId: string, ts: readonly number[], now: Date) {
  return storeBatchWith(db, hostId, ts, now);
}

function storeBatchWith(client: Db, hostId: string, ts: readonly number[], now: Date) {
  const rows = ts.map((t) => ({
    id: newId("observation"),
    sampledAt: at(t),
    payload: sample(t) as unknown as Prisma.InputJsonValue,
  }));
  return storeBatch(
    client,
    hostId,
    rows,
    RETENTION_MS,
    { dataPlane: [], agentVersion: "0.1.0", kernelRelease: null },
    { now, maxFutureMs: 60_000 },
  );
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
const rawCount = (hostId: string) => db.observationSample.count({ where: { hostId } });
const chunkCount = (hostId: string) => db.observationChunk.count({ where: { hostId } });

/** Resolves once some backend of this database waits for a lock (polls pg_stat_activity). */
async function waitForLockWait(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const [w] = await db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock'`;
    if ((w?.n ?? 0) > 0) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("no backend started waiting for a lock within 5 s");
}

/** A compactor that keeps 180 s raw (the arithmetic below counts on it, not on the default). */
function compactor(options: Partial<ConstructorParameters<typeof TelemetryCompactor>[1]> = {}) {
  return new TelemetryCompactor(db, {
    retentionMinutes: RETENTION_MIN,
    hotWindowS: 180,
    log: () => {},
    ...options,
  });
}

describe("telemetry compactor", () => {
  it("moves complete minutes older than the hot window; readers return the same samples", async () => {
    const host = await makeHost();
    // Five minutes of samples, one missing (t = 30), and the console's clock 20 s after the last.
    const ts = range(0, 300).filter((t) => t !== 30);
    const now = new Date(T0 + 320_000);
    expect((await store(host, ts, now)).accepted).toBe(299);

    const readAll = async () => ({
      all: await samplesBetween(db, host, new Date(T0 - 60_000)),
      part: await samplesBetween(db, host, at(45), at(130)),
      latest: await latestSample(db, host),
      count: await countSamples(db, host),
      window: await evaluationWindow(db, host, 120),
    });
    const before = await readAll();
    expect(before.all).toHaveLength(299);
    expect(before.part.map((s) => s.sampledAt)).toEqual(range(45, 131).map(at));

    // Hot window 180 s before 23:05:20 is 23:02:20: minutes 0 and 1 (23:00, 23:01) are complete before it.
    const run = await compactor().runOnce(now);
    expect(run).toMatchObject({ skipped: false, minutes: 2, rows: 119 });
    expect(await rawCount(host)).toBe(180);
    expect(await chunkCount(host)).toBe(2);
    expect(await readAll()).toEqual(before);

    // Everything compacted (the host went quiet): the readers still agree, evaluation included.
    const later = new Date(T0 + 600_000);
    expect((await compactor().runOnce(later)).minutes).toBe(3);
    expect(await rawCount(host)).toBe(0);
    expect(await readAll()).toEqual(before);
    // A second run finds nothing to do.
    expect((await compactor().runOnce(later)).minutes).toBe(0);
  });

  it("moves the minutes of several hosts in one transaction, each into its own chunk", async () => {
    const hosts = [await makeHost("lb-a"), await makeHost("lb-b"), await makeHost("lb-c")];
    const now = new Date(T0 + 400_000);
    // Different minutes per host: lb-a 0..1, lb-b 1..2, lb-c 0..2 with a gap.
    await store(hosts[0]!, range(0, 120), now);
    await store(hosts[1]!, range(60, 180), now);
    await store(
      hosts[2]!,
      range(0, 180).filter((t) => t % 10 !== 0),
      now,
    );
    const before = await Promise.all(hosts.map((h) => samplesBetween(db, h, new Date(T0))));
    const run = await compactor().runOnce(now);
    expect(run).toMatchObject({ minutes: 7, rows: 120 + 120 + 162 });
    expect(await db.observationSample.count()).toBe(0);
    expect(await Promise.all(hosts.map(chunkCount))).toEqual([2, 2, 3]);
    expect(await Promise.all(hosts.map((h) => samplesBetween(db, h, new Date(T0))))).toEqual(before);
  });

  it("rolls minutes up exactly as computed from the raw samples", async () => {
    const host = await makeHost();
    const now = new Date(T0 + 600_000);
    await store(host, range(0, 300), now);
    const raw = await samplesBetween(db, host, new Date(T0));
    await compactor().runOnce(now);

    const rollups = await rollupsBetween(db, host, new Date(T0), new Date(T0 + 299_000));
    expect(rollups.map((r) => r.minute.getTime())).toEqual([0, 1, 2, 3, 4].map((m) => T0 + m * 60_000));
    for (const r of rollups) {
      const minute = raw.filter(
        (s) => s.sampledAt.getTime() - r.minute.getTime() < 60_000 && s.sampledAt >= r.minute,
      );
      expect(r.samples).toBe(60);
      expect(r.rollup).toEqual(rollupMinute(minute.map((s) => ({ ...s, payload: s.payload as JsonValue }))));
    }
    // Counts checked against the samples themselves: in minute 1 (t = 60..119, reset at t = 100) the
    // drops rose 10/s up to t = 99 (39 pairs), then +0 at the reset (3 * 0), then 3/s (19 pairs).
    const m1 = rollups[1]!.rollup;
    expect(m1.rates["ns/4026531840/TcpExtListenDrops"]?.[4]).toBe(39 * 10 + 0 + 19 * 3);
    // TcpPassiveOpens: last minus first of the minute, exactly.
    const opens = (t: number) => sample(t).namespaces[0]!.counters.TcpPassiveOpens!;
    expect(m1.rates["ns/4026531840/TcpPassiveOpens"]?.[4]).toBe(opens(119) - opens(60));
    // Histogram counts: last minus first of the minute, bucket by bucket.
    const hist = (t: number) => sample(t).probeResults.netRxSoftirq[0]!.durationUs;
    expect(m1.histograms["netRx/0/durationUs"]).toEqual(hist(119).map((b, i) => b - hist(60)[i]!));
    expect(m1.gauges["ns/4026531840/sockstat/tcpInuse"]).toEqual([
      800,
      812,
      expect.any(Number),
      800 + (119 % 13),
    ]);
  });

  it("merges a replay into a compacted minute once: duplicates skipped, the gap filled", async () => {
    const host = await makeHost();
    const now = new Date(T0 + 400_000);
    await store(
      host,
      range(0, 120).filter((t) => t !== 30 && t !== 31),
      now,
    );
    await compactor().runOnce(now);
    expect(await rawCount(host)).toBe(0);

    // The agent replays its buffer: t = 20..39, of which 30 and 31 were never stored.
    const replay = await store(host, range(20, 40), now);
    expect(replay.accepted).toBe(2);
    expect(await rawCount(host)).toBe(2);
    // Again (a retry after a lost reply): nothing new.
    expect((await store(host, range(20, 40), now)).accepted).toBe(0);

    const run = await compactor().runOnce(now);
    expect(run).toMatchObject({ minutes: 1, rows: 2 });
    expect(await rawCount(host)).toBe(0);
    expect(await chunkCount(host)).toBe(2);
    const all = await samplesBetween(db, host, new Date(T0));
    expect(all.map((s) => s.sampledAt)).toEqual(range(0, 120).map(at));
    expect(all.map((s) => s.payload)).toEqual(range(0, 120).map((t) => sample(t)));
    expect(await countSamples(db, host)).toBe(120);
    const [m0] = await rollupsBetween(db, host, new Date(T0), new Date(T0));
    expect(m0?.samples).toBe(60);
    // And the replay after the merge is still a duplicate.
    expect((await store(host, [30, 31], now)).accepted).toBe(0);
  });

  it("calls a replay a duplicate when it lands while its minute is being compacted", async () => {
    const host = await makeHost();
    const now = new Date(T0 + 400_000);
    await store(host, range(0, 60), now);
    const minute = new Date(T0);
    const samples = range(0, 60).map((t) => ({
      sampledAt: at(t),
      payload: sample(t) as unknown as JsonValue,
    }));
    let replay: ReturnType<typeof store> | null = null;
    await db.$transaction(async (tx) => {
      // What compactMinutes does for minute 0, paused between its writes and its commit.
      await tx.$executeRaw`
        INSERT INTO observation_chunks (host_id, minute, offsets_ms, last_at, data)
        VALUES (${host}, ${minute.toISOString()}::timestamptz,
                ${samples.map((x) => x.sampledAt.getTime() - T0)}::int[],
                ${at(59).toISOString()}::timestamptz, ${encodeChunk(minute, samples)})`;
      await tx.$executeRaw`DELETE FROM observation_samples WHERE host_id = ${host}`;
      // The agent's retry of the same batch arrives now: its INSERT waits on the deleted rows'
      // unique keys, with a snapshot from before the chunk.
      replay = store(host, range(0, 60), now);
      await waitForLockWait();
    });
    const r = await replay!;
    expect(r.accepted).toBe(0);
    expect(await rawCount(host)).toBe(0);
    expect(await countSamples(db, host)).toBe(60);
  });

  it("keeps each tier for its retention and no longer", async () => {
    const host = await makeHost();
    // Ten minutes of samples; the host then goes quiet.
    await store(host, range(0, 600), new Date(T0 + 600_000));
    // Compact the first eight minutes only (hot window 3 min before 23:11:00 = 23:08:00).
    expect((await compactor().runOnce(new Date(T0 + 660_000))).minutes).toBe(8);
    expect(await rawCount(host)).toBe(120);

    // 60 min + 5 min 30 s later: minutes 0..4 have wholly left the 1 s retention, minute 5 straddles it.
    const edge = new Date(T0 + RETENTION_MS + 330_000);
    const run = await compactor().runOnce(edge);
    // Minutes 8 and 9 were still raw: compacted now (they are within the retention).
    expect(run).toMatchObject({ minutes: 2, prunedRaw: 0, prunedChunks: 5, prunedRollups: 0 });
    const left = await db.observationChunk.findMany({ where: { hostId: host }, orderBy: { minute: "asc" } });
    expect(left.map((c) => c.minute.getTime())).toEqual([5, 6, 7, 8, 9].map((m) => T0 + m * 60_000));
    expect(await countSamples(db, host)).toBe(300);
    expect(await db.observationRollup.count({ where: { hostId: host } })).toBe(10);

    // Rollups outlive the chunks. Once its hour is past the 1 s retention it is packed into one row
    // that reads back the same minutes; with a day of rollups (rollupDays = 1) the packed hour goes
    // when its last minute is a day old, not before.
    const minutes = await rollupsBetween(db, host, new Date(T0), new Date(T0 + 3_600_000));
    expect(minutes).toHaveLength(10);
    const dayLater = new Date(T0 + 86_400_000 + 120_000);
    const late = await compactor({ rollupDays: 1 }).runOnce(dayLater);
    expect(late).toMatchObject({ prunedChunks: 5, packedMinutes: 10, prunedRollups: 0 });
    const rows = await db.observationRollup.findMany({ where: { hostId: host } });
    expect(rows.map((r) => [r.minute.getTime(), r.spanMinutes, r.samples])).toEqual([[T0, 60, 600]]);
    expect(await rollupsBetween(db, host, new Date(T0), new Date(T0 + 3_600_000))).toEqual(minutes);
    expect(await rollupsBetween(db, host, new Date(T0 + 150_000), new Date(T0 + 240_000))).toEqual(
      minutes.slice(2, 5),
    );
    const dayAndHourLater = new Date(T0 + 86_400_000 + 3_600_000);
    expect(await compactor({ rollupDays: 1 }).runOnce(dayAndHourLater)).toMatchObject({ prunedRollups: 1 });
    expect(await db.observationRollup.count({ where: { hostId: host } })).toBe(0);
    expect(await countSamples(db, host)).toBe(0);
  });

  it("prunes raw samples of a quiet host once they leave the retention, without compacting them", async () => {
    const host = await makeHost();
    await store(host, range(0, 120), new Date(T0 + 120_000));
    const run = await compactor().runOnce(new Date(T0 + RETENTION_MS + 125_000));
    expect(run).toMatchObject({ minutes: 0, prunedRaw: 120 });
    expect(await rawCount(host)).toBe(0);
    expect(await chunkCount(host)).toBe(0);
  });

  it("serves history from the samples within their retention, from the rollups beyond", async () => {
    const host = await makeHost();
    const now = new Date(T0 + 400_000);
    await store(host, range(0, 300), now);
    await compactor().runOnce(now);
    const tiers = { now, samplesRetentionMs: RETENTION_MS };
    const recent = await observationHistory(db, host, new Date(T0 + 60_000), now, tiers);
    expect(recent.tier).toBe("samples");
    expect(recent.tier === "samples" && recent.samples).toHaveLength(240);
    const week = await observationHistory(db, host, new Date(now.getTime() - 7 * 86_400_000), now, tiers);
    expect(week.tier).toBe("rollups");
    expect(week.tier === "rollups" && week.rollups.map((r) => r.samples)).toEqual([60, 60, 60]);
  });

  it("skips its run while another process compacts", async () => {
    const host = await makeHost();
    const now = new Date(T0 + 400_000);
    await store(host, range(0, 120), now);
    const run = await db.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT pg_advisory_xact_lock(${COMPACTOR_LOCK_KEY})::text`;
      return compactor().runOnce(now);
    });
    expect(run).toMatchObject({ skipped: true, minutes: 0 });
    expect(await rawCount(host)).toBe(120);
    expect((await compactor().runOnce(now)).minutes).toBe(2);
  });

  it("never makes ingest of new samples wait for a compaction in progress", async () => {
    const host = await makeHost();
    const now = new Date(T0 + 400_000);
    await store(host, range(0, 240), now);
    // A client that gives up after 500 ms of waiting for a lock: ingest through it fails if blocked.
    const impatient = createDb(inject("databaseUrl"), { max: 2, lockTimeoutMs: 500 });
    try {
      const outcome = await db.$transaction(async (tx) => {
        // What a compaction transaction holds while it works: the lock and minute 0's raw rows,
        // deleted but not committed.
        await tx.$queryRaw`SELECT pg_advisory_xact_lock(${COMPACTOR_LOCK_KEY})::text`;
        await tx.$executeRaw`
          DELETE FROM observation_samples WHERE host_id = ${host} AND sampled_at < ${at(60).toISOString()}::timestamptz`;
        const fresh = await storeBatchWith(impatient, host, range(240, 250), now);
        const others = await Promise.all([
          samplesBetween(impatient, host, new Date(T0)),
          evaluationWindow(impatient, host, 120),
          countSamples(impatient, host),
        ]);
        return { fresh, others };
      });
      expect(outcome.fresh.accepted).toBe(10);
      // Readers saw the committed state: minute 0 still there (the delete was not committed yet).
      expect(outcome.others[0]).toHaveLength(250);
      expect(outcome.others[2]).toBe(250);
    } finally {
      await impatient.$disconnect();
    }
  });
});
