/**
 * Console ingest under fleet load, against the same kind of stack as the e2e tests (a throwaway
 * PostgreSQL cluster, migrated and seeded, and the console's production build via `next start`):
 *
 *   - AGENTS simulated agents (200, then 1,000: one stack each), each with its own host token made
 *     through the REST API
 *     (POST /api/v1/host-tokens as the signed-in admin);
 *   - the agents run in their own process (ingest-agents.ts, forked; its header says what each
 *     agent does), so neither the console nor this process, which measures evaluation lag, shares
 *     an event loop with them; it is bounded in time (it exits by itself, and is killed if not);
 *   - each agent sends one sample a second, one per batch, unless the console's replies ask for a
 *     batch interval (AgentObservationsReply.batchIntervalMs, as apps/agent honours it); a send
 *     that fails (503 busy, a timeout) keeps its samples and is retried after the agent's backoff
 *     (1 s doubling, at least Retry-After) with everything buffered meanwhile, as apps/agent does;
 *   - before the measured phase every agent replays 120 s of history in one batch (as after a
 *     console outage), so diagnostics evaluates a full window from the first measured batch;
 *   - it waits (at most SETTLE_LIMIT_S) until findings are evaluated up to the replayed history and
 *     the compactor has moved its old minutes, so the measured phase is the steady state, not the
 *     catch-up after the replay (whose time it prints);
 *   - the measured phase runs in real time (no compression) for DURATION_S seconds (default 60).
 *
 * Findings are evaluated off the request path (packages/api/src/services/findings/evaluation-scheduler.ts), so
 * the bench also measures evaluation lag from the database, every LAG_POLL_MS during the measured
 * phase, for each host with an open finding (every 4th host overflows): "wait" = how long the
 * host's oldest accepted sample that no finished evaluation has seen yet has been stored (now minus
 * its received_at; 0 when every sample is evaluated): the evaluation lag proper, from accepted to
 * evaluated; "backlog" = the host's newest stored sample minus its findings' last_seen_at (the
 * newest sample the last finished evaluation saw: seconds of sample time not evaluated yet, which
 * includes the batch the agent held), and "age" = now minus that
 * last_seen_at (sample taken -> evaluated, including the agent's send and ingest). After the
 * agents stop, "drain" is how long until every such host is evaluated up to its newest sample.
 *
 * Prints figures only; no assertions on time. Run: npm run -w @tide/e2e bench
 * Env: TIDE_BENCH_INGEST_AGENTS (agent counts, default "200,1000"), TIDE_BENCH_INGEST_SECONDS, TIDE_BENCH_INGEST_HISTORY_S (default
 * 120), TIDE_BENCH_AGENT_COUNTERS (counters per namespace, default 20 here; a real host has ~318),
 * TIDE_BENCH_INGEST_SKIP=1 (skip),
 * TIDE_BENCH_CONSOLE_DIR (a built copy of apps/console to run instead, e.g. to measure a change
 * without rebuilding the apps/console/.next that other runs may be serving),
 * TIDE_BENCH_CONSOLE_CPU_PROF=<dir> (a CPU profile of the console, bench-stack.ts).
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { startBenchStack } from "./bench-stack";
import type { AgentsJob, AgentsMessage, AgentsStats } from "./ingest-agents";
import { ADMIN_EMAIL, CONSOLE_DIR } from "../support/stack";

/** Fleet sizes measured one after the other, each on a stack of its own (issue 16: 200 and 1,000). */
const AGENT_COUNTS = (process.env.TIDE_BENCH_INGEST_AGENTS ?? "200,1000").split(",").map(Number);
const DURATION_S = Number(process.env.TIDE_BENCH_INGEST_SECONDS ?? 60);
/** History each agent replays before the measured phase, s (at least diagnostics' 60 s window). */
const HISTORY_S = Number(process.env.TIDE_BENCH_INGEST_HISTORY_S ?? 120);
const LAG_POLL_MS = 2_000;
const BENCH_CONSOLE_DIR = process.env.TIDE_BENCH_CONSOLE_DIR ?? CONSOLE_DIR;

/** Longest wait after the warm-up for the evaluator to catch up with the history, s. */
const SETTLE_LIMIT_S = 180;
/** The agents' warm-up (hello + history) must end within this, s; then the bench gives up. */
const WARM_LIMIT_S = 600;

const pct = (sorted: number[], q: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const gb = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(2)} GiB`;

/**
 * Database size and the 1 s tier's samples: raw rows plus the samples in compacted chunks (the
 * console's compactor moves minutes older than ~90 s out of observation_samples while the bench
 * runs); `tbl` is the three telemetry tables with their indexes.
 */
async function dbFigures(client: pg.Client) {
  const r = await client.query<{ db: string; tbl: string; rows: string }>(
    `SELECT pg_database_size(current_database())::text AS db,
            (pg_total_relation_size('observation_samples') + pg_total_relation_size('observation_chunks')
              + pg_total_relation_size('observation_rollups'))::text AS tbl,
            ((SELECT count(*) FROM observation_samples)
              + (SELECT coalesce(sum(cardinality(offsets_ms)), 0) FROM observation_chunks))::text AS rows`,
  );
  const row = r.rows[0]!;
  return { db: Number(row.db), tbl: Number(row.tbl), rows: Number(row.rows) };
}

/**
 * Age past which no raw sample is left once the compactor has caught up, s: it leaves the last
 * COMPACT_HOT_WINDOW_S (90 s) raw, moves whole minutes, and runs every 15 s (telemetry-compactor.ts).
 */
const COMPACT_AGE_S = 90 + 60 + 15 + 5;

/** Raw samples older than `seconds` (by the database's clock). */
async function rawOlderThan(client: pg.Client, seconds: number): Promise<number> {
  const r = await client.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM observation_samples WHERE sampled_at < now() - make_interval(secs => $1)",
    [seconds],
  );
  return r.rows[0]!.n;
}

/** Per host with open findings: evaluation backlog, wait and age, ms (see the header). */
async function evaluationLag(
  client: pg.Client,
): Promise<{ backlog: number[]; wait: number[]; age: number[] }> {
  // received_at is the storing transaction's now(), stored without a zone in the session's zone,
  // like clock_timestamp()::timestamp here.
  const r = await client.query<{ backlog_ms: number; wait_ms: number; age_ms: number }>(
    `SELECT (extract(epoch FROM s.newest - f.seen) * 1000)::float8 AS backlog_ms,
            coalesce((SELECT extract(epoch FROM clock_timestamp()::timestamp - min(o.received_at)) * 1000
                        FROM observation_samples o
                       WHERE o.host_id = f.host_id AND o.sampled_at > f.seen), 0)::float8 AS wait_ms,
            (extract(epoch FROM clock_timestamp() - f.seen) * 1000)::float8 AS age_ms
       FROM (SELECT host_id, max(last_seen_at) AT TIME ZONE 'UTC' AS seen
               FROM findings WHERE status <> 'resolved' GROUP BY host_id) f
      CROSS JOIN LATERAL (SELECT max(sampled_at) AS newest FROM observation_samples o
                           WHERE o.host_id = f.host_id) s`,
  );
  return {
    backlog: r.rows.map((x) => x.backlog_ms),
    wait: r.rows.map((x) => x.wait_ms),
    age: r.rows.map((x) => x.age_ms),
  };
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
  if (AGENT_COUNTS.some((n) => !Number.isInteger(n) || n < 1)) {
    throw new Error(`TIDE_BENCH_INGEST_AGENTS: agent counts separated by commas, e.g. 200,1000`);
  }
  for (const agents of AGENT_COUNTS) await benchFleet(agents);
}

/** One fleet of `agents` simulated agents against a console of its own. */
async function benchFleet(agents: number) {
  const stack = await startBenchStack({ name: "ingest", consoleDir: BENCH_CONSOLE_DIR });
  const client = new pg.Client({ connectionString: stack.dbUrl });
  let child: ChildProcess | undefined;
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
    const names = Array.from({ length: agents }, (_, i) => `bench-lb-${String(i).padStart(3, "0")}`);
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

    // The agents, in their own process: warm-up (hello + history, not measured), then on "go" the
    // measured phase; their figures come back with "done".
    const agentsProcess = fork(fileURLToPath(new URL("./ingest-agents.ts", import.meta.url)), [], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      // 20 counters a namespace unless asked (its figures since issue 16 are at that size; a real
      // host's 318 is the agents' default, TIDE_BENCH_AGENT_COUNTERS=318 here).
      env: { ...process.env, TIDE_BENCH_AGENT_COUNTERS: process.env.TIDE_BENCH_AGENT_COUNTERS ?? "20" },
    });
    child = agentsProcess;
    const messages: AgentsMessage[] = [];
    let wake: (() => void) | null = null;
    agentsProcess.on("message", (m: AgentsMessage) => {
      messages.push(m);
      wake?.();
    });
    const exited = new Promise<number | null>((r) => agentsProcess.once("exit", (code) => r(code)));
    const next = async <T extends AgentsMessage["type"]>(type: T, limitS: number) => {
      const deadline = Date.now() + limitS * 1000;
      for (;;) {
        const i = messages.findIndex((m) => m.type === type);
        if (i >= 0) return messages.splice(i, 1)[0] as Extract<AgentsMessage, { type: T }>;
        // Its last message may still be on its way when it exits: the channel closes after it.
        if (
          !agentsProcess.connected &&
          (agentsProcess.exitCode !== null || agentsProcess.signalCode !== null)
        )
          throw new Error(
            `bench: the agents' process exited (${agentsProcess.exitCode ?? agentsProcess.signalCode}) before "${type}"`,
          );
        if (Date.now() > deadline) {
          agentsProcess.kill("SIGKILL");
          throw new Error(`bench: no "${type}" from the agents' process within ${limitS} s`);
        }
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, 1000);
        });
      }
    };
    const job: AgentsJob = {
      baseURL: stack.baseURL,
      agents: names.map((hostname) => ({ hostname, token: tokens.get(hostname)! })),
      historyS: HISTORY_S,
      durationS: DURATION_S,
    };
    agentsProcess.send(job);
    const warm = await next("warm", WARM_LIMIT_S);
    console.log(
      `bench: ${agents} tokens + hello + ${HISTORY_S} s history each in ${warm.seconds.toFixed(1)} s`,
    );

    // Settle: the replayed history leaves every host to evaluate at once, and its minutes to compact
    // at once; measure the steady state once the evaluator and the compactor have caught up with it
    // (or after SETTLE_LIMIT_S): no host's findings behind its samples, no raw sample older than a
    // compaction run would leave raw (COMPACT_AGE_S).
    const settle0 = performance.now();
    let evaluatedS = NaN;
    while (performance.now() - settle0 < SETTLE_LIMIT_S * 1000) {
      const l = await evaluationLag(client);
      const evaluated = l.backlog.length > 0 && l.backlog.every((b) => b <= 0);
      if (evaluated && Number.isNaN(evaluatedS)) evaluatedS = (performance.now() - settle0) / 1000;
      if (evaluated && (await rawOlderThan(client, COMPACT_AGE_S)) === 0) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    console.log(
      `bench: evaluation of the history settled in ${evaluatedS.toFixed(1)} s, its compaction in ${((performance.now() - settle0) / 1000).toFixed(1)} s`,
    );
    const before = await dbFigures(client);
    agentsProcess.send("go");
    const { endsAt: end } = await next("measuring", 30);
    const lag = { backlog: [] as number[], wait: [] as number[], age: [] as number[], polls: 0 };
    const lagPoller = (async () => {
      while (Date.now() < end) {
        await new Promise((r) => setTimeout(r, LAG_POLL_MS));
        const l = await evaluationLag(client);
        lag.backlog.push(...l.backlog);
        lag.wait.push(...l.wait);
        lag.age.push(...l.age);
        lag.polls++;
      }
    })();
    // The agents' process exits by itself 60 s after the end (ingest-agents.ts); 90 s is the backstop.
    const { stats }: { stats: AgentsStats } = await next("done", DURATION_S + 90);
    const { offeredS, wallS } = stats;
    await exited;
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
    // Compaction keeps up when nothing older than the age a run leaves raw is still raw.
    const compactBacklog = await rawOlderThan(client, COMPACT_AGE_S);
    const findings = await client.query<{ status: string; n: string }>(
      "SELECT status::text, count(*)::text AS n FROM findings GROUP BY status ORDER BY status",
    );

    const lat = [...stats.latencies].sort((a, b) => a - b);
    const errors = stats.errors.reduce((a, [, n]) => a + n, 0);
    const dRows = after.rows - before.rows;
    const dDb = after.db - before.db;
    const dTbl = after.tbl - before.tbl;
    const perRow = dRows > 0 ? dTbl / dRows : NaN;
    const rowsPerHour = dRows * (3600 / wallS);
    console.log(
      `bench: console ingest, ${agents} agents x 1 sample/s, ${DURATION_S} s real time (not compressed)`,
    );
    console.log(
      `  batches: ${stats.batches} in ${wallS.toFixed(1)} s (offered for ${offeredS.toFixed(1)} s) = ${(stats.batches / wallS).toFixed(1)} batches/s; samples ${stats.samples} (${(stats.samples / wallS).toFixed(1)}/s), accepted ${stats.accepted}, largest batch ${stats.maxBatch}; batch interval asked by the console ${stats.maxBatchIntervalMs > 0 ? `up to ${stats.maxBatchIntervalMs} ms` : "none (one sample per batch)"}`,
    );
    console.log(
      `  latency (client, POST /api/v1/agent/observations, the answered attempt): p50 ${pct(lat, 0.5).toFixed(0)} ms, p95 ${pct(lat, 0.95).toFixed(0)} ms, p99 ${pct(lat, 0.99).toFixed(0)} ms, max ${(lat.at(-1) ?? NaN).toFixed(0)} ms (agents' process event-loop delay p99 ${stats.loopDelayP99Ms.toFixed(0)} ms)`,
    );
    console.log(
      `  errors: ${errors}; 503 busy answers (kept and sent again after the agent's backoff, at least Retry-After): ${stats.busy}; /agent/desired fetches: ${stats.desiredFetches}${stats.undrained > 0 ? `; ${stats.undrained} agents still held ${stats.undrainedSamples} samples 30 s after the measured phase` : ""}`,
    );
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
    const wait = [...lag.wait].sort((a, b) => a - b);
    const age = [...lag.age].sort((a, b) => a - b);
    const s1 = (ms: number) => (ms / 1000).toFixed(1);
    console.log(
      `  evaluation lag (${lag.polls} polls x hosts with open findings, ${backlog.length} readings): wait (accepted -> evaluated) p50 ${s1(pct(wait, 0.5))} s, p95 ${s1(pct(wait, 0.95))} s, max ${s1(wait.at(-1) ?? NaN)} s; backlog p50 ${s1(pct(backlog, 0.5))} s, p95 ${s1(pct(backlog, 0.95))} s, max ${s1(backlog.at(-1) ?? NaN)} s; age (sample -> evaluated) p50 ${s1(pct(age, 0.5))} s, p95 ${s1(pct(age, 0.95))} s, max ${s1(age.at(-1) ?? NaN)} s; drain after the agents stopped ${Number.isNaN(drainS) ? "> 120" : drainS.toFixed(1)} s`,
    );
    console.log(
      `  compaction: ${compactBacklog} raw samples older than ${COMPACT_AGE_S} s (what a run leaves raw at most) after the drain; 0 means it kept up`,
    );
    console.log(`  findings: ${findings.rows.map((r) => `${r.status} ${r.n}`).join(", ") || "none"}`);
    console.log(
      `  telemetry tables (raw samples, chunks, rollups): ${before.rows} -> ${after.rows} samples (+${dRows}); with indexes ${mb(before.tbl)} -> ${mb(after.tbl)} (+${mb(dTbl)}, ${perRow.toFixed(0)} B/sample while most are still raw)`,
    );
    console.log(
      `  pg_database_size: ${mb(before.db)} -> ${mb(after.db)} (+${mb(dDb)}) => ~${gb(dDb * (3600 / wallS))}/hour extrapolated (${(rowsPerHour / 1e6).toFixed(2)} M samples/hour); bytes per sample once compacted: bench/telemetry-storage.bench.ts`,
    );
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await client.end().catch(() => undefined);
    await stack.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
