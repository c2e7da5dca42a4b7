/**
 * Sampling cost with 20 extra namespaces (root): the agent's own CPU (process.cpuUsage) and its
 * helpers' (utime+stime+cutime+cstime from /proc/PID/stat: the shells with their ss/grep children,
 * or tide-nsdiag), as a share of one core, and resident memory. Three modes: the ss-per-namespace
 * fallback with sysctls read every tick and cached for 10 s, then tide-nsdiag (sysctls cached 10 s).
 * Set TIDE_AGENT_CPU_SECONDS to measure longer (default 15 s per mode). tide-nsdiag:
 * TIDE_NSDIAG_BINARY or dataplane/build/tide-nsdiag (missing = failure). `npm run -w @tide/agent bench`.
 * Prints figures only: they are noisy on a shared host. It fails only when a measurement is not what
 * it claims (a mode not on the path it measures, the namespaces not seen).
 */
import { execFileSync } from "node:child_process";
import { accessSync, constants, readFileSync } from "node:fs";
import path from "node:path";
import { HostSampler } from "../src/sampling/namespace-sampler";

const BINARY =
  process.env.TIDE_NSDIAG_BINARY ?? path.resolve(import.meta.dirname, "../../../dataplane/build/tide-nsdiag");
const COUNT = 20;
const PREFIX = `tidecpu${process.pid}-`;
const SECONDS = Number(process.env.TIDE_AGENT_CPU_SECONDS ?? 15);
const TICKS_PER_S = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());

const ip = (...args: string[]): string =>
  execFileSync("ip", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

/** CPU seconds of a process and its reaped children. */
function procCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields 14-17 (utime stime cutime cstime) are at 11-14 after the ")" split
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / TICKS_PER_S;
  } catch {
    return 0;
  }
}

/** Resident memory of a process, bytes (0 when it is gone). */
function procRssBytes(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m === null ? 0 : Number(m[1]) * 1024;
  } catch {
    return 0;
  }
}

async function measure(
  sysctlRefreshMs: number,
  nsdiagBinary: string | null,
): Promise<{
  node: number;
  helpers: number;
  namespaces: number;
  nodeRss: number;
  helpersRss: number;
  path: string;
}> {
  const sampler = new HostSampler({ sysctlRefreshMs, nsdiagBinary });
  try {
    const first = await sampler.sample(); // start helpers before measuring
    const pids = [...sampler.helperPids()];
    const helpersBefore = pids.map(procCpuSeconds);
    const cpuBefore = process.cpuUsage();
    const start = Date.now();
    for (let i = 0; i < SECONDS; i++) {
      const t = Date.now();
      await sampler.sample();
      await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (Date.now() - t))));
    }
    const wall = (Date.now() - start) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const helpers = pids.reduce((sum, pid, i) => sum + procCpuSeconds(pid) - helpersBefore[i]!, 0);
    return {
      node: (cpu.user + cpu.system) / 1e6 / wall,
      helpers: helpers / wall,
      namespaces: first.namespaces.length,
      nodeRss: process.memoryUsage().rss,
      helpersRss: pids.reduce((sum, pid) => sum + procRssBytes(pid), 0),
      path: sampler.collectorState().path,
    };
  } finally {
    sampler.close();
  }
}

function addNamespaces(): void {
  for (let i = 0; i < COUNT; i++) {
    ip("netns", "add", `${PREFIX}${i}`);
    ip("-n", `${PREFIX}${i}`, "link", "set", "lo", "up");
  }
}

function removeNamespaces(): void {
  for (let i = 0; i < COUNT; i++) {
    try {
      ip("netns", "del", `${PREFIX}${i}`);
    } catch {
      // already gone
    }
  }
}

/** A measurement that is not of what it claims is a failure, not a figure. */
function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`sampling-cpu bench: ${what}`);
}

async function main(): Promise<void> {
  accessSync(BINARY, constants.X_OK); // throws: build it first
  addNamespaces();
  try {
    const everyTick = await measure(0, null);
    const cached = await measure(10_000, null);
    const nsdiag = await measure(10_000, BINARY);
    const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
    const mb = (x: number) => `${(x / 2 ** 20).toFixed(0)} MB`;
    console.log(
      `[agent cpu] ${cached.namespaces} namespaces, ${SECONDS} s at 1 s (of one core): ` +
        `shell+ss, sysctls every tick: node ${pct(everyTick.node)} + shells ${pct(everyTick.helpers)}; ` +
        `shell+ss, sysctls cached 10 s: node ${pct(cached.node)} + shells ${pct(cached.helpers)}, ` +
        `RSS node ${mb(cached.nodeRss)} + shells ${mb(cached.helpersRss)}; ` +
        `tide-nsdiag: node ${pct(nsdiag.node)} + nsdiag ${pct(nsdiag.helpers)} = ${pct(nsdiag.node + nsdiag.helpers)}, ` +
        `RSS node ${mb(nsdiag.nodeRss)} + nsdiag ${mb(nsdiag.helpersRss)}`,
    );
    check(cached.path === "shell", `the ss fallback ran on the ${cached.path} path`);
    check(nsdiag.path === "nsdiag", `tide-nsdiag ran on the ${nsdiag.path} path`);
    for (const m of [cached, nsdiag]) {
      check(m.namespaces >= COUNT + 1, `${m.namespaces} namespaces sampled, expected at least ${COUNT + 1}`);
    }
  } finally {
    removeNamespaces();
  }
}

await main();
