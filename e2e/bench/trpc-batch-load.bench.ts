/**
 * tRPC batches under load (issue 27 item 6), against the same kind of stack as the e2e tests (a
 * throwaway PostgreSQL cluster, migrated and seeded with the demo fleet, and the console's
 * production build via `next start`).
 *
 * Two API tokens of scope "read" (made over REST as the signed-in admin): "flood" and "bystander".
 *   1. baseline: the bystander reads GET /api/v1/pools, BYSTANDER_CONCURRENCY (default 2) at a
 *      time, BYSTANDER_READS (default 200) reads, nothing else running (after a short warm-up);
 *   2. the same reads while the flood runs: FLOOD_BATCHES (default 40) workers each send GET
 *      /api/trpc batches of BATCH_CALLS (default 50, the most a batch may hold) reads
 *      (pools.list, fleet.overview, pools.get in turn) with the flood token, back to back, until
 *      the bystander's reads are done; the first round is 40 batches at once, as in the issue.
 * Prints, per phase: the bystander's reads (count, errors by status, p50/p99/max) and the
 * flood/baseline ratios; the flood's calls by status and error code (500 must not appear; 503
 * busy is the caller's line refusing, and must carry Retry-After), batches answered, and the
 * batch latency p50/p99. Timings are printed, never asserted; the bench exits non-zero only if a
 * call answered 500 or a 503 came without Retry-After (a correctness check).
 *
 * Run: npm run -w @tide/e2e bench (all benches), or just this one:
 *   cd e2e && node --import tsx bench/trpc-batch-load.bench.ts
 * Env (all TIDE_BENCH_TRPC_…): _SKIP=1, _FLOOD_BATCHES, _BATCH_CALLS, _BYSTANDER_READS,
 * _BYSTANDER_CONCURRENCY; TIDE_BENCH_CONSOLE_DIR (a built copy of apps/console to run instead).
 */
import { startBenchStack } from "./bench-stack";
import { ADMIN_EMAIL, CONSOLE_DIR } from "../support/stack";

const knob = (name: string, dflt: number) => Number(process.env[`TIDE_BENCH_TRPC_${name}`] ?? dflt);
const FLOOD_BATCHES = knob("FLOOD_BATCHES", 40);
const BATCH_CALLS = knob("BATCH_CALLS", 50);
const BYSTANDER_READS = knob("BYSTANDER_READS", 200);
const BYSTANDER_CONCURRENCY = knob("BYSTANDER_CONCURRENCY", 2);
const BENCH_CONSOLE_DIR = process.env.TIDE_BENCH_CONSOLE_DIR ?? CONSOLE_DIR;
const REQUEST_TIMEOUT_MS = 60_000;

const pct = (sorted: number[], q: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
const ms = (x: number) => `${x.toFixed(0)} ms`;
const bump = (m: Map<string, number>, k: string, n = 1) => m.set(k, (m.get(k) ?? 0) + n);
const counts = (m: Map<string, number>) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(", ") || "none";

function failure(err: unknown): string {
  const e = err as { name?: string; cause?: { code?: string }; message?: string };
  if (e.name === "TimeoutError" || e.name === "AbortError") return "timeout";
  return (e.cause?.code ?? e.message ?? String(err)).replace(/tide_\w+/g, "[token]").slice(0, 80);
}

interface Reads {
  latencies: number[];
  errors: Map<string, number>;
}

/** The bystander's reads: `n` GET /api/v1/pools, `width` at a time. */
async function bystanderReads(baseURL: string, token: string, n: number, width: number): Promise<Reads> {
  const r: Reads = { latencies: [], errors: new Map() };
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next++ < n) {
        const t = performance.now();
        try {
          const res = await fetch(`${baseURL}/api/v1/pools`, {
            headers: { authorization: `Bearer ${token}` },
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          });
          await res.arrayBuffer();
          if (!res.ok) bump(r.errors, `HTTP ${res.status}`);
        } catch (err) {
          bump(r.errors, failure(err));
        }
        r.latencies.push(performance.now() - t);
      }
    }),
  );
  r.latencies.sort((a, b) => a - b);
  return r;
}

function describeReads(label: string, r: Reads): void {
  const errors = [...r.errors.values()].reduce((a, b) => a + b, 0);
  const l = r.latencies;
  console.log(
    `  ${label}: ${l.length} reads, errors ${errors}${errors ? ` (${counts(r.errors)})` : ""}; p50 ${ms(pct(l, 0.5))}, p99 ${ms(pct(l, 0.99))}, max ${ms(l.at(-1) ?? NaN)}`,
  );
}

interface Flood {
  calls: Map<string, number>;
  batchStatuses: Map<string, number>;
  batchLatencies: number[];
  busyWithoutRetryAfter: number;
  stop(): Promise<void>;
}

type Entry = { result?: unknown; error?: { data?: { httpStatus?: number; tideCode?: string } } };

/** FLOOD_BATCHES workers sending BATCH_CALLS-call batches back to back until stop(). */
function startFlood(baseURL: string, token: string, poolId: string): Flood {
  const paths = Array.from(
    { length: BATCH_CALLS },
    (_, i) => ["pools.list", "fleet.overview", "pools.get"][i % 3]!,
  );
  const input = Object.fromEntries(
    paths.map((p, i) => [String(i), p === "pools.get" ? { poolId } : undefined]),
  );
  const url = `${baseURL}/api/trpc/${paths.join(",")}?batch=1&input=${encodeURIComponent(JSON.stringify(input))}`;
  let running = true;
  const f: Flood = {
    calls: new Map(),
    batchStatuses: new Map(),
    batchLatencies: [],
    busyWithoutRetryAfter: 0,
    stop: async () => {
      running = false;
      await Promise.all(workers);
      f.batchLatencies.sort((a, b) => a - b);
    },
  };
  const workers = Array.from({ length: FLOOD_BATCHES }, async () => {
    while (running) {
      const t = performance.now();
      try {
        const res = await fetch(url, {
          headers: { authorization: `Bearer ${token}` },
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        const text = await res.text();
        bump(f.batchStatuses, `HTTP ${res.status}`);
        let body: Entry | Entry[];
        try {
          body = JSON.parse(text) as Entry | Entry[];
        } catch {
          bump(f.calls, `${res.status} (body not JSON: ${text.length} bytes)`, BATCH_CALLS);
          continue;
        }
        const entries = Array.isArray(body) ? body : Array<Entry>(BATCH_CALLS).fill(body);
        for (const e of entries) {
          const status = e.error ? (e.error.data?.httpStatus ?? res.status) : 200;
          bump(f.calls, e.error ? `${status} ${e.error.data?.tideCode ?? "?"}` : "200");
          if (status === 503 && !res.headers.get("retry-after")) f.busyWithoutRetryAfter++;
        }
      } catch (err) {
        bump(f.calls, failure(err), BATCH_CALLS);
      } finally {
        f.batchLatencies.push(performance.now() - t);
      }
    }
  });
  return f;
}

async function main() {
  if (process.env.TIDE_BENCH_TRPC_SKIP === "1") {
    console.log("bench: tRPC batches skipped (TIDE_BENCH_TRPC_SKIP=1)");
    return;
  }
  const stack = await startBenchStack({
    name: "trpc-batches",
    consoleDir: BENCH_CONSOLE_DIR,
    seedEnv: { TIDE_SEED_DEMO: "1" },
  });
  try {
    const signIn = await fetch(`${stack.baseURL}/api/auth/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: ADMIN_EMAIL, password: stack.password }),
    });
    if (signIn.status !== 200) throw new Error(`sign-in: HTTP ${signIn.status}`);
    const cookie = signIn.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    const token = async (name: string) => {
      const res = await fetch(`${stack.baseURL}/api/v1/tokens`, {
        method: "POST",
        headers: { "content-type": "application/json", cookie },
        body: JSON.stringify({ name, scopes: ["read"] }),
      });
      if (!res.ok) throw new Error(`POST /api/v1/tokens: HTTP ${res.status}`);
      return ((await res.json()) as { token: string }).token;
    };
    const floodToken = await token("bench-trpc-flood");
    const bystanderToken = await token("bench-trpc-bystander");
    const pools = (await (
      await fetch(`${stack.baseURL}/api/v1/pools`, { headers: { authorization: `Bearer ${bystanderToken}` } })
    ).json()) as { id: string }[];
    const poolId = pools[0]!.id;

    await bystanderReads(stack.baseURL, bystanderToken, 40, BYSTANDER_CONCURRENCY); // warm-up
    const baseline = await bystanderReads(
      stack.baseURL,
      bystanderToken,
      BYSTANDER_READS,
      BYSTANDER_CONCURRENCY,
    );
    const t0 = performance.now();
    const flood = startFlood(stack.baseURL, floodToken, poolId);
    const during = await bystanderReads(
      stack.baseURL,
      bystanderToken,
      BYSTANDER_READS,
      BYSTANDER_CONCURRENCY,
    );
    await flood.stop();
    const wallS = (performance.now() - t0) / 1000;

    console.log(
      `bench: tRPC batches, ${FLOOD_BATCHES} parallel ${BATCH_CALLS}-call batches from one read token, back to back, while another read token reads GET /api/v1/pools ${BYSTANDER_CONCURRENCY} at a time`,
    );
    describeReads("bystander, baseline", baseline);
    describeReads("bystander, during the flood", during);
    const ratio = (q: number) => (pct(during.latencies, q) / pct(baseline.latencies, q)).toFixed(1);
    console.log(`  during/baseline: p50 x${ratio(0.5)}, p99 x${ratio(0.99)}`);
    const calls = [...flood.calls.values()].reduce((a, b) => a + b, 0);
    const bl = flood.batchLatencies;
    console.log(
      `  flood: ${bl.length} batches (${calls} calls) in ${wallS.toFixed(1)} s; batch answered p50 ${ms(pct(bl, 0.5))}, p99 ${ms(pct(bl, 0.99))}, max ${ms(bl.at(-1) ?? NaN)}`,
    );
    console.log(`  flood batches by HTTP status: ${counts(flood.batchStatuses)}`);
    console.log(`  flood calls by status: ${counts(flood.calls)}`);
    const internal = [...flood.calls].filter(([k]) => /^500\b/.test(k)).reduce((a, [, n]) => a + n, 0);
    console.log(
      `  calls answered 500: ${internal}; 503 without Retry-After: ${flood.busyWithoutRetryAfter}${internal + flood.busyWithoutRetryAfter > 0 ? "  !!!" : ""}`,
    );
    if (internal + flood.busyWithoutRetryAfter > 0) {
      for (const l of [
        ...new Set(
          stack
            .log()
            .split("\n")
            .filter((x) => /error|failed/i.test(x)),
        ),
      ].slice(0, 5))
        console.log(`    console log: ${l.trim().slice(0, 200)}`);
      process.exitCode = 1;
    }
  } finally {
    await stack.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
