/**
 * Console ingest under fleet load, against the same kind of stack as the e2e tests (a throwaway
 * PostgreSQL cluster, migrated and seeded, and the console's production build via `next start`):
 *
 *   - AGENTS simulated agents (default 200), each with its own host token made through the REST API
 *     (POST /api/v1/host-tokens as the signed-in admin);
 *   - each agent does what apps/agent does (agent.ts + console/console-link.ts): hello, then one
 *     sample every desired.sampleIntervalMs (1000 ms) pushed into a buffer and flushed at once if no
 *     send is in flight, in batches of up to OBSERVATION_BATCH_MAX; a sample that arrives while a
 *     send is in flight waits and goes with the next batch; /agent/desired is fetched when the
 *     reply's revision changes. (The agent ignores desired.batchMaxObservations today: it batches
 *     by OBSERVATION_BATCH_MAX, so steady state is one sample per batch.)
 *   - before the measured phase every agent replays 120 s of history in one batch (as after a
 *     console outage), so diagnostics evaluates a full window from the first measured batch;
 *   - the measured phase runs in real time (no compression) for DURATION_S seconds (default 60).
 *
 * Findings are evaluated off the request path (packages/api/src/services/finding-evaluator.ts), so
 * the bench also measures evaluation lag from the database, every LAG_POLL_MS during the measured
 * phase, for each host with an open finding (every 4th host overflows): "backlog" = the host's
 * newest stored sample minus its findings' last_seen_at (the newest sample the last finished
 * evaluation saw: seconds of accepted samples not evaluated yet), and "age" = now minus that
 * last_seen_at (sample taken -> evaluated, including the agent's send and ingest). After the
 * agents stop, "drain" is how long until every such host is evaluated up to its newest sample.
 *
 * Prints figures only; no assertions on time. Run: npm run -w @tide/e2e bench
 * Env: TIDE_BENCH_INGEST_AGENTS, TIDE_BENCH_INGEST_SECONDS, TIDE_BENCH_INGEST_SKIP=1 (skip),
 * TIDE_BENCH_CONSOLE_DIR (a built copy of apps/console to run instead, e.g. to measure a change
 * without rebuilding the apps/console/.next that other runs may be serving).
 */
import {
  OBSERVATION_BATCH_MAX,
  type AgentObservationsIn,
  type DataPlaneState,
  type Observation,
} from "@tide/contracts";
import { startBenchStack } from "./bench-stack";
import { ADMIN_EMAIL, CONSOLE_DIR } from "../support/stack";
import pg from "pg";

const AGENTS = Number(process.env.TIDE_BENCH_INGEST_AGENTS ?? 200);
const DURATION_S = Number(process.env.TIDE_BENCH_INGEST_SECONDS ?? 60);
const HISTORY_S = 120;
const RETENTION_MIN = 60; // TIDE_OBSERVATION_RETENTION_MINUTES default
const REQUEST_TIMEOUT_MS = 10_000; // as console-link.ts
const LAG_POLL_MS = 2_000;
const BENCH_CONSOLE_DIR = process.env.TIDE_BENCH_CONSOLE_DIR ?? CONSOLE_DIR;

// ---------------------------------------------------------------------------------------------------
// Observation generator: 3 namespaces, 2 CPUs, a few listeners, probe results; absolute counters
// that rise with time. Every 4th host has an overflowing, capped listener so diagnostics has work.

const ROOT = 4026531840;
const WEB = 4026532301;
const DB = 4026532402;

function hostProfile(i: number) {
  return {
    overflowPerS: i % 4 === 0 ? 3 + (i % 7) : 0,
    squeezePerS: i % 5 === 0 ? 2 : 0,
    base: 1000 * (i + 1),
  };
}

function observation(hostname: string, i: number, at: Date, startedAt: string): Observation {
  const p = hostProfile(i);
  const t = Math.floor(at.getTime() / 1000) % 1_000_000; // seconds: counters rise with time
  const overflows = p.overflowPerS * t;
  const counters = (scale: number, extra: Record<string, number>) => ({
    TcpExtListenOverflows: 0,
    TcpExtListenDrops: 0,
    TcpExtTCPReqQFullDoCookies: 0,
    TcpExtTCPReqQFullDrop: 0,
    TcpExtSyncookiesSent: 0,
    TcpExtTCPRcvCollapsed: 0,
    TcpExtPruneCalled: 0,
    TcpExtTCPTimeouts: p.base + 2 * t * scale,
    TcpExtTCPRetransFail: 0,
    IpInReceives: p.base + 5000 * t * scale,
    IpOutRequests: p.base + 4800 * t * scale,
    IpFragFails: 0,
    IcmpMsgOutType3: 0,
    TcpActiveOpens: p.base + 50 * t * scale,
    TcpPassiveOpens: p.base + 400 * t * scale,
    TcpRetransSegs: p.base + 7 * t * scale,
    TcpInSegs: p.base + 6000 * t * scale,
    TcpOutSegs: p.base + 5900 * t * scale,
    UdpInDatagrams: p.base + 30 * t * scale,
    UdpOutDatagrams: p.base + 30 * t * scale,
    ...extra,
  });
  const sysctls = (somaxconn: number) => ({
    somaxconn,
    tcpMaxSynBacklog: 4096,
    tcpSyncookies: 1 as const,
    tcpRmem: [4096, 131072, 6291456] as [number, number, number],
    ipLocalPortRange: [32768, 60999] as [number, number],
    tcpMtuProbing: 0 as const,
  });
  const hist = (scale: number) => [0, 3, 10, 40, 120, 300, 200, 60, 10, 2].map((b) => b * scale * (1 + t));
  return {
    schemaVersion: 1,
    hostId: hostname,
    agentVersion: "0.4.0",
    kernelRelease: "6.12.38+deb13-amd64",
    sampledAt: at.toISOString(),
    namespaces: [
      {
        netns: { inode: ROOT, name: null, root: true },
        pids: [1, 612, 733],
        counters: counters(1, {}),
        sockstat: { tcpInuse: 42, tcpOrphan: 0, tcpTw: 310, tcpAlloc: 60, tcpMemPages: 12 },
        sysctls: sysctls(4096),
        listeners: [
          { address: "0.0.0.0", port: 22, recvQ: 0, sendQ: 128, requestedBacklog: null },
          { address: "127.0.0.1", port: 9100, recvQ: 0, sendQ: 4096, requestedBacklog: 4096 },
        ],
        listenPorts: [
          { port: 22, sockets: 1 },
          { port: 9100, sockets: 1 },
        ],
      },
      {
        netns: { inode: WEB, name: "web", root: false },
        pids: [4242, 4243, 4244],
        counters: counters(3, { TcpExtListenOverflows: overflows, TcpExtListenDrops: overflows }),
        sockstat: { tcpInuse: 900, tcpOrphan: 2, tcpTw: 1200, tcpAlloc: 960, tcpMemPages: 12 },
        sysctls: sysctls(128),
        listeners: [
          {
            address: "0.0.0.0",
            port: 8080,
            recvQ: p.overflowPerS > 0 ? 129 : 3,
            sendQ: 128,
            requestedBacklog: 4096,
          },
          { address: "0.0.0.0", port: 8443, recvQ: 0, sendQ: 128, requestedBacklog: 511 },
        ],
        listenPorts: [
          { port: 8080, sockets: 1 },
          { port: 8443, sockets: 1 },
        ],
      },
      {
        netns: { inode: DB, name: null, root: false },
        pids: [5150],
        counters: counters(1, {}),
        sockstat: { tcpInuse: 120, tcpOrphan: 0, tcpTw: 15, tcpAlloc: 960, tcpMemPages: 12 },
        sysctls: sysctls(4096),
        listeners: [{ address: "0.0.0.0", port: 5432, recvQ: 0, sendQ: 244, requestedBacklog: 244 }],
        listenPorts: [{ port: 5432, sockets: 1 }],
      },
    ],
    cpus: [0, 1].map((cpu) => ({
      cpu,
      softnetProcessed: p.base + 2_000 * t,
      softnetDropped: 0,
      softnetTimeSqueeze: cpu === 1 ? p.squeezePerS * t : 0,
      netRxSoftirqs: p.base + 900 * t,
    })),
    probes: [
      { probe: "listen_capped", state: "on", startedAt },
      { probe: "listen_overflow", state: "on", startedAt },
      { probe: "connect_latency", state: "on", startedAt },
      { probe: "net_rx_softirq", state: "on", startedAt },
      { probe: "icmp_frag_needed", state: "off", reason: "disabled", detail: "" },
    ],
    probeResults: {
      listenCapped: [
        { netnsInode: WEB, port: 8080, pid: 4242, comm: "nginx", requested: 4096, effective: 128 },
        { netnsInode: WEB, port: 8443, pid: 4242, comm: "nginx", requested: 511, effective: 128 },
      ],
      listenOverflow: p.overflowPerS > 0 ? [{ netnsInode: WEB, port: 8080, drops: overflows }] : [],
      connectLatency: [
        {
          netnsInode: WEB,
          pid: 4243,
          comm: "php-fpm",
          latencyUs: hist(1),
          eaddrnotavail: 0,
          evenPorts: 25 * t,
          oddPorts: 25 * t,
        },
      ],
      netRxSoftirq: [0, 1].map((cpu) => ({ cpu, durationUs: hist(2), intervalMaxUs: 180 + 40 * cpu })),
      icmpFragNeeded: [],
    },
    paths: [],
  } satisfies Observation;
}

const dataPlane: DataPlaneState[] = [
  {
    component: "redirect",
    socket: "/run/tide/redirect.sock",
    reachable: true,
    error: null,
    version: "0.4.0",
    tableHashes: {},
    directorCounters: null,
    redirectCounters: null,
  },
];

// ---------------------------------------------------------------------------------------------------
// Simulated agent (console-link.ts semantics, without backoff subtleties: a failure waits 1 s).

interface Stats {
  latencies: number[];
  batches: number;
  samples: number;
  accepted: number;
  maxBatch: number;
  errors: Map<string, number>;
  desiredFetches: number;
}

class SimAgent {
  private buffer: Observation[] = [];
  private sending = false;
  private revision: number | null = null;
  private nextAttemptAt = 0;
  intervalMs = 1000;
  readonly startedAt = new Date(Date.now() - 3_600_000).toISOString();
  private inflight: Promise<void> = Promise.resolve();

  constructor(
    private readonly baseURL: string,
    readonly hostname: string,
    readonly index: number,
    private readonly token: string,
    private readonly stats: Stats | null,
  ) {}

  private async call(method: "GET" | "POST", p: string, body?: unknown): Promise<unknown> {
    const res = await fetch(new URL(p, this.baseURL), {
      method,
      headers: {
        authorization: `Bearer ${this.token}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    if (!res.ok) throw new Error(`${method} ${p}: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
    return res.json();
  }

  async hello(): Promise<void> {
    const r = (await this.call("POST", "/api/v1/agent/hello", {
      protocolVersion: 1,
      agentVersion: "0.4.0",
      hostname: this.hostname,
      kernelRelease: "6.12.38+deb13-amd64",
      roles: ["proxy"],
      probes: [],
      dataPlane,
    })) as { desired: { revision: number; sampleIntervalMs: number } };
    this.revision = r.desired.revision;
    this.intervalMs = r.desired.sampleIntervalMs;
  }

  /** One batch of past samples (not measured), like a replay after an outage. */
  async backfill(seconds: number, until: number): Promise<void> {
    const observations = [];
    for (let s = seconds; s >= 1; s--) observations.push(this.sample(new Date(until - s * 1000)));
    const body: AgentObservationsIn = { observations, dataPlane, replayed: true };
    await this.call("POST", "/api/v1/agent/observations", body);
  }

  sample(at: Date): Observation {
    return observation(this.hostname, this.index, at, this.startedAt);
  }

  /** Agent loop tick: queue a sample, flush if nothing is in flight (console-link.ts offer()). */
  offer(at: Date): void {
    this.buffer.push(this.sample(at));
    if (this.sending || Date.now() < this.nextAttemptAt) return;
    this.sending = true;
    this.inflight = this.flush()
      .catch((err: unknown) => {
        const msg = (err instanceof Error ? err.message : String(err)).replace(/tide_host_\S+/g, "[token]");
        const key = msg.slice(0, 120);
        this.stats?.errors.set(key, (this.stats.errors.get(key) ?? 0) + 1);
        this.nextAttemptAt = Date.now() + 1000;
      })
      .finally(() => {
        this.sending = false;
      });
  }

  private async flush(): Promise<void> {
    while (this.buffer.length > 0) {
      const batch = this.buffer.slice(0, OBSERVATION_BATCH_MAX);
      const body: AgentObservationsIn = { observations: batch, dataPlane, replayed: false };
      const t0 = performance.now();
      const reply = (await this.call("POST", "/api/v1/agent/observations", body)) as {
        accepted: number;
        desiredRevision: number;
      };
      const dt = performance.now() - t0;
      this.buffer.splice(0, batch.length);
      if (this.stats) {
        this.stats.latencies.push(dt);
        this.stats.batches++;
        this.stats.samples += batch.length;
        this.stats.accepted += reply.accepted;
        this.stats.maxBatch = Math.max(this.stats.maxBatch, batch.length);
      }
      if (reply.desiredRevision !== this.revision) {
        const d = (await this.call("GET", "/api/v1/agent/desired")) as { revision: number };
        this.revision = d.revision;
        if (this.stats) this.stats.desiredFetches++;
      }
    }
  }

  drain(): Promise<void> {
    return this.inflight;
  }
}

// ---------------------------------------------------------------------------------------------------

const pct = (sorted: number[], q: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const gb = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(2)} GiB`;

async function dbFigures(client: pg.Client) {
  const r = await client.query<{ db: string; tbl: string; rows: string }>(
    `SELECT pg_database_size(current_database())::text AS db,
            pg_total_relation_size('observation_samples')::text AS tbl,
            (SELECT count(*) FROM observation_samples)::text AS rows`,
  );
  const row = r.rows[0]!;
  return { db: Number(row.db), tbl: Number(row.tbl), rows: Number(row.rows) };
}

/** Per host with open findings: evaluation backlog and age, ms (see the header). */
async function evaluationLag(client: pg.Client): Promise<{ backlog: number[]; age: number[] }> {
  const r = await client.query<{ backlog_ms: number; age_ms: number }>(
    `SELECT (extract(epoch FROM s.newest - f.seen) * 1000)::float8 AS backlog_ms,
            (extract(epoch FROM clock_timestamp() - f.seen) * 1000)::float8 AS age_ms
       FROM (SELECT host_id, max(last_seen_at) AT TIME ZONE 'UTC' AS seen
               FROM findings WHERE status <> 'resolved' GROUP BY host_id) f
      CROSS JOIN LATERAL (SELECT max(sampled_at) AS newest FROM observation_samples o
                           WHERE o.host_id = f.host_id) s`,
  );
  return { backlog: r.rows.map((x) => x.backlog_ms), age: r.rows.map((x) => x.age_ms) };
}

async function pool<T>(items: T[], width: number, fn: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

async function main() {
  if (process.env.TIDE_BENCH_INGEST_SKIP === "1") {
    console.log("bench: ingest skipped (TIDE_BENCH_INGEST_SKIP=1)");
    return;
  }
  const stack = await startBenchStack({ name: "ingest", consoleDir: BENCH_CONSOLE_DIR });
  const client = new pg.Client({ connectionString: stack.dbUrl });
  try {
    await client.connect();
    // Admin session, then one host token per simulated agent through the REST API.
    const signIn = await fetch(`${stack.baseURL}/api/auth/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: ADMIN_EMAIL, password: stack.password }),
    });
    if (!signIn.ok) throw new Error(`sign-in: HTTP ${signIn.status}`);
    const cookie = signIn.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    const names = Array.from({ length: AGENTS }, (_, i) => `bench-lb-${String(i).padStart(3, "0")}`);
    const tokens = new Map<string, string>();
    await pool(names, 8, async (hostname) => {
      const res = await fetch(`${stack.baseURL}/api/v1/host-tokens`, {
        method: "POST",
        headers: { "content-type": "application/json", cookie },
        body: JSON.stringify({ hostname }),
      });
      if (!res.ok) throw new Error(`host-tokens ${hostname}: HTTP ${res.status} ${await res.text()}`);
      tokens.set(hostname, ((await res.json()) as { token: string }).token);
    });

    const stats: Stats = {
      latencies: [],
      batches: 0,
      samples: 0,
      accepted: 0,
      maxBatch: 0,
      errors: new Map(),
      desiredFetches: 0,
    };
    const agents = names.map((h, i) => new SimAgent(stack.baseURL, h, i, tokens.get(h)!, stats));

    // Warm-up (not measured): hello and HISTORY_S of replayed history per agent.
    const warm0 = performance.now();
    const until = Date.now();
    await pool(agents, 16, async (a) => {
      await a.hello();
      await a.backfill(HISTORY_S, until);
    });
    console.log(
      `bench: ${AGENTS} tokens + hello + ${HISTORY_S} s history each in ${((performance.now() - warm0) / 1000).toFixed(1)} s`,
    );

    const before = await dbFigures(client);
    // Measured phase: each agent samples every intervalMs, phases spread over the first interval.
    const t0 = performance.now();
    const end = Date.now() + DURATION_S * 1000;
    const lag = { backlog: [] as number[], age: [] as number[], polls: 0 };
    const lagPoller = (async () => {
      while (Date.now() < end) {
        await new Promise((r) => setTimeout(r, LAG_POLL_MS));
        const l = await evaluationLag(client);
        lag.backlog.push(...l.backlog);
        lag.age.push(...l.age);
        lag.polls++;
      }
    })();
    await Promise.all(
      agents.map(async (a) => {
        await new Promise((r) => setTimeout(r, Math.random() * a.intervalMs));
        while (Date.now() < end) {
          const started = Date.now();
          a.offer(new Date(started));
          await new Promise((r) => setTimeout(r, Math.max(0, a.intervalMs - (Date.now() - started))));
        }
      }),
    );
    const offeredS = (performance.now() - t0) / 1000;
    await Promise.all(agents.map((a) => a.drain()));
    const wallS = (performance.now() - t0) / 1000;
    await lagPoller;
    // Drain: until every host with open findings is evaluated up to its newest sample (max 120 s).
    const drain0 = performance.now();
    let drainS = NaN;
    while (performance.now() - drain0 < 120_000) {
      const l = await evaluationLag(client);
      if (l.backlog.every((b) => b <= 0)) {
        drainS = (performance.now() - drain0) / 1000;
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const after = await dbFigures(client);
    const findings = await client.query<{ status: string; n: string }>(
      "SELECT status::text, count(*)::text AS n FROM findings GROUP BY status ORDER BY status",
    );

    const lat = [...stats.latencies].sort((a, b) => a - b);
    const errors = [...stats.errors.values()].reduce((a, b) => a + b, 0);
    const dRows = after.rows - before.rows;
    const dDb = after.db - before.db;
    const dTbl = after.tbl - before.tbl;
    const perRow = dRows > 0 ? dTbl / dRows : NaN;
    const rowsPerHour = dRows * (3600 / wallS);
    const steadyRows = AGENTS * RETENTION_MIN * 60;
    console.log(
      `bench: console ingest, ${AGENTS} agents x 1 sample/s, ${DURATION_S} s real time (not compressed)`,
    );
    console.log(
      `  batches: ${stats.batches} in ${wallS.toFixed(1)} s (offered for ${offeredS.toFixed(1)} s) = ${(stats.batches / wallS).toFixed(1)} batches/s; samples ${stats.samples} (${(stats.samples / wallS).toFixed(1)}/s), accepted ${stats.accepted}, largest batch ${stats.maxBatch}`,
    );
    console.log(
      `  latency (client, POST /api/v1/agent/observations): p50 ${pct(lat, 0.5).toFixed(0)} ms, p95 ${pct(lat, 0.95).toFixed(0)} ms, p99 ${pct(lat, 0.99).toFixed(0)} ms, max ${(lat.at(-1) ?? NaN).toFixed(0)} ms`,
    );
    console.log(`  errors: ${errors}; /agent/desired fetches: ${stats.desiredFetches}`);
    for (const [msg, n] of stats.errors) console.log(`    ${n} x ${msg}`);
    if (errors > 0) {
      const lines = stack
        .log()
        .split("\n")
        .filter((l) => /error|timed out|timeout/i.test(l))
        .map((l) => l.trim().slice(0, 200));
      const unique = [...new Set(lines)].slice(0, 5);
      if (unique.length > 0) console.log(`  console log (first distinct error lines):`);
      for (const l of unique) console.log(`    ${l}`);
    }
    const backlog = [...lag.backlog].sort((a, b) => a - b);
    const age = [...lag.age].sort((a, b) => a - b);
    const s1 = (ms: number) => (ms / 1000).toFixed(1);
    console.log(
      `  evaluation lag (${lag.polls} polls x hosts with open findings, ${backlog.length} readings): backlog p50 ${s1(pct(backlog, 0.5))} s, p95 ${s1(pct(backlog, 0.95))} s, max ${s1(backlog.at(-1) ?? NaN)} s; age (sample -> evaluated) p50 ${s1(pct(age, 0.5))} s, p95 ${s1(pct(age, 0.95))} s, max ${s1(age.at(-1) ?? NaN)} s; drain after the agents stopped ${Number.isNaN(drainS) ? "> 120" : drainS.toFixed(1)} s`,
    );
    console.log(`  findings: ${findings.rows.map((r) => `${r.status} ${r.n}`).join(", ") || "none"}`);
    console.log(
      `  observation_samples: ${before.rows} -> ${after.rows} rows (+${dRows}); table+indexes ${mb(before.tbl)} -> ${mb(after.tbl)} (+${mb(dTbl)}, ${perRow.toFixed(0)} B/sample)`,
    );
    console.log(
      `  pg_database_size: ${mb(before.db)} -> ${mb(after.db)} (+${mb(dDb)}) => ~${gb(dDb * (3600 / wallS))}/hour extrapolated (${(rowsPerHour / 1e6).toFixed(2)} M samples/hour)`,
    );
    console.log(
      `  retention ${RETENTION_MIN} min: growth stops after the first hour at ~${(steadyRows / 1000).toFixed(0)} k rows, ~${gb(steadyRows * perRow)} of samples (prune deletes leave dead tuples that autovacuum must reclaim)`,
    );
  } finally {
    await client.end().catch(() => undefined);
    await stack.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
