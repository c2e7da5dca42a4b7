/**
 * Proxy health checks: the agent's CPU with 3 and with 64 proxies in a pool (the 64 simulated as
 * addresses of one proxy namespace). Root: builds its own namespaces, starts the real tide-redirect
 * and an HTTP server, runs the real HealthChecker with the real HealthcheckClient (one
 * tide-healthcheck --netns <checker>), cleans everything up. `npm run -w @tide/agent bench`.
 * Prints figures only: it exits non-zero when the setup is broken (a check fails, a proxy never
 * comes up, something is left behind), never on timing. Skips (exit 0) without root or binaries.
 *
 *   checker namespace                      proxy namespace
 *   hcb<pid>c<i> 10.232.<i>.1/24  <-veth->  hcb<pid>p<i> 10.232.<i>.10-25/24 + tide-redirect --local (16)
 *   (i = 0..3: tide-redirect takes at most 16 local addresses, so 4 links carry the 64 proxies)
 *   tide-healthcheck                       one node HTTP server on 0.0.0.0:18080 (200 on every path)
 *
 * Each proxy gets what a pool with `gue: true, service: http` asks: every round a GUE check (an ICMP
 * echo in GUE to its address, decapsulated by that link's tide-redirect) and an HTTP GET /, both
 * with timeoutMs 1000; intervalMs 2000 (the default), rise/fall 3. Scenarios, each for
 * TIDE_BENCH_HEALTH_SECONDS (default 30, rounded to whole intervals) of wall time in one process:
 *   - idle: the same Node process with no checker (the baseline the other rows are relative to:
 *     its median interval, since a fresh process's memory-reducing GCs may land in it)
 *   - 3 proxies, then 64 proxies: a fresh client + checker; measured after all proxies are up
 *     (rise rounds), from half an interval after a round, so the window holds whole rounds
 * CPU: this Node process (process.cpuUsage, user + system; in all and per interval, whose median
 * is robust to a stray GC) and the tide-healthcheck child
 * (/proc/PID/stat utime + stime, all its threads, in clock ticks of 1/CLK_TCK s: coarse for the
 * 3-proxy row). On one kernel the proxy side's softirq work (veth receive, tide-redirect's BPF, the
 * echo reply, the TCP handshake) may be charged to the sending thread's system time, so the
 * tide-healthcheck figure is an upper bound of what a director host pays.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { GUE_PORT, HEALTH_DEFAULTS, redirectControlResults, type HealthCheckJob } from "@tide/contracts";
import { sleep, waitFor } from "@tide/devstack";
import { controlExchange } from "../src/dataplane/control-client";
import { HealthChecker } from "../src/health/health-checker";
import { HealthcheckClient } from "../src/health/healthcheck-client";

const knobs = process.env;
const SECONDS = Number(knobs.TIDE_BENCH_HEALTH_SECONDS ?? 30);
const BUILD = path.resolve(import.meta.dirname, "../../../dataplane/build");
const HEALTHCHECK = knobs.TIDE_HEALTHCHECK_BINARY ?? path.join(BUILD, "tide-healthcheck");
const REDIRECT = knobs.TIDE_REDIRECT_BINARY ?? path.join(BUILD, "tide-redirect");

const INTERVAL_MS = HEALTH_DEFAULTS.intervalMs;
const TIMEOUT_MS = 1_000;
const RISE = HEALTH_DEFAULTS.rise;
const HTTP_PORT = 18080;
/** Each window is whole intervals (one round each): SECONDS rounded to intervals, at least one. */
const SLICES = Math.max(1, Math.round((SECONDS * 1000) / INTERVAL_MS));
const PER_REDIRECT = 16; // TIDE_REDIRECT_MAX_LOCAL
const MAX_PROXIES = 64;
const LINKS = MAX_PROXIES / PER_REDIRECT;
const STOP_TIMEOUT_MS = 5_000;
const START_TIMEOUT_MS = 10_000;

const PREFIX = `tide-hcbench-${process.pid}`;
const CHECKER_NS = `${PREFIX}-chk`;
const PROXY_NS = `${PREFIX}-prx`;
const checkerIf = (i: number) => `hcb${process.pid}c${i}`; // at most 15 characters
const proxyIf = (i: number) => `hcb${process.pid}p${i}`;
const checkerAddr = (i: number) => `10.232.${i}.1`;
const proxyAddr = (j: number) => `10.232.${Math.floor(j / PER_REDIRECT)}.${10 + (j % PER_REDIRECT)}`;

const ip = (...args: string[]): string =>
  execFileSync("ip", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
const namespaces = (): string[] =>
  ip("netns", "list")
    .split("\n")
    .map((l) => l.split(" ")[0] ?? "")
    .filter((n) => n !== "")
    .sort();

let workDir = "";
const children: ChildProcess[] = [];
let client: HealthcheckClient | null = null;
let checker: HealthChecker | null = null;

/** utime + stime of a whole process (all its threads, live and exited), in clock ticks. */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** This process's tide-healthcheck child (HealthcheckClient keeps its ChildProcess to itself). */
function healthcheckPid(): number {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    // comm holds at most 15 characters
    if (ppid === process.pid && comm === "tide-healthcheck".slice(0, 15)) found.push(Number(name));
  }
  if (found.length !== 1) throw new Error(`expected one tide-healthcheck child, found ${found.length}`);
  return found[0]!;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM"); // tide-redirect detaches its BPF program on SIGTERM
  const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

const redirectSocket = (i: number) => path.join(workDir, `redirect${i}.sock`);

async function setUp(): Promise<void> {
  workDir = mkdtempSync(path.join(tmpdir(), `${PREFIX}-`));
  for (const n of [CHECKER_NS, PROXY_NS]) {
    ip("netns", "add", n);
    ip("-n", n, "link", "set", "lo", "up");
  }
  for (let i = 0; i < LINKS; i++) {
    ip(
      "link",
      "add",
      checkerIf(i),
      "netns",
      CHECKER_NS,
      "type",
      "veth",
      "peer",
      "name",
      proxyIf(i),
      "netns",
      PROXY_NS,
    );
    ip("-n", CHECKER_NS, "addr", "add", `${checkerAddr(i)}/24`, "dev", checkerIf(i));
    for (let j = i * PER_REDIRECT; j < (i + 1) * PER_REDIRECT; j++)
      ip("-n", PROXY_NS, "addr", "add", `${proxyAddr(j)}/24`, "dev", proxyIf(i));
    ip("-n", CHECKER_NS, "link", "set", checkerIf(i), "up");
    ip("-n", PROXY_NS, "link", "set", proxyIf(i), "up");
  }
  for (let i = 0; i < LINKS; i++) {
    const locals = Array.from({ length: PER_REDIRECT }, (_, k) => [
      "--local",
      proxyAddr(i * PER_REDIRECT + k),
    ]);
    const r = spawn(
      REDIRECT,
      [
        "--iface",
        proxyIf(i),
        "--netns",
        PROXY_NS,
        ...locals.flat(),
        "--port",
        String(GUE_PORT),
        "--socket",
        redirectSocket(i),
      ],
      { stdio: ["ignore", "ignore", "inherit"] },
    );
    children.push(r);
    await waitFor(`tide-redirect on ${proxyIf(i)} to be ready`, () => existsSync(redirectSocket(i)), {
      timeoutMs: START_TIMEOUT_MS,
      intervalMs: 25,
      whileRunning: r,
    });
  }
  const serverCode =
    "require('node:http').createServer((q, s) => s.end('ok\\n'))" +
    `.listen(${HTTP_PORT}, '0.0.0.0', () => console.log('listening'))`;
  const server = spawn("ip", ["netns", "exec", PROXY_NS, process.execPath, "-e", serverCode], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(server);
  let out = "";
  server.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  await waitFor("http server to be ready", () => out.includes("listening"), {
    timeoutMs: START_TIMEOUT_MS,
    intervalMs: 25,
    whileRunning: server,
  });
}

async function cleanUp(): Promise<void> {
  checker?.stop();
  checker = null;
  client?.stop();
  client = null;
  for (const c of children.splice(0)) await stop(c);
  for (const n of [CHECKER_NS, PROXY_NS]) {
    try {
      ip("netns", "del", n);
    } catch {
      // not created, or already gone
    }
  }
  if (workDir !== "") rmSync(workDir, { recursive: true, force: true });
  workDir = "";
}

/** The GUE echoes all tide-redirects decapsulated so far. */
async function acceptedIcmp(): Promise<number> {
  let sum = 0;
  for (let i = 0; i < LINKS; i++) {
    const [reply] = await controlExchange(redirectSocket(i), [{ id: 1, cmd: "stats" }]);
    const r = reply as { ok: boolean; result?: unknown };
    if (!r.ok) throw new Error(`tide-redirect ${i} stats: ${JSON.stringify(reply)}`);
    sum += redirectControlResults.stats.parse(r.result).counters.accepted_icmp;
  }
  return sum;
}

interface Row {
  label: string;
  proxies: number;
  wallMs: number;
  agentUs: number;
  /** The agent's CPU in each interval of the window (one round each), sorted. */
  sliceUs: number[];
  helperUs: number | null;
  checks: number;
  gueOk: number;
  failures: number;
  failureDetails: string[];
  reports: number;
  echoes: number | null;
}

/** SLICES intervals from now: the agent's CPU in all and in each, and the wall time. */
async function window(): Promise<{ wallMs: number; agentUs: number; sliceUs: number[] }> {
  const cpuUs = () => {
    const c = process.cpuUsage();
    return c.user + c.system;
  };
  const t0 = performance.now();
  const start = cpuUs();
  let last = start;
  const sliceUs: number[] = [];
  for (let k = 1; k <= SLICES; k++) {
    await sleep(t0 + k * INTERVAL_MS - performance.now());
    const now = cpuUs();
    sliceUs.push(now - last);
    last = now;
  }
  return { wallMs: performance.now() - t0, agentUs: last - start, sliceUs: sliceUs.sort((a, b) => a - b) };
}

const median = (sorted: number[]) =>
  sorted.length % 2 === 1
    ? sorted[(sorted.length - 1) / 2]!
    : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;

async function idle(): Promise<Row> {
  return {
    label: "idle (baseline)",
    proxies: 0,
    ...(await window()),
    helperUs: null,
    checks: 0,
    gueOk: 0,
    failures: 0,
    failureDetails: [],
    reports: 0,
    echoes: null,
  };
}

async function run(proxies: number, clkTck: number): Promise<Row> {
  const job: HealthCheckJob = {
    poolId: "bench-pool",
    pool: "bench",
    guePort: GUE_PORT,
    check: {
      enabled: true,
      intervalMs: INTERVAL_MS,
      timeoutMs: TIMEOUT_MS,
      rise: RISE,
      fall: HEALTH_DEFAULTS.fall,
      gue: true,
      service: { kind: "http", port: HTTP_PORT, path: "/", expectStatus: 200 },
    },
    proxies: Array.from({ length: proxies }, (_, j) => ({
      proxyId: `proxy-${j}`,
      address: proxyAddr(j),
      hostname: `proxy-${j}`,
    })),
  };
  const c = new HealthcheckClient(HEALTHCHECK, CHECKER_NS, (l) => console.log(`  tide-healthcheck: ${l}`));
  client = c;
  // Counts what the checker asks for; the count is the only thing added to the agent's own path.
  let checks = 0;
  let gueOk = 0;
  let failures = 0;
  const failureDetails: string[] = [];
  let reports = 0;
  const hc = new HealthChecker({
    runner: {
      check: async (req) => {
        const r = await c.check(req);
        checks++;
        if (r.ok && req.kind === "gue") gueOk++;
        if (!r.ok) {
          failures++;
          if (failureDetails.length < 5) failureDetails.push(`${req.kind} ${req.target}: ${r.detail}`);
        }
        return r;
      },
    },
    report: () => {
      reports++;
      return Promise.resolve();
    },
    log: () => undefined, // the "is up" lines of warm-up
  });
  checker = hc;
  const started = performance.now();
  hc.setJobs([job]);

  // Warm-up: the rise rounds, then every proxy must be up (else the setup is broken).
  const upBy = started + (RISE - 1) * INTERVAL_MS + INTERVAL_MS / 2;
  const deadline = upBy + 3 * INTERVAL_MS;
  const allUp = () => hc.views().every((v) => v.up === true);
  const down = () =>
    hc
      .views()
      .filter((v) => v.up !== true)
      .slice(0, 5)
      .map((v) => `${v.proxyId}: ${v.checks.map((x) => `${x.kind} ${x.detail}`).join(", ")}`);
  await sleep(upBy - performance.now());
  await waitFor(`all ${proxies} proxies up after warm-up`, allUp, {
    timeoutMs: Math.max(0, Math.round(deadline - performance.now())),
    intervalMs: 100,
    detail: () => `down: ${down().join("; ")}`,
  });
  // Measure from half an interval after a round for whole intervals: whole rounds only.
  const intervalsSoFar = Math.ceil((performance.now() - started) / INTERVAL_MS - 0.5);
  await sleep(started + (intervalsSoFar + 0.5) * INTERVAL_MS - performance.now());

  const pid = healthcheckPid();
  const echoes0 = await acceptedIcmp();
  const n0 = { checks, gueOk, failures, reports };
  failureDetails.length = 0;
  const h0 = cpuTicks(pid);
  const w = await window();
  const helperUs = ((cpuTicks(pid) - h0) * 1e6) / clkTck;
  const row: Row = {
    label: `${proxies} proxies`,
    proxies,
    ...w,
    helperUs,
    checks: checks - n0.checks,
    gueOk: gueOk - n0.gueOk,
    failures: failures - n0.failures,
    failureDetails: [...failureDetails],
    reports: reports - n0.reports,
    echoes: (await acceptedIcmp()) - echoes0,
  };
  if (healthcheckPid() !== pid) throw new Error("tide-healthcheck was restarted during the run");
  hc.stop();
  checker = null;
  c.stop();
  client = null;
  await sleep(200); // let the child exit before the next scenario
  return row;
}

function table(rows: Row[]): void {
  const base = rows[0]!;
  const baseMedian = median(base.sliceUs);
  const ms = (us: number) => (us / 1000).toFixed(1);
  const header = [
    "scenario",
    "checks",
    "rounds",
    "fail",
    "reports",
    "agent CPU ms",
    "% core",
    "ms/round min/med/max",
    "+idle µs/check mean",
    "+idle µs/check med",
    "tide-healthcheck ms",
    "% core",
    "µs/check",
  ];
  const cells = rows.map((r) => {
    const perRound = r.proxies * 2;
    const none = r.checks === 0;
    return [
      r.label,
      String(r.checks),
      r.proxies === 0 ? "-" : (r.checks / perRound).toFixed(1),
      String(r.failures),
      String(r.reports),
      ms(r.agentUs),
      ((r.agentUs / 1000 / r.wallMs) * 100).toFixed(3),
      `${ms(r.sliceUs[0]!)}/${ms(median(r.sliceUs))}/${ms(r.sliceUs[r.sliceUs.length - 1]!)}`,
      none ? "-" : ((r.agentUs - baseMedian * r.sliceUs.length) / r.checks).toFixed(1),
      none ? "-" : ((median(r.sliceUs) - baseMedian) / perRound).toFixed(1),
      r.helperUs === null ? "-" : (r.helperUs / 1000).toFixed(0),
      r.helperUs === null ? "-" : ((r.helperUs / 1000 / r.wallMs) * 100).toFixed(3),
      r.helperUs === null || none ? "-" : (r.helperUs / r.checks).toFixed(1),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) =>
    "  " + c.map((x, i) => (i === 0 ? x.padEnd(widths[i]!) : x.padStart(widths[i]!))).join("  ");
  console.log(line(header));
  for (const c of cells) console.log(line(c));
}

async function main(): Promise<number> {
  if (process.getuid?.() !== 0) {
    console.log("health-checks bench: skipped (needs root: namespaces, tide-redirect, the raw ICMP socket)");
    return 0;
  }
  for (const b of [HEALTHCHECK, REDIRECT]) {
    try {
      accessSync(b, constants.X_OK);
    } catch {
      console.log(
        `health-checks bench: skipped (${b} is not built: make -C dataplane build/tide-healthcheck build/tide-redirect)`,
      );
      return 0;
    }
  }
  if (!Number.isFinite(SECONDS) || SECONDS <= 0) throw new Error("TIDE_BENCH_HEALTH_SECONDS must be > 0");
  const clkTck = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
  const before = namespaces();
  if (before.some((n) => n.startsWith(PREFIX))) throw new Error(`namespaces ${PREFIX}-* exist already`);

  const onSignal = (sig: NodeJS.Signals) => {
    void cleanUp().finally(() => process.exit(sig === "SIGINT" ? 130 : 143));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);

  const rows: Row[] = [];
  let broken: string[] = [];
  try {
    await setUp();
    console.log(
      `proxy health checks, ${(SLICES * INTERVAL_MS) / 1000} s each (TIDE_BENCH_HEALTH_SECONDS), one pool: ` +
        `every ${INTERVAL_MS} ms ` +
        `each proxy gets a gue check (GUE-encapsulated ICMP echo to its address port ${GUE_PORT}, ` +
        `decapsulated by the real tide-redirect) and an http check (GET / on port ${HTTP_PORT}, expect 200), ` +
        `timeoutMs ${TIMEOUT_MS}, rise ${RISE}; real HealthChecker + HealthcheckClient + tide-healthcheck ` +
        `--netns ${CHECKER_NS}; a report function that only counts.`,
    );
    console.log(
      `proxies: 10.232.<link>.10-25 in one proxy namespace over ${LINKS} veth links, ` +
        `one tide-redirect per link (--local its 16 addresses); 3 proxies = 10.232.0.10-12, ` +
        `64 = all four links; so every proxy, all 64 included, is checked by gue and http. ` +
        `One node HTTP server on 0.0.0.0. ${process.platform} ${process.version}, CLK_TCK ${clkTck} ` +
        `(tide-healthcheck CPU resolution ${(1000 / clkTck).toFixed(0)} ms).`,
    );
    rows.push(await idle());
    for (const n of [3, MAX_PROXIES]) rows.push(await run(n, clkTck));
    console.log("");
    table(rows);
    console.log(
      "  agent = this Node process (process.cpuUsage), also per interval (one round each); +idle mean = (CPU - " +
        "median idle interval x intervals) / checks; +idle med = (median round - median idle interval) / checks " +
        "of a round (robust to a stray GC);",
    );
    console.log(
      "  tide-healthcheck = its /proc/PID/stat utime+stime (all threads), incl. kernel work charged to it.",
    );
    for (const r of rows.slice(1)) {
      const expected = SLICES * r.proxies * 2;
      console.log(
        `  ${r.label}: ${r.checks} checks (expected ${expected}), ${r.gueOk} gue ok, ` +
          `tide-redirect decapsulated ${r.echoes} GUE echoes in the window`,
      );
      if (r.failures > 0)
        broken.push(`${r.label}: ${r.failures} failed checks: ${r.failureDetails.join("; ")}`);
      if (r.echoes !== null && r.echoes < r.gueOk)
        broken.push(`${r.label}: ${r.gueOk} gue checks passed but tide-redirect saw ${r.echoes} echoes`);
    }
  } finally {
    process.removeListener("SIGINT", onSignal);
    process.removeListener("SIGTERM", onSignal);
    await cleanUp();
    const after = namespaces();
    const left = after.filter((n) => n.startsWith(PREFIX));
    // Only ours: other namespaces may come and go meanwhile (a lab on the same host).
    if (left.length > 0) broken = [...broken, `namespaces left behind: ${left.join(", ")}`];
    else
      console.log(
        `  cleaned up: no ${PREFIX}-* namespace left (ip netns list: ${before.length} before, ${after.length} after)`,
      );
  }
  if (broken.length > 0) {
    for (const b of broken) console.error(`health-checks bench: setup broken: ${b}`);
    return 1;
  }
  return 0;
}

process.exitCode = await main();
