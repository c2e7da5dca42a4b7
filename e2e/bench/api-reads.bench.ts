/**
 * API reads under concurrency (issue 28 item 1): GET /api/v1/pools and GET /api/v1/me with one read
 * token at concurrency 1, 5, 20 and 50, while agents report every second, and the console's CPU with
 * those agents alone (idle: nobody reading).
 *
 * Two ways to run it:
 *   - self-contained (default): a throwaway PostgreSQL cluster, migrated and seeded with the demo
 *     fleet, the console's production server (`tide-console serve`, bench-stack.ts), and AGENTS
 *     (default 5) simulated agents in their own process (ingest-agents.ts: hello, then one sample a
 *     second each, as apps/agent does), so the reads compete with ingest as in the lab;
 *   - against a running console (the live lab of `npm run up`): TIDE_BENCH_API_URL=http://… and
 *     TIDE_BENCH_API_TOKEN=tide_… (a read token); then no stack is started and the console's CPU
 *     is read from TIDE_BENCH_API_PID when given (its process group).
 *
 * For each endpoint and concurrency: WARM_S of warm-up (not counted), then LEVEL_S seconds of
 * `concurrency` clients each sending its next request as soon as the last one was answered (closed
 * loop, keep-alive). Prints req/s, p50/p99/max, errors by status (a 503 busy must carry
 * Retry-After), and the console's CPU (% of one core, its whole process group, from /proc) over the
 * level. Timings are printed, never asserted; the bench exits non-zero only for a 500 or a 503
 * without Retry-After (correctness).
 *
 * Run: npm run -w @tide/e2e bench (all benches), or just this one:
 *   cd e2e && node --import tsx bench/api-reads.bench.ts
 * Env (TIDE_BENCH_API_…): _SKIP=1, _PATHS (default "/api/v1/pools,/api/v1/me"), _LEVELS (default "1,5,20,50"), _LEVEL_S (default 8), _WARM_S
 * (default 2), _SETTLE_S (default 130), _IDLE_S (default 60), _AGENTS (default 5); TIDE_BENCH_CONSOLE_DIR (a built copy of
 * apps/console to run instead); TIDE_BENCH_CONSOLE_CPU_PROF=<dir> (a CPU profile of the console);
 * TIDE_BENCH_CONSOLE_NODE_ARGS="--flag …" (node options of the console alone, e.g. V8's GC settings).
 */
import { fork, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { startBenchStack, type BenchStack } from "./bench-stack";
import type { AgentsJob, AgentsMessage } from "./ingest-agents";
import { ADMIN_EMAIL, CONSOLE_DIR } from "../support/stack";

const knob = (name: string, dflt: string) => process.env[`TIDE_BENCH_API_${name}`] ?? dflt;
const LEVELS = knob("LEVELS", "1,5,20,50").split(",").map(Number);
const LEVEL_S = Number(knob("LEVEL_S", "8"));
const WARM_S = Number(knob("WARM_S", "2"));
const IDLE_S = Number(knob("IDLE_S", "60"));
/**
 * Seconds between the agents' start and the idle measurement: the console's start-up work (its
 * first evaluations, JIT) and the seeded versions' change windows (the change reporter follows each
 * until its directors served it, at most 120 s: change-report.plan.ts MAX_WINDOW_MS) are not what an idle console costs.
 */
const SETTLE_S = Number(knob("SETTLE_S", "130"));
const AGENTS = Number(knob("AGENTS", "5"));
const PATHS = knob("PATHS", "/api/v1/pools,/api/v1/me").split(",");
const REQUEST_TIMEOUT_MS = 30_000;
const CLK_TCK = 100; // USER_HZ: /proc/<pid>/stat's utime and stime unit, 1/100 s on Linux

const pct = (sorted: number[], q: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);

/** CPU seconds (user + system) used so far by every process of process group `pgid`. */
function groupCpuS(pgid: number): number {
  let ticks = 0;
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${d}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    // Fields after the command's closing parenthesis: state(3) ppid(4) pgrp(5) … utime(14) stime(15).
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(f[2]) !== pgid) continue;
    ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks / CLK_TCK;
}

interface Level {
  latencies: number[];
  errors: Map<string, number>;
  statuses500: number;
  busyWithoutRetryAfter: number;
  seconds: number;
  cpuPct: number;
}

function failure(err: unknown): string {
  const e = err as { name?: string; cause?: { code?: string }; message?: string };
  if (e.name === "TimeoutError" || e.name === "AbortError") return "timeout";
  return (e.cause?.code ?? e.message ?? String(err)).replace(/tide_\w+/g, "[token]").slice(0, 80);
}

/** `width` closed-loop clients on `url` for `seconds` (after `warmS` not counted). */
async function level(
  url: string,
  token: string,
  width: number,
  seconds: number,
  warmS: number,
  pgid: number | null,
): Promise<Level> {
  const r: Level = {
    latencies: [],
    errors: new Map(),
    statuses500: 0,
    busyWithoutRetryAfter: 0,
    seconds,
    cpuPct: NaN,
  };
  const t0 = performance.now();
  const measureFrom = t0 + warmS * 1000;
  const end = measureFrom + seconds * 1000;
  let cpu0 = NaN;
  const cpuStart = setTimeout(() => {
    if (pgid !== null) cpu0 = groupCpuS(pgid);
  }, warmS * 1000);
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (;;) {
        const t = performance.now();
        if (t >= end) return;
        const counted = t >= measureFrom;
        try {
          const res = await fetch(url, {
            headers: { authorization: `Bearer ${token}` },
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          });
          await res.arrayBuffer();
          if (!counted) continue;
          if (!res.ok) {
            bump(r.errors, `HTTP ${res.status}`);
            if (res.status >= 500 && res.status !== 503) r.statuses500++;
            if (res.status === 503 && !res.headers.get("retry-after")) r.busyWithoutRetryAfter++;
          }
        } catch (err) {
          if (!counted) continue;
          bump(r.errors, failure(err));
        }
        r.latencies.push(performance.now() - t);
      }
    }),
  );
  clearTimeout(cpuStart);
  if (pgid !== null && !Number.isNaN(cpu0)) {
    const wall = (performance.now() - measureFrom) / 1000;
    r.cpuPct = ((groupCpuS(pgid) - cpu0) / wall) * 100;
    r.seconds = wall;
  }
  r.latencies.sort((a, b) => a - b);
  return r;
}

async function signInCookie(baseURL: string, password: string): Promise<string> {
  const res = await fetch(`${baseURL}/api/auth/sign-in`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: ADMIN_EMAIL, password }),
  });
  if (!res.ok) throw new Error(`sign-in: HTTP ${res.status}`);
  return res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
}

async function post(baseURL: string, path: string, cookie: string, body: unknown): Promise<unknown> {
  const res = await fetch(`${baseURL}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`POST ${path}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}

/** AGENTS simulated agents reporting every second for `durationS`, in their own process. */
async function startAgents(
  baseURL: string,
  cookie: string,
  durationS: number,
): Promise<{ child: ChildProcess; stop(): void }> {
  const agents: AgentsJob["agents"] = [];
  for (let i = 0; i < AGENTS; i++) {
    const hostname = `bench-reads-${i}`;
    const { token } = (await post(baseURL, "/api/v1/host-tokens", cookie, { hostname })) as {
      token: string;
    };
    agents.push({ hostname, token });
  }
  const child = fork(fileURLToPath(new URL("./ingest-agents.ts", import.meta.url)), [], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const warm = new Promise<void>((resolve, reject) => {
    child.on("message", (m: AgentsMessage) => {
      if (m.type === "warm") resolve();
    });
    child.once("exit", (code) => reject(new Error(`bench: the agents' process exited (${code})`)));
  });
  child.send({ baseURL, agents, historyS: 10, durationS } satisfies AgentsJob);
  await warm;
  child.send("go");
  return { child, stop: () => child.kill("SIGTERM") };
}

function report(label: string, width: number, l: Level): void {
  const errors = [...l.errors.values()].reduce((a, b) => a + b, 0);
  const n = l.latencies.length;
  const errText = errors ? ` (${[...l.errors].map(([k, v]) => `${k} ${v}`).join(", ")})` : "";
  console.log(
    `  ${label.padEnd(14)} c=${String(width).padStart(2)}: ${(n / l.seconds).toFixed(0).padStart(5)} req/s, p50 ${pct(l.latencies, 0.5).toFixed(1)} ms, p99 ${pct(l.latencies, 0.99).toFixed(1)} ms, max ${(l.latencies.at(-1) ?? NaN).toFixed(0)} ms, errors ${errors}${errText}; console CPU ${Number.isNaN(l.cpuPct) ? "n/a" : `${l.cpuPct.toFixed(0)} %`}`,
  );
}

async function main() {
  if (knob("SKIP", "0") === "1") {
    console.log("bench: API reads skipped (TIDE_BENCH_API_SKIP=1)");
    return;
  }
  let stack: BenchStack | undefined;
  let agents: { stop(): void } | undefined;
  let baseURL = process.env.TIDE_BENCH_API_URL;
  let token = process.env.TIDE_BENCH_API_TOKEN;
  let pgid: number | null = process.env.TIDE_BENCH_API_PID ? Number(process.env.TIDE_BENCH_API_PID) : null;
  let failed = false;
  try {
    if (!baseURL || !token) {
      stack = await startBenchStack({
        name: "api-reads",
        consoleDir: process.env.TIDE_BENCH_CONSOLE_DIR ?? CONSOLE_DIR,
        server: "serve",
        seedEnv: { TIDE_SEED_DEMO: "1" },
      });
      baseURL = stack.baseURL;
      pgid = stack.pid;
      const cookie = await signInCookie(baseURL, stack.password);
      ({ token } = (await post(baseURL, "/api/v1/tokens", cookie, {
        name: "bench-reads",
        scopes: ["read"],
      })) as { token: string });
      const totalS = SETTLE_S + IDLE_S + 2 * LEVELS.length * (LEVEL_S + WARM_S) + 60;
      agents = await startAgents(baseURL, cookie, totalS);
      console.log(`bench: ${AGENTS} simulated agents reporting every second`);
    } else {
      console.log(`bench: against ${baseURL} (a running console; its agents are whatever reports to it)`);
    }
    const pools = await fetch(`${baseURL}/api/v1/pools`, { headers: { authorization: `Bearer ${token}` } });
    const poolsBody = await pools.arrayBuffer();
    console.log(`bench: GET /api/v1/pools answers ${pools.status}, ${poolsBody.byteLength} bytes`);

    if (pgid !== null) {
      console.log(`bench: ${SETTLE_S} s for the console to settle before the idle measurement`);
      await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
      const c0 = groupCpuS(pgid);
      const t0 = performance.now();
      await new Promise((r) => setTimeout(r, IDLE_S * 1000));
      const pctIdle = ((groupCpuS(pgid) - c0) / ((performance.now() - t0) / 1000)) * 100;
      console.log(
        `  idle (agents reporting, nobody reading) for ${IDLE_S} s: console CPU ${pctIdle.toFixed(1)} % of a core`,
      );
    }
    for (const path of PATHS) {
      const label = `GET ${path.replace("/api/v1", "")}`;
      for (const width of LEVELS) {
        const l = await level(`${baseURL}${path}`, token, width, LEVEL_S, WARM_S, pgid);
        report(label, width, l);
        if (l.statuses500 > 0 || l.busyWithoutRetryAfter > 0) failed = true;
      }
    }
  } finally {
    agents?.stop();
    await stack?.stop();
  }
  if (failed) {
    console.error("bench: a read answered 5xx other than 503, or 503 without Retry-After");
    process.exitCode = 1;
  }
}

await main();
