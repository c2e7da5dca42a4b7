/**
 * Hardening under load, against the same kind of stack as the e2e tests (a throwaway PostgreSQL
 * cluster, migrated and seeded with the demo fleet, and the console's production build via
 * `next start`). Two phases:
 *
 * A. Reads under a sign-in flood. READS authenticated reads (default 2,000) at READ_CONCURRENCY
 *    (default 20), round-robin over GET /api/v1/pools, GET /api/v1/fleet and GET /api/health, with
 *    an API token of scope "read" made over REST (POST /api/v1/tokens as the signed-in admin):
 *      1. baseline, nothing else running (after a short unmeasured warm-up);
 *      2. the same reads while FLOOD_WORKERS (default 40) workers post wrong passwords to
 *         POST /api/auth/sign-in without pause: each worker sends as one of FLOOD_SOURCES fake
 *         addresses (X-Forwarded-For, whose last entry the console takes as the source) and
 *         alternates the real admin's email with unknown ones, so the password check runs (scrypt,
 *         or the dummy hash for an unknown email) until the per-account throttle (admin) and the
 *         per-source throttle (every flood address) refuse before hashing.
 *    Prints count, errors (non-2xx or no answer), p50/p99/max for each, the flood/baseline ratios
 *    of p50 and p99, /api/health alone under the flood, and the flood's answers by status (429s
 *    split into "throttled" and "busy hashing"). Then, with the flood stopped: the admin's right
 *    password from the address it signed in from at the start (known-good for the account, so the
 *    flood's addresses cannot lock it out: expect 200; a 429's Retry-After is the lockout left), and
 *    another user's right password from a clean address and from a flooded one (who else is
 *    locked out). TIDE_BENCH_HARDENING_LOCKOUT_WAIT_S (default 0) waits up to that long for the
 *    admin's lockout to end and signs in again.
 *      3. the same reads while the same flood comes from an untrusted peer (the bench's requests
 *         from FORGED_PEER, 127.0.0.2, where the console trusts only 127.0.0.1 as a proxy) that
 *         forges a new X-Forwarded-For on every request (issue 27: 40 of 40 such guesses were
 *         checked). Prints reads as above, the flood's answers, and how many passwords were
 *         checked during it under which source: all should be FORGED_PEER's, and at most its
 *         free failures plus what its backoff lets through.
 *    The console runs as installed (`tide-console serve`, which hands the socket's peer to the
 *    sign-in throttle) with TIDE_TRUSTED_PROXIES=127.0.0.1: the bench's own requests act as a
 *    reverse proxy on this host, so the X-Forwarded-For sources of step 2 are believed.
 *
 * B. AGENTS (default 20) agents replaying MINUTES (default 10) of 1 s samples at once, as after a
 *    console outage: each has its own host token (POST /api/v1/host-tokens), 600 samples ending
 *    just before the start (inside the console's 60 min retention), and sends them as
 *    apps/agent/src/console/console-link.ts flush() does: hello, then batches of at most
 *    OBSERVATION_BATCH_MAX samples and BATCH_MAX_BYTES bytes (boundedBatch), replayed: true, a
 *    10 s limit per call, GET /agent/desired when the reply's revision moves; a failed call
 *    (timeout, no answer, 5xx, 401/403/404/408/429) backs off (backoffMs) and retries hello and
 *    the same batch; any other 4xx splits the batch down to the refused sample, which is dropped.
 *    (The real agent also keeps sampling meanwhile; here only the backlog is sent.)
 *    Prints batches, timeouts, errors by status, per-batch latency p50/p99/max, the wall time
 *    until every agent has delivered everything, samples the console refused by reason, and
 *    checks in PostgreSQL that every host stored all its samples: any sample missing is printed
 *    and the bench exits non-zero (a correctness check; nothing here asserts on time).
 *
 * Run: npm run -w @tide/e2e bench (all benches), or just this one:
 *   cd e2e && node --import tsx bench/hardening-load.bench.ts
 * Env: TIDE_BENCH_HARDENING_SKIP=1 (skip), TIDE_BENCH_HARDENING_READS, _READ_CONCURRENCY,
 * _FLOOD_WORKERS, _FLOOD_SOURCES, _AGENTS, _MINUTES, _LOCKOUT_WAIT_S (all TIDE_BENCH_HARDENING_…),
 * TIDE_BENCH_CONSOLE_DIR (a built copy of apps/console to run instead of apps/console).
 */
import { OBSERVATION_BATCH_MAX, type AgentObservationsIn, type Observation } from "@tide/contracts";
import { startBenchStack, type BenchStack } from "./bench-stack";
import { dataPlane, observation } from "./synthetic-observations";
import { backoffMs, BATCH_MAX_BYTES, boundedBatch, jsonBytes } from "@tide/agent";
import { ADMIN_EMAIL, CONSOLE_DIR } from "../support/stack";
import http from "node:http";
import pg from "pg";
import { TIDE_VERSION } from "../support/tide-version";

const knob = (name: string, dflt: number) => Number(process.env[`TIDE_BENCH_HARDENING_${name}`] ?? dflt);
const READS = knob("READS", 2000);
const READ_CONCURRENCY = knob("READ_CONCURRENCY", 20);
const FLOOD_WORKERS = knob("FLOOD_WORKERS", 40);
const FLOOD_SOURCES = knob("FLOOD_SOURCES", 8);
const AGENTS = knob("AGENTS", 20);
const MINUTES = knob("MINUTES", 10);
const LOCKOUT_WAIT_S = knob("LOCKOUT_WAIT_S", 0);
const RETENTION_MIN = 60; // TIDE_OBSERVATION_RETENTION_MINUTES default: older samples are refused
const REQUEST_TIMEOUT_MS = 10_000; // as console-link.ts
const READ_PATHS = ["/api/v1/pools", "/api/v1/fleet", "/api/health"];
const BENCH_CONSOLE_DIR = process.env.TIDE_BENCH_CONSOLE_DIR ?? CONSOLE_DIR;
/** The console believes X-Forwarded-For from this address only (TIDE_TRUSTED_PROXIES). */
const TRUSTED_PROXY = "127.0.0.1";
/** Another loopback address the forging flood connects from: a peer the console does not trust. */
const FORGED_PEER = "127.0.0.2";

// ---------------------------------------------------------------------------------------------------
// Helpers

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const pct = (sorted: number[], q: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
const ms = (x: number) => `${x.toFixed(0)} ms`;
const bump = (m: Map<string, number>, k: string, n = 1) => m.set(k, (m.get(k) ?? 0) + n);
const counts = (m: Map<string, number>) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(", ") || "none";

/** Why a fetch failed, without any token in it. */
function failure(err: unknown): string {
  const e = err as { name?: string; cause?: { code?: string }; message?: string };
  if (e.name === "TimeoutError" || e.name === "AbortError") return "timeout";
  return (e.cause?.code ?? e.message ?? String(err)).replace(/tide_\w+/g, "[token]").slice(0, 80);
}

async function pool<T>(items: T[], width: number, fn: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

interface Api {
  baseURL: string;
  cookie: string;
}

/** POST JSON as the signed-in admin; the reply's JSON, or throws with the status. */
async function adminPost<T>(api: Api, p: string, body: unknown): Promise<T> {
  const res = await fetch(`${api.baseURL}${p}`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie: api.cookie },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`POST ${p}: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`);
  return (await res.json()) as T;
}

/** One sign-in attempt: status, Retry-After, the error code/message, the session cookie. */
async function signIn(baseURL: string, email: string, password: string, source?: string) {
  const res = await fetch(`${baseURL}/api/auth/sign-in`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(source ? { "x-forwarded-for": source } : {}) },
    body: JSON.stringify({ email, password }),
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await res.json().catch(() => ({}))) as { message?: string };
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  return { status: res.status, retryAfter: res.headers.get("retry-after"), message: body.message, cookie };
}

/**
 * One sign-in attempt over a connection from `localAddress` (fetch cannot choose it), with
 * `forwardedFor` as X-Forwarded-For: status and the error message.
 */
function signInFrom(
  baseURL: string,
  email: string,
  password: string,
  localAddress: string,
  forwardedFor: string,
): Promise<{ status: number; message?: string }> {
  const body = JSON.stringify({ email, password });
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${baseURL}/api/auth/sign-in`,
      {
        method: "POST",
        localAddress,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          "x-forwarded-for": forwardedFor,
        },
        timeout: 30_000,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => (text += d));
        res.on("end", () => {
          let message: string | undefined;
          try {
            message = (JSON.parse(text) as { message?: string }).message;
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, message });
        });
      },
    );
    req.on("timeout", () => req.destroy(Object.assign(new Error("timeout"), { name: "TimeoutError" })));
    req.on("error", reject);
    req.end(body);
  });
}

// ---------------------------------------------------------------------------------------------------
// Phase A: reads, and the sign-in flood.

interface ReadRun {
  wallS: number;
  all: number[];
  byPath: Map<string, number[]>;
  errors: Map<string, number>;
}

async function readRun(baseURL: string, token: string, n: number, width: number): Promise<ReadRun> {
  const run: ReadRun = { wallS: 0, all: [], byPath: new Map(), errors: new Map() };
  const t0 = performance.now();
  await pool(
    Array.from({ length: n }, (_, i) => READ_PATHS[i % READ_PATHS.length]!),
    width,
    async (p) => {
      const t = performance.now();
      try {
        const res = await fetch(`${baseURL}${p}`, {
          headers: { authorization: `Bearer ${token}` },
          signal: AbortSignal.timeout(30_000),
        });
        await res.arrayBuffer();
        if (!res.ok) bump(run.errors, `${p} HTTP ${res.status}`);
      } catch (err) {
        bump(run.errors, `${p} ${failure(err)}`);
      }
      const dt = performance.now() - t;
      run.all.push(dt);
      const v = run.byPath.get(p) ?? [];
      v.push(dt);
      run.byPath.set(p, v);
    },
  );
  run.wallS = (performance.now() - t0) / 1000;
  run.all.sort((a, b) => a - b);
  for (const v of run.byPath.values()) v.sort((a, b) => a - b);
  return run;
}

function describeRun(label: string, r: ReadRun): void {
  const errors = [...r.errors.values()].reduce((a, b) => a + b, 0);
  console.log(
    `  ${label}: ${r.all.length} reads in ${r.wallS.toFixed(1)} s (${(r.all.length / r.wallS).toFixed(0)}/s), errors ${errors}; p50 ${ms(pct(r.all, 0.5))}, p99 ${ms(pct(r.all, 0.99))}, max ${ms(r.all.at(-1) ?? NaN)}`,
  );
  for (const [p, v] of r.byPath)
    console.log(
      `    ${p.padEnd(14)} p50 ${ms(pct(v, 0.5))}, p99 ${ms(pct(v, 0.99))}, max ${ms(v.at(-1) ?? NaN)}`,
    );
  for (const [k, n] of r.errors) console.log(`    error: ${n} x ${k}`);
}

interface Flood {
  stop(): Promise<void>;
  answers: Map<string, number>;
  latencies: number[];
  wallS(): number;
}

const floodSource = (w: number) => `198.51.100.${(w % FLOOD_SOURCES) + 1}`;
/** A new address for every request of the forging flood. */
const forgedSource = (w: number, k: number) => `10.${w & 255}.${(k >> 8) & 255}.${k & 255}`;

/**
 * FLOOD_WORKERS workers posting wrong passwords until stop(): from this host (a trusted proxy)
 * naming FLOOD_SOURCES sources, or with `forged`, from FORGED_PEER naming a new source each time.
 */
function startFlood(baseURL: string, forged = false): Flood {
  let running = true;
  const answers = new Map<string, number>();
  const latencies: number[] = [];
  const t0 = performance.now();
  let t1 = NaN;
  const workers = Array.from({ length: FLOOD_WORKERS }, async (_, w) => {
    for (let k = 0; running; k++) {
      const email = k % 2 === 0 ? ADMIN_EMAIL : `nobody-${w}-${k}@flood.example`;
      const t = performance.now();
      try {
        const r = forged
          ? await signInFrom(baseURL, email, `wrong-${w}-${k}`, FORGED_PEER, forgedSource(w, k))
          : await signIn(baseURL, email, `wrong-${w}-${k}`, floodSource(w));
        const kind =
          r.status === 429
            ? /busy/i.test(r.message ?? "")
              ? " busy hashing"
              : " throttled"
            : r.status === 200
              ? " SIGNED IN"
              : "";
        bump(answers, `${r.status}${kind}`);
      } catch (err) {
        bump(answers, failure(err));
      }
      latencies.push(performance.now() - t);
    }
  });
  return {
    answers,
    latencies,
    wallS: () => ((Number.isNaN(t1) ? performance.now() : t1) - t0) / 1000,
    stop: async () => {
      running = false;
      await Promise.all(workers);
      t1 = performance.now();
      latencies.sort((a, b) => a - b);
    },
  };
}

async function phaseA(api: Api, stack: BenchStack, client: pg.Client): Promise<void> {
  const { token } = await adminPost<{ token: string }>(api, "/api/v1/tokens", {
    name: "bench-hardening-reads",
    scopes: ["read"],
  });
  const bystander = await adminPost<{ password: string | null }>(api, "/api/v1/users", {
    email: "bystander@tide.local",
    name: "Bystander",
    role: "viewer",
  });
  await readRun(stack.baseURL, token, 3 * READ_PATHS.length * READ_CONCURRENCY, READ_CONCURRENCY); // warm-up
  const baseline = await readRun(stack.baseURL, token, READS, READ_CONCURRENCY);
  const flood = startFlood(stack.baseURL);
  const flooded = await readRun(stack.baseURL, token, READS, READ_CONCURRENCY);
  await flood.stop();

  console.log(
    `bench: phase A, ${READS} reads at concurrency ${READ_CONCURRENCY} (${READ_PATHS.join(", ")}, API token scope read)`,
  );
  describeRun("baseline", baseline);
  describeRun(
    `under a sign-in flood (${FLOOD_WORKERS} workers, ${FLOOD_SOURCES} X-Forwarded-For sources)`,
    flooded,
  );
  const ratio = (q: number) => (pct(flooded.all, q) / pct(baseline.all, q)).toFixed(2);
  console.log(`  flood/baseline: p50 x${ratio(0.5)}, p99 x${ratio(0.99)}`);
  const health = flooded.byPath.get("/api/health") ?? [];
  console.log(`  /api/health under the flood: p50 ${ms(pct(health, 0.5))}, p99 ${ms(pct(health, 0.99))}`);
  const fl = flood.latencies;
  console.log(
    `  flood: ${fl.length} sign-ins in ${flood.wallS().toFixed(1)} s (${(fl.length / flood.wallS()).toFixed(0)}/s), answer p50 ${ms(pct(fl, 0.5))}, p99 ${ms(pct(fl, 0.99))}, max ${ms(fl.at(-1) ?? NaN)}`,
  );
  console.log(`  flood answers: ${counts(flood.answers)}`);
  const audited = await client.query<{ reason: string; n: string }>(
    `SELECT after ->> 'reason' AS reason, count(*)::text AS n FROM audit_events
      WHERE action = 'session.fail' GROUP BY 1 ORDER BY 1`,
  );
  console.log(
    `  failed sign-ins audited (password checked, then refused): ${audited.rows.map((r) => `${r.reason} ${r.n}`).join(", ") || "none"}`,
  );

  // After the flood: who can sign in with the right password?
  const show = (r: Awaited<ReturnType<typeof signIn>>) =>
    r.status === 200
      ? "200 signed in"
      : `${r.status}${r.retryAfter ? ` (Retry-After ${r.retryAfter} s)` : ""} ${r.message ?? ""}`.trim();
  const admin = await signIn(stack.baseURL, ADMIN_EMAIL, stack.password);
  console.log(`  after the flood, admin, right password, clean address: ${show(admin)}`);
  if (bystander.password) {
    const clean = await signIn(stack.baseURL, "bystander@tide.local", bystander.password);
    const shared = await signIn(stack.baseURL, "bystander@tide.local", bystander.password, floodSource(0));
    console.log(`  another user (never attacked), clean address: ${show(clean)}`);
    console.log(`  another user from a flooded address (${floodSource(0)}): ${show(shared)}`);
  }
  if (admin.status === 429 && LOCKOUT_WAIT_S > 0) {
    const wait = Number(admin.retryAfter ?? 0);
    if (wait <= LOCKOUT_WAIT_S) {
      await sleep((wait + 1) * 1000);
      console.log(
        `  admin after waiting ${wait + 1} s: ${show(await signIn(stack.baseURL, ADMIN_EMAIL, stack.password))}`,
      );
    } else {
      console.log(
        `  admin lockout ${wait} s > TIDE_BENCH_HARDENING_LOCKOUT_WAIT_S=${LOCKOUT_WAIT_S}: not waited`,
      );
    }
  }

  // 3. The same flood from an untrusted peer forging a new X-Forwarded-For each request.
  const checkedBefore = await client.query<{ n: string }>(
    `SELECT count(*)::text AS n FROM audit_events WHERE action = 'session.fail'`,
  );
  const forgedFlood = startFlood(stack.baseURL, true);
  const forgedReads = await readRun(stack.baseURL, token, READS, READ_CONCURRENCY);
  await forgedFlood.stop();
  describeRun(
    `under a forged-header sign-in flood (${FLOOD_WORKERS} workers from ${FORGED_PEER}, a new X-Forwarded-For each request)`,
    forgedReads,
  );
  const forgedRatio = (q: number) => (pct(forgedReads.all, q) / pct(baseline.all, q)).toFixed(2);
  console.log(`  forged flood/baseline: p50 x${forgedRatio(0.5)}, p99 x${forgedRatio(0.99)}`);
  const ff = forgedFlood.latencies;
  console.log(
    `  forged flood: ${ff.length} sign-ins in ${forgedFlood.wallS().toFixed(1)} s (${(ff.length / forgedFlood.wallS()).toFixed(0)}/s), answer p50 ${ms(pct(ff, 0.5))}, p99 ${ms(pct(ff, 0.99))}`,
  );
  console.log(`  forged flood answers: ${counts(forgedFlood.answers)}`);
  const checked = await client.query<{ source: string | null; n: string }>(
    `SELECT after ->> 'source' AS source, count(*)::text AS n FROM audit_events
      WHERE action = 'session.fail' GROUP BY 1 ORDER BY 2 DESC`,
  );
  const total = checked.rows.reduce((a, r) => a + Number(r.n), 0) - Number(checkedBefore.rows[0]?.n ?? 0);
  const peerRow = checked.rows.find((r) => r.source === FORGED_PEER);
  console.log(
    `  passwords checked during the forged flood: ${total} (as source ${FORGED_PEER}: ${peerRow?.n ?? 0} in all; ${checked.rows.length} sources ever audited)`,
  );
  const adminAfter = await signIn(stack.baseURL, ADMIN_EMAIL, stack.password);
  console.log(`  after the forged flood, admin, right password, its usual address: ${show(adminAfter)}`);
}

// ---------------------------------------------------------------------------------------------------
// Phase B: agents replaying a backlog at once, with synthetic-observations.ts's samples of the rules'
// 20 counters a namespace (the phase measures admission of many samples, not their size).

const REPLAY_COUNTERS = 20;

interface ReplayStats {
  batches: number;
  latencies: number[];
  timeouts: number;
  errors: Map<string, number>;
  refused: Map<string, number>;
  dropped: number;
  doneS: number[];
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** One agent's replay, as console-link.ts flush() with its backoff (see the header). */
async function replay(
  baseURL: string,
  hostname: string,
  token: string,
  samples: Observation[],
  stats: ReplayStats,
  t0: number,
): Promise<void> {
  const call = async (method: "GET" | "POST", p: string, body?: unknown): Promise<unknown> => {
    const res = await fetch(`${baseURL}${p}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    if (!res.ok) throw new HttpError(res.status, `HTTP ${res.status} ${(await res.text()).slice(0, 120)}`);
    return res.json();
  };
  const buffer = [...samples];
  let helloDone = false;
  let revision: number | null = null;
  let failures = 0;
  let batchLimit = OBSERVATION_BATCH_MAX;
  while (buffer.length > 0) {
    try {
      if (!helloDone) {
        const r = (await call("POST", "/api/v1/agent/hello", {
          protocolVersion: 1,
          agentVersion: TIDE_VERSION,
          hostname,
          kernelRelease: "6.12.38+deb13-amd64",
          roles: ["proxy"],
          probes: [],
          dataPlane,
        })) as { desired: { revision: number } };
        helloDone = true;
        revision = r.desired.revision;
      }
      const batch = boundedBatch(buffer.slice(0, batchLimit), BATCH_MAX_BYTES, jsonBytes);
      const body: AgentObservationsIn = { observations: batch, dataPlane, replayed: true };
      const t = performance.now();
      let reply: { desiredRevision: number; refused?: { reason: string }[] };
      try {
        reply = (await call("POST", "/api/v1/agent/observations", body)) as typeof reply;
      } catch (err) {
        const s = err instanceof HttpError ? err.status : null;
        if (s === null || s >= 500 || [401, 403, 404, 408, 429].includes(s)) throw err;
        // Refused (other 4xx): halve until the refused sample is alone, then drop it.
        bump(stats.errors, `observations HTTP ${s} (refused)`);
        if (batch.length > 1) batchLimit = Math.ceil(batch.length / 2);
        else {
          buffer.splice(0, 1);
          stats.dropped++;
          batchLimit = OBSERVATION_BATCH_MAX;
        }
        continue;
      }
      stats.latencies.push(performance.now() - t);
      stats.batches++;
      buffer.splice(0, batch.length);
      failures = 0;
      for (const r of reply.refused ?? []) bump(stats.refused, r.reason);
      if (reply.desiredRevision !== revision) {
        revision = ((await call("GET", "/api/v1/agent/desired")) as { revision: number }).revision;
      }
    } catch (err) {
      if (err instanceof HttpError) bump(stats.errors, `HTTP ${err.status}`);
      else {
        const why = failure(err);
        if (why === "timeout") stats.timeouts++;
        else bump(stats.errors, why);
      }
      failures++;
      helloDone = false;
      await sleep(backoffMs(failures));
    }
  }
  stats.doneS.push((performance.now() - t0) / 1000);
}

/** Returns the number of samples lost (expected but not stored). */
async function phaseB(api: Api, stack: BenchStack, client: pg.Client): Promise<number> {
  const perAgent = MINUTES * 60;
  const names = Array.from({ length: AGENTS }, (_, i) => `bench-replay-${String(i).padStart(2, "0")}`);
  const tokens = new Map<string, string>();
  await pool(names, 8, async (hostname) => {
    const r = await adminPost<{ token: string }>(api, "/api/v1/host-tokens", { hostname });
    tokens.set(hostname, r.token);
  });
  const end = Date.now() - 1000;
  const startedAt = new Date(end - 3_600_000).toISOString();
  const backlogs = names.map((h, i) =>
    Array.from({ length: perAgent }, (_, s) =>
      observation(h, i, new Date(end - (perAgent - 1 - s) * 1000), startedAt, REPLAY_COUNTERS),
    ),
  );
  const bytes = jsonBytes(backlogs[0]);
  const stats: ReplayStats = {
    batches: 0,
    latencies: [],
    timeouts: 0,
    errors: new Map(),
    refused: new Map(),
    dropped: 0,
    doneS: [],
  };
  const t0 = performance.now();
  await Promise.all(names.map((h, i) => replay(stack.baseURL, h, tokens.get(h)!, backlogs[i]!, stats, t0)));
  const wallS = (performance.now() - t0) / 1000;

  const stored = await client.query<{ name: string; n: number }>(
    `SELECT h.name, count(o.id)::int AS n FROM hosts h
       LEFT JOIN observation_samples o
         ON o.host_id = h.id AND o.sampled_at >= $2::timestamptz AND o.sampled_at <= $3::timestamptz
      WHERE h.name = ANY($1::text[]) GROUP BY h.name`,
    [names, new Date(end - (perAgent - 1) * 1000).toISOString(), new Date(end).toISOString()],
  );
  const byHost = new Map(stored.rows.map((r) => [r.name, r.n]));
  let lost = 0;
  const short: string[] = [];
  for (const h of names) {
    const n = byHost.get(h) ?? 0;
    if (n !== perAgent) short.push(`${h} ${n}/${perAgent}`);
    lost += Math.max(0, perAgent - n);
  }

  const lat = [...stats.latencies].sort((a, b) => a - b);
  const errors = [...stats.errors.values()].reduce((a, b) => a + b, 0);
  const done = [...stats.doneS].sort((a, b) => a - b);
  console.log(
    `bench: phase B, ${AGENTS} agents replaying ${MINUTES} min at once (${perAgent} samples each, ${(bytes / perAgent / 1024).toFixed(1)} KiB/sample, batches <= ${OBSERVATION_BATCH_MAX} samples and ${BATCH_MAX_BYTES / 1024 / 1024} MiB)`,
  );
  console.log(
    `  batches delivered: ${stats.batches}; timeouts (${REQUEST_TIMEOUT_MS / 1000} s): ${stats.timeouts}; other errors: ${errors}${errors > 0 ? ` (${counts(stats.errors)})` : ""}`,
  );
  console.log(
    `  per-batch latency (delivered): p50 ${ms(pct(lat, 0.5))}, p99 ${ms(pct(lat, 0.99))}, max ${ms(lat.at(-1) ?? NaN)}`,
  );
  console.log(
    `  wall time until every agent delivered everything: ${wallS.toFixed(1)} s (first agent done ${(done[0] ?? NaN).toFixed(1)} s, median ${pct(done, 0.5).toFixed(1)} s)`,
  );
  console.log(
    `  samples the console did not store, by reason (duplicates follow a retried batch): ${counts(stats.refused)}; dropped by the agent: ${stats.dropped}`,
  );
  if (stats.timeouts + errors > 0) {
    const lines = stack
      .log()
      .split("\n")
      .filter((l) => /error|timed out|timeout/i.test(l))
      .map((l) => l.trim().slice(0, 200));
    for (const l of [...new Set(lines)].slice(0, 5)) console.log(`    console log: ${l}`);
  }
  if (lost > 0) {
    console.log(`  !!! SAMPLES LOST: ${lost} of ${AGENTS * perAgent} not stored: ${short.join(", ")}`);
  } else {
    console.log(`  nothing lost: every host stored ${perAgent}/${perAgent} samples (PostgreSQL)`);
  }
  return lost;
}

// ---------------------------------------------------------------------------------------------------

async function main() {
  if (process.env.TIDE_BENCH_HARDENING_SKIP === "1") {
    console.log("bench: hardening skipped (TIDE_BENCH_HARDENING_SKIP=1)");
    return;
  }
  if (MINUTES * 60 >= RETENTION_MIN * 60 - 60) {
    throw new Error(`bench: TIDE_BENCH_HARDENING_MINUTES must be under the ${RETENTION_MIN} min retention`);
  }
  const stack = await startBenchStack({
    name: "hardening",
    consoleDir: BENCH_CONSOLE_DIR,
    seedEnv: { TIDE_SEED_DEMO: "1" },
    server: "serve",
    consoleEnv: { TIDE_TRUSTED_PROXIES: TRUSTED_PROXY },
  });
  const client = new pg.Client({ connectionString: stack.dbUrl });
  try {
    await client.connect();
    const admin = await signIn(stack.baseURL, ADMIN_EMAIL, stack.password);
    if (admin.status !== 200) throw new Error(`sign-in: HTTP ${admin.status} ${admin.message ?? ""}`);
    const api: Api = { baseURL: stack.baseURL, cookie: admin.cookie };
    // The admin session made here serves phase B too: the flood locks the admin's sign-in out.
    await phaseA(api, stack, client);
    const lost = await phaseB(api, stack, client);
    if (lost > 0) process.exitCode = 1;
  } finally {
    await client.end().catch(() => undefined);
    await stack.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
