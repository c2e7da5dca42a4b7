/**
 * Observation storage per tier (issue 16: <= 300 bytes per host sample at 1 s, 30 days of rollups),
 * against a throwaway PostgreSQL cluster (migrated, no console):
 *
 *   - HOSTS simulated hosts (default 50) each send MINUTES (default 60) of samples at 1 s, time
 *     compressed: a simulated clock advances BATCH_S (10 s) per step, and every host stores that
 *     step's samples in one batch through storeBatch (what ingest does, with the console's clock);
 *   - every COMPACT_EVERY_S simulated seconds (15 s, the compactor's interval) one compaction run
 *     (runCompaction with the compactor's limits) moves minutes older than the hot window into
 *     chunks and rollups; every VACUUM_EVERY_S simulated seconds the tables are vacuumed, standing in
 *     for autovacuum, which real time would give (the time compression would otherwise leave the
 *     raw tier's dead rows unreclaimed);
 *   - samples look like an agent's (3 namespaces, 2 CPUs, listeners, probe histograms; counters
 *     rise by a random amount around a per-host rate each second (NOISE), gauges wander), ~4.7 kB
 *     of JSON.
 *
 * Prints, after the simulated hour: table + index + TOAST bytes (pg_total_relation_size) per sample
 * of each tier and of the 1 s tier as a whole, bytes per minute rollup; then, with the clock moved
 * 2 h on (the hour past the 1 s retention, its rollups packed into hours), bytes per host-minute of
 * packed rollups and the extrapolated 30 days of them for 1,000 hosts; and compaction cost (ms per host-minute, and the share of one core
 * 1,000 hosts would take). Figures only; no assertions. Run: npm run -w @tide/e2e bench
 * Env: TIDE_BENCH_STORAGE_HOSTS, TIDE_BENCH_STORAGE_MINUTES, TIDE_BENCH_STORAGE_NOISE (0.3),
 * TIDE_BENCH_STORAGE_SKIP=1 (skip).
 */
import { newId, type Observation } from "@tide/contracts";
import { createDb, runCompaction, storeBatch, type CompactionLimits, type Db, type Prisma } from "@tide/db";
import { migrate, startTempCluster, type TempCluster } from "@tide/devstack";
import { refuseRemoteDatabase } from "../support/stack";
import { rng } from "./seeded-random";
import { TIDE_VERSION } from "../support/tide-version";

const HOSTS = Number(process.env.TIDE_BENCH_STORAGE_HOSTS ?? 50);
const MINUTES = Number(process.env.TIDE_BENCH_STORAGE_MINUTES ?? 60);
/**
 * How much a counter's increase varies from second to second, as a fraction of its rate (0.3: each
 * second's increase is uniform in rate x [0.7, 1.3]; 0: steady, as ingest.bench.ts's generator).
 * The chunk tier's size is mostly this noise: steady counters cost almost nothing.
 */
const NOISE = Number(process.env.TIDE_BENCH_STORAGE_NOISE ?? 0.3);
const BATCH_S = 10;
const COMPACT_EVERY_S = 15;
/** autovacuum_naptime's default: a table with dead rows is vacuumed about once a minute. */
const VACUUM_EVERY_S = 60;
const RETENTION_MIN = 60; // TIDE_OBSERVATION_RETENTION_MINUTES default
const MAX_FUTURE_MS = 60_000;
/** The compactor's defaults (packages/api/src/services/telemetry/telemetry-compactor.ts). */
const LIMITS: CompactionLimits = {
  retentionMinutes: RETENTION_MIN,
  rollupDays: 30,
  hotWindowS: 90, // EVALUATION_WINDOW_S (60) + 30
  maxMinutesPerRun: 2_000,
  minutesPerTransaction: 20,
  pruneLimit: 20_000,
  maxHoursPerRun: 500,
};

// ---------------------------------------------------------------------------------------------------
// Sample generator: deterministic per host (xorshift), absolute counters that rise by a random
// amount around their rate each second, gauges that wander, histograms that fill.

const NS = [
  { inode: 4026531840, name: null, root: true, scale: 1 },
  { inode: 4026532301, name: "web", root: false, scale: 3 },
  { inode: 4026532402, name: null, root: false, scale: 1 },
];
/** Counter name and increase per second at scale 1 (0: stays at its value, as most do). */
const COUNTERS: [string, number][] = [
  ["TcpExtListenOverflows", 0],
  ["TcpExtListenDrops", 0],
  ["TcpExtTCPReqQFullDoCookies", 0],
  ["TcpExtTCPReqQFullDrop", 0],
  ["TcpExtSyncookiesSent", 0],
  ["TcpExtTCPRcvCollapsed", 0],
  ["TcpExtPruneCalled", 0],
  ["TcpExtTCPTimeouts", 2],
  ["TcpExtTCPRetransFail", 0],
  ["IpInReceives", 5000],
  ["IpOutRequests", 4800],
  ["IpFragFails", 0],
  ["IcmpMsgOutType3", 0],
  ["TcpActiveOpens", 50],
  ["TcpPassiveOpens", 400],
  ["TcpRetransSegs", 7],
  ["TcpInSegs", 6000],
  ["TcpOutSegs", 5900],
  ["UdpInDatagrams", 30],
  ["UdpOutDatagrams", 30],
];
const HIST = [0, 3, 10, 40, 120, 300, 200, 60, 10, 2];

class SimHost {
  private readonly r: () => number;
  private readonly counters: number[][];
  private readonly cpu: number[][];
  private readonly hists: number[][];
  private drops = 0;
  private readonly startedAt: string;

  constructor(
    readonly id: string,
    readonly name: string,
    private readonly index: number,
    start: Date,
  ) {
    this.r = rng(index + 1);
    const base = 1000 * (index + 1);
    this.counters = NS.map(() => COUNTERS.map(([, rate]) => (rate > 0 ? base * 1000 : 0)));
    this.cpu = [0, 1].map(() => [base * 10_000, 0, 0, base * 5000]);
    this.hists = [0, 1, 2].map(() => HIST.map(() => 0));
    this.startedAt = new Date(start.getTime() - 3_600_000).toISOString();
  }

  /** Advance one second and return the sample at `at`. */
  next(at: Date): Observation {
    const r = this.r;
    const jitter = (rate: number) => Math.round(rate * (1 - NOISE + 2 * NOISE * r()));
    const overflowing = this.index % 4 === 0;
    NS.forEach((ns, n) =>
      COUNTERS.forEach(([, rate], i) => (this.counters[n]![i]! += jitter(rate * ns.scale))),
    );
    if (overflowing) {
      this.drops += jitter(5);
      this.counters[1]![0] = this.drops;
      this.counters[1]![1] = this.drops;
    }
    this.cpu.forEach((c, i) => {
      c[0]! += jitter(2000);
      c[2]! += i === 1 && this.index % 5 === 0 ? jitter(2) : 0;
      c[3]! += jitter(900);
    });
    this.hists.forEach((h, k) => HIST.forEach((b, i) => (h[i]! += jitter(b * (k === 0 ? 0.05 : 0.2)))));
    const sysctls = (somaxconn: number) => ({
      somaxconn,
      tcpMaxSynBacklog: 4096,
      tcpSyncookies: 1 as const,
      tcpRmem: [4096, 131072, 6291456] as [number, number, number],
      ipLocalPortRange: [32768, 60999] as [number, number],
      tcpMtuProbing: 0 as const,
    });
    const counters = (n: number) => Object.fromEntries(COUNTERS.map(([k], i) => [k, this.counters[n]![i]!]));
    const inuse = (x: number) => x + Math.floor(r() * x * 0.1);
    return {
      schemaVersion: 1,
      hostId: this.name,
      agentVersion: TIDE_VERSION,
      kernelRelease: "6.12.38+deb13-amd64",
      sampledAt: at.toISOString(),
      namespaces: [
        {
          netns: { inode: NS[0]!.inode, name: null, root: true },
          pids: [1, 612, 733],
          counters: counters(0),
          sockstat: { tcpInuse: inuse(42), tcpOrphan: 0, tcpTw: inuse(310), tcpAlloc: 60, tcpMemPages: 12 },
          sysctls: sysctls(4096),
          listeners: [
            { address: "0.0.0.0", port: 22, recvQ: 0, sendQ: 128, requestedBacklog: null },
            { address: "127.0.0.1", port: 9100, recvQ: 0, sendQ: 4096, requestedBacklog: 4096 },
          ],
          listenPorts: [
            { port: 22, sockets: 1 },
            { port: 9100, sockets: 1 },
          ],
          established: [{ address: "10.40.0.7", port: 22, count: 2 }],
          establishedTotal: 2,
        },
        {
          netns: { inode: NS[1]!.inode, name: "web", root: false },
          pids: [4242, 4243, 4244],
          counters: counters(1),
          sockstat: {
            tcpInuse: inuse(900),
            tcpOrphan: 2,
            tcpTw: inuse(1200),
            tcpAlloc: 960,
            tcpMemPages: 12,
          },
          sysctls: sysctls(128),
          listeners: [
            {
              address: "0.0.0.0",
              port: 8080,
              recvQ: overflowing ? 129 : Math.floor(r() * 4),
              sendQ: 128,
              requestedBacklog: 4096,
            },
            { address: "0.0.0.0", port: 8443, recvQ: 0, sendQ: 128, requestedBacklog: 511 },
          ],
          listenPorts: [
            { port: 8080, sockets: 1 },
            { port: 8443, sockets: 1 },
          ],
          established: [
            { address: "10.40.0.7", port: 8080, count: inuse(700) },
            { address: "10.40.0.7", port: 8443, count: inuse(150) },
          ],
          establishedTotal: inuse(850),
        },
        {
          netns: { inode: NS[2]!.inode, name: null, root: false },
          pids: [5150],
          counters: counters(2),
          sockstat: { tcpInuse: inuse(120), tcpOrphan: 0, tcpTw: inuse(15), tcpAlloc: 960, tcpMemPages: 12 },
          sysctls: sysctls(4096),
          listeners: [{ address: "0.0.0.0", port: 5432, recvQ: 0, sendQ: 244, requestedBacklog: 244 }],
          listenPorts: [{ port: 5432, sockets: 1 }],
        },
      ],
      cpus: [0, 1].map((cpu) => ({
        cpu,
        softnetProcessed: this.cpu[cpu]![0]!,
        softnetDropped: 0,
        softnetTimeSqueeze: this.cpu[cpu]![2]!,
        netRxSoftirqs: this.cpu[cpu]![3]!,
      })),
      probes: [
        { probe: "listen_capped", state: "on", startedAt: this.startedAt },
        { probe: "listen_overflow", state: "on", startedAt: this.startedAt },
        { probe: "connect_latency", state: "on", startedAt: this.startedAt },
        { probe: "net_rx_softirq", state: "on", startedAt: this.startedAt },
        { probe: "icmp_frag_needed", state: "off", reason: "disabled", detail: "" },
      ],
      probeResults: {
        listenCapped: [
          { netnsInode: NS[1]!.inode, port: 8080, pid: 4242, comm: "nginx", requested: 4096, effective: 128 },
          { netnsInode: NS[1]!.inode, port: 8443, pid: 4242, comm: "nginx", requested: 511, effective: 128 },
        ],
        listenOverflow: overflowing ? [{ netnsInode: NS[1]!.inode, port: 8080, drops: this.drops }] : [],
        connectLatency: [
          {
            netnsInode: NS[1]!.inode,
            pid: 4243,
            comm: "php-fpm",
            latencyUs: [...this.hists[0]!],
            eaddrnotavail: 0,
            evenPorts: this.cpu[0]![3]! >> 4,
            oddPorts: this.cpu[1]![3]! >> 4,
          },
        ],
        netRxSoftirq: [0, 1].map((cpu) => ({
          cpu,
          durationUs: [...this.hists[cpu + 1]!],
          intervalMaxUs: 150 + Math.floor(r() * 80),
        })),
        icmpFragNeeded: [],
      },
      paths: [],
    };
  }
}

// ---------------------------------------------------------------------------------------------------

interface TierSize {
  raw: number;
  chunks: number;
  rollups: number;
  rawRows: number;
  chunkRows: number;
  chunkSamples: number;
  chunkData: number;
  rollupRows: number;
  rollupData: number;
  rawHeap: number;
  rawToast: number;
  rawIndexes: number;
  rawPayload: number;
}

async function sizes(db: Db): Promise<TierSize> {
  const [r] = await db.$queryRaw<Record<keyof TierSize, string>[]>`
    SELECT pg_total_relation_size('observation_samples')::text AS raw,
           pg_total_relation_size('observation_chunks')::text AS chunks,
           pg_total_relation_size('observation_rollups')::text AS rollups,
           (SELECT count(*) FROM observation_samples)::text AS "rawRows",
           (SELECT count(*) FROM observation_chunks)::text AS "chunkRows",
           (SELECT coalesce(sum(cardinality(offsets_ms)), 0) FROM observation_chunks)::text AS "chunkSamples",
           (SELECT coalesce(sum(octet_length(data)), 0) FROM observation_chunks)::text AS "chunkData",
           (SELECT count(*) FROM observation_rollups)::text AS "rollupRows",
           (SELECT coalesce(sum(octet_length(data)), 0) FROM observation_rollups)::text AS "rollupData",
           pg_relation_size('observation_samples')::text AS "rawHeap",
           (SELECT pg_total_relation_size(reltoastrelid) FROM pg_class WHERE relname = 'observation_samples')::text AS "rawToast",
           pg_indexes_size('observation_samples')::text AS "rawIndexes",
           (SELECT coalesce(avg(pg_column_size(payload)), 0) FROM observation_samples)::text AS "rawPayload"`;
  return Object.fromEntries(Object.entries(r!).map(([k, v]) => [k, Number(v)])) as unknown as TierSize;
}

const kb = (b: number) => `${(b / 1024).toFixed(0)} kB`;
const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;
const gb = (b: number) => `${(b / 1024 ** 3).toFixed(1)} GiB`;

async function main() {
  if (process.env.TIDE_BENCH_STORAGE_SKIP === "1") {
    console.log("telemetry-storage bench: skipped (TIDE_BENCH_STORAGE_SKIP=1)");
    return;
  }
  refuseRemoteDatabase();
  let cluster: TempCluster | undefined;
  let db: Db | undefined;
  try {
    cluster = await startTempCluster();
    await migrate(cluster.url, { quiet: true });
    db = createDb(cluster.url, { max: 6 });
    const d = db;
    // Simulated clock: the hour ends now, so the tiers' retention is as a console would see it.
    const start = new Date(Math.floor((Date.now() - MINUTES * 60_000) / 60_000) * 60_000);
    const hosts: SimHost[] = [];
    for (let i = 0; i < HOSTS; i++) {
      const id = newId("host");
      const name = `lb-sim-${String(i).padStart(4, "0")}`;
      await d.host.create({ data: { id, name, roles: ["proxy"] } });
      hosts.push(new SimHost(id, name, i, start));
    }
    console.log(
      `telemetry-storage bench: ${HOSTS} hosts x ${MINUTES} min at 1 s, counter noise ${NOISE}, batches of ${BATCH_S} s, ` +
        `compaction every ${COMPACT_EVERY_S} s (simulated)`,
    );
    let storeMs = 0;
    let stored = 0;
    let jsonBytes = 0;
    let compactMs = 0;
    let compacted = { minutes: 0, rows: 0, chunkBytes: 0, runs: 0, skipped: 0 };
    const wall = Date.now();
    for (let s = 0; s < MINUTES * 60; s += BATCH_S) {
      const now = new Date(start.getTime() + (s + BATCH_S) * 1000);
      const t0 = performance.now();
      await Promise.all(
        hosts.map(async (h) => {
          const rows = [];
          for (let k = 0; k < BATCH_S; k++) {
            const at = new Date(start.getTime() + (s + k) * 1000 + ((h.name.length * 7 + k) % 5));
            const o = h.next(at);
            jsonBytes += JSON.stringify(o).length;
            rows.push({
              id: newId("observation"),
              sampledAt: at,
              payload: o as unknown as Prisma.InputJsonValue,
            });
          }
          const r = await storeBatch(
            d,
            h.id,
            rows,
            RETENTION_MIN * 60_000,
            { dataPlane: [], agentVersion: TIDE_VERSION, kernelRelease: "6.12.38+deb13-amd64" },
            { now, maxFutureMs: MAX_FUTURE_MS },
          );
          stored += r.accepted;
        }),
      );
      storeMs += performance.now() - t0;
      const elapsed = s + BATCH_S;
      if (elapsed % COMPACT_EVERY_S < BATCH_S) {
        const c0 = performance.now();
        const run = await runCompaction(d, now, LIMITS);
        compactMs += performance.now() - c0;
        compacted = {
          minutes: compacted.minutes + run.minutes,
          rows: compacted.rows + run.rows,
          chunkBytes: compacted.chunkBytes + run.chunkBytes,
          runs: compacted.runs + 1,
          skipped: compacted.skipped + (run.skipped ? 1 : 0),
        };
      }
      if (elapsed % VACUUM_EVERY_S === 0) {
        await d.$executeRawUnsafe("VACUUM observation_samples, observation_chunks, observation_rollups");
      }
      if (elapsed % 600 === 0) {
        console.log(`  ${elapsed / 60} min simulated (${((Date.now() - wall) / 1000).toFixed(0)} s wall)`);
      }
    }
    await d.$executeRawUnsafe("VACUUM ANALYZE observation_samples, observation_chunks, observation_rollups");
    const z = await sizes(d);
    const samples1s = z.rawRows + z.chunkSamples;
    const perRaw = z.raw / Math.max(1, z.rawRows);
    const perChunk = z.chunks / Math.max(1, z.chunkSamples);
    const per1s = (z.raw + z.chunks) / Math.max(1, samples1s);
    const perRollup = z.rollups / Math.max(1, z.rollupRows);
    const rollup30d1000 = perRollup * 1440 * 30 * 1000;
    const msPerMinute = compactMs / Math.max(1, compacted.minutes);
    // Then the hosts go quiet: 10 min later the rest is compacted, 2 h later the hour is past the
    // 1 s retention, so its chunks are pruned and its rollups packed into hours.
    const end = new Date(start.getTime() + MINUTES * 60_000);
    await runCompaction(d, new Date(end.getTime() + 600_000), LIMITS);
    const p0 = performance.now();
    const packRun = await runCompaction(d, new Date(end.getTime() + 7_200_000), LIMITS);
    const packMs = performance.now() - p0;
    // VACUUM FULL: the packed hours are what 30 days of rollups are made of; the space the minute
    // rows left is reused by the next hours' minute rows (about 2 h of them at any time).
    await d.$executeRawUnsafe("VACUUM FULL ANALYZE observation_rollups");
    const packed = await sizes(d);
    const hostMinutes = HOSTS * MINUTES;
    const perPackedMinute = packed.rollups / hostMinutes;
    const packed30d1000 = perPackedMinute * 1440 * 30 * 1000;
    console.log(`  stored ${stored} samples (${(jsonBytes / stored).toFixed(0)} B of JSON each)`);
    console.log(
      `  ingest: ${(storeMs / 1000).toFixed(1)} s in storeBatch (${(stored / (storeMs / 1000)).toFixed(0)} samples/s)`,
    );
    console.log(
      `  raw tier      observation_samples: ${z.rawRows} rows, ${mb(z.raw)} -> ${perRaw.toFixed(0)} B/sample ` +
        `(heap ${mb(z.rawHeap)}, TOAST ${mb(z.rawToast)}, indexes ${mb(z.rawIndexes)}; ` +
        `payload ${z.rawPayload.toFixed(0)} B stored)`,
    );
    console.log(
      `  chunk tier    observation_chunks: ${z.chunkRows} rows, ${z.chunkSamples} samples, ${mb(z.chunks)} ` +
        `-> ${perChunk.toFixed(1)} B/sample (data alone ${(z.chunkData / Math.max(1, z.chunkSamples)).toFixed(1)} B)`,
    );
    console.log(
      `  1 s tier      ${samples1s} samples, ${mb(z.raw + z.chunks)} -> ${per1s.toFixed(1)} B/sample (goal <= 300)`,
    );
    console.log(
      `  rollup tier   observation_rollups: ${z.rollupRows} rows, ${mb(z.rollups)} -> ${perRollup.toFixed(0)} B/host-minute ` +
        `(data alone ${(z.rollupData / Math.max(1, z.rollupRows)).toFixed(0)} B); ` +
        `as minute rows 30 days x 1,000 hosts would be ~ ${gb(rollup30d1000)}`,
    );
    console.log(
      `  packed hours  observation_rollups: ${packed.rollupRows} rows for ${hostMinutes} host-minutes, ` +
        `${mb(packed.rollups)} -> ${perPackedMinute.toFixed(0)} B/host-minute ` +
        `(data alone ${(packed.rollupData / hostMinutes).toFixed(0)} B); 30 days x 1,000 hosts ~ ${gb(packed30d1000)} ` +
        `(packing ${packRun.packedMinutes} minutes took ${(packMs / 1000).toFixed(1)} s)`,
    );
    console.log(
      `  1 h x 1,000 hosts at 1 s ~ ${gb(per1s * 3600 * 1000)} (all of it as raw rows would be ~ ${gb(perRaw * 3600 * 1000)})`,
    );
    console.log(
      `  compaction: ${compacted.runs} runs (${compacted.skipped} skipped), ${compacted.minutes} host-minutes, ` +
        `${compacted.rows} rows, ${kb(compacted.chunkBytes)} written, ${(compactMs / 1000).toFixed(1)} s ` +
        `-> ${msPerMinute.toFixed(1)} ms per host-minute, ${(compacted.rows / (compactMs / 1000)).toFixed(0)} samples/s; ` +
        `1,000 hosts ~ ${((msPerMinute * 1000) / 600).toFixed(1)}% of one core-minute per minute (client + server)`,
    );
  } finally {
    await db?.$disconnect();
    await cluster?.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
