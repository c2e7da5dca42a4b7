/**
 * tide-redirect counters: the agent's CPU per read through npm bpf (pinned map) vs through the
 * control socket's JSON. Root: starts a real tide-redirect with --pin-dir in its own namespace
 * pair, cleans everything up. `npm run -w @tide/agent bench`. Prints figures only (no assertions).
 *
 * For each path, READS reads after a warm-up; CPU is the agent's (process.cpuUsage: user + system)
 * and tide-redirect's (/proc/PID/stat utime + stime, clock ticks), each per read in µs:
 *   - counters only: RedirectStatsMap.read() vs controlExchange(stats) + the contract's parse
 *   - what the agent does each tick: redirectState() with pinDir (status over the socket, counters
 *     from the map) vs without (status + stats over the socket)
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { redirectControlResults } from "@tide/contracts";
import { waitFor } from "@tide/devstack";
import { loadNodeBpf } from "../src/bpf/node-bpf";
import { possibleCpus } from "../src/bpf/possible-cpus";
import { REDIRECT_STATS_PIN_NAME, RedirectStatsMap } from "../src/bpf/redirect-stats-map";
import { RedirectStatsSource } from "../src/bpf/redirect-stats-source";
import { controlExchange } from "../src/dataplane/control-client";
import { redirectState } from "../src/dataplane/data-plane-state";

const READS = 2_000;
const WARMUP = 200;
/** Linux USER_HZ: /proc/PID/stat counts CPU time in 1/100 s. */
const CLOCK_TICKS_PER_S = 100;

const REDIRECT = path.resolve(import.meta.dirname, "../../../dataplane/build/tide-redirect");
const NS = `tide-bpfbench-${process.pid}`;
const ip = (...args: string[]) => execFileSync("ip", args, { stdio: "pipe" });

function daemonCpuUs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS_PER_S; // utime, stime
}

async function measure(
  label: string,
  daemonPid: number,
  read: () => unknown,
): Promise<{ label: string; agentUs: number; daemonUs: number; wallUs: number }> {
  for (let i = 0; i < WARMUP; i++) await read();
  const cpu0 = process.cpuUsage();
  const d0 = daemonCpuUs(daemonPid);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < READS; i++) await read();
  const wall = Number(process.hrtime.bigint() - t0) / 1e3;
  const cpu = process.cpuUsage(cpu0);
  return {
    label,
    agentUs: (cpu.user + cpu.system) / READS,
    daemonUs: (daemonCpuUs(daemonPid) - d0) / READS,
    wallUs: wall / READS,
  };
}

async function main(): Promise<void> {
  // Like the other benches: skipped, with the reason, where it cannot run.
  if (process.getuid?.() !== 0)
    return console.log("bpf-read bench skipped: needs root (a namespace, CAP_BPF)");
  if (!existsSync(REDIRECT))
    return console.log(`bpf-read bench skipped: ${REDIRECT} is not built (make -C dataplane)`);
  const loaded = loadNodeBpf();
  if (!loaded.ok) throw new Error(loaded.error);
  const dir = mkdtempSync(path.join(tmpdir(), "tide-bpfbench-"));
  const pinDir = path.join(dir, "pins");
  const socket = path.join(dir, "redirect.sock");
  ip("netns", "add", NS);
  let proc: ChildProcess | undefined;
  try {
    ip("-n", NS, "link", "add", "bb0", "type", "veth", "peer", "name", "bb1");
    ip("-n", NS, "addr", "add", "10.231.78.1/24", "dev", "bb0");
    ip("-n", NS, "link", "set", "bb0", "up");
    ip("-n", NS, "link", "set", "bb1", "up");
    proc = spawn(REDIRECT, ["--iface", "bb0", "--netns", NS, "--socket", socket, "--pin-dir", pinDir], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    const pin = path.join(pinDir, REDIRECT_STATS_PIN_NAME);
    await waitFor("tide-redirect's pinned stats map", () => existsSync(pin), {
      timeoutMs: 10_000,
      intervalMs: 50,
      whileRunning: proc,
    });
    const pid = proc.pid!;
    const map = new RedirectStatsMap(loaded.bpf, pin, possibleCpus());
    const source = new RedirectStatsSource();
    const results = [
      await measure("counters: node-bpf map", pid, () => map.read()),
      await measure("counters: json socket", pid, async () => {
        const [reply] = await controlExchange(socket, [{ id: 1, cmd: "stats" }]);
        const r = (reply as { result: unknown }).result;
        return redirectControlResults.stats.parse(r);
      }),
      await measure("tick: redirectState node-bpf", pid, () => redirectState(socket, { pinDir, source })),
      await measure("tick: redirectState json", pid, () => redirectState(socket, { pinDir: null, source })),
    ];
    map.close();
    source.close();
    console.log(`tide-redirect counters, ${READS} reads each (${possibleCpus()} possible CPUs), per read:`);
    for (const r of results)
      console.log(
        `  ${r.label.padEnd(32)} agent CPU ${r.agentUs.toFixed(1).padStart(7)} µs   ` +
          `tide-redirect CPU ${r.daemonUs.toFixed(1).padStart(6)} µs   wall ${r.wallUs.toFixed(1).padStart(7)} µs`,
      );
  } finally {
    const p = proc;
    if (p !== undefined)
      await new Promise<void>((resolve) => {
        if (p.exitCode !== null) return resolve();
        p.once("exit", () => resolve());
        p.kill("SIGTERM");
      });
    ip("netns", "del", NS);
    if (readFileSync("/proc/self/mounts", "utf8").includes(` ${pinDir} `)) execFileSync("umount", [pinDir]);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
