/**
 * Sampling cost with 20 extra namespaces (root): the agent's own CPU (process.cpuUsage) and its
 * helpers' (utime+stime+cutime+cstime from /proc/PID/stat: the shells with their ss/grep children,
 * or tide-nsdiag), as a share of one core, and resident memory. Three modes: the ss-per-namespace
 * fallback with sysctls read every tick and cached for 10 s, then tide-nsdiag (sysctls cached 10 s).
 * Set TIDE_AGENT_CPU_SECONDS to measure longer (default 15 s per mode). tide-nsdiag:
 * TIDE_NSDIAG_BINARY or dataplane/build/tide-nsdiag (missing = failure).
 */
import { execFileSync } from "node:child_process";
import { accessSync, constants, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HostSampler } from "./namespace-sampler";

const BINARY =
  process.env.TIDE_NSDIAG_BINARY ?? path.resolve(__dirname, "../../../../dataplane/build/tide-nsdiag");
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

beforeAll(() => {
  for (let i = 0; i < COUNT; i++) {
    ip("netns", "add", `${PREFIX}${i}`);
    ip("-n", `${PREFIX}${i}`, "link", "set", "lo", "up");
  }
});

afterAll(() => {
  for (let i = 0; i < COUNT; i++) {
    try {
      ip("netns", "del", `${PREFIX}${i}`);
    } catch {
      // already gone
    }
  }
});

describe("sampling CPU with 20 namespaces", () => {
  // Report only: figures are noisy on a shared host (never assert on timing).
  it("reports the cost of the ss fallback (sysctls every tick, cached 10 s) and of tide-nsdiag", async () => {
    accessSync(BINARY, constants.X_OK); // throws: build it first
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
    expect(cached.path).toBe("shell");
    expect(nsdiag.path).toBe("nsdiag");
    for (const m of [cached, nsdiag]) {
      expect(m.namespaces).toBeGreaterThanOrEqual(COUNT + 1);
      expect(m.helpers).toBeLessThan(0.5);
      expect(m.node).toBeLessThan(0.5);
    }
  });
});
