/**
 * tide-probes' net_rx_softirq: the agent's CPU per read through npm bpf (pinned tp_netrx +
 * tp_netrx_peak) vs through the loader's JSON lines. Root: starts a real tide-probes with --pin-dir,
 * generates NET_RX runs (ping over a veth between two namespaces of its own), cleans everything up.
 * `npm run -w @tide/agent bench`. Prints figures only (no assertions).
 *
 * Per read, after a warm-up, agent CPU (process.cpuUsage: user + system) in µs:
 *   - netrx only: NetRxMaps.read() + rebucket vs JSON.parse of the `netrx` section + rebucket
 *   - per interval, what the agent does: JSON.parse(sample line) + ProbeState.handle +
 *     probeResults(), without a maps reader (JSON) and with one (maps: the loader still prints its
 *     line, so map mode adds the map read to the same parse)
 */
import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { NETRX_PIN_NAME, NetRxMaps } from "../src/bpf/netrx-maps";
import { loadNodeBpf } from "../src/bpf/node-bpf";
import { possibleCpus } from "../src/bpf/possible-cpus";
import { ProbesMapsSource } from "../src/bpf/probes-maps-source";
import { ProbeState, rebucket } from "../src/probes/probe-state";

const READS = 5_000;
const WARMUP = 500;
const PROBES = path.resolve(import.meta.dirname, "../../../dataplane/build/tide-probes");
const NS_A = `tide-prbench-${process.pid}-a`;
const NS_B = `tide-prbench-${process.pid}-b`;
const ip = (...args: string[]) => execFileSync("ip", args, { stdio: "pipe" });

function measure(label: string, read: () => unknown): { label: string; agentUs: number; wallUs: number } {
  for (let i = 0; i < WARMUP; i++) read();
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < READS; i++) read();
  const wall = Number(process.hrtime.bigint() - t0) / 1e3;
  const cpu = process.cpuUsage(cpu0);
  return { label, agentUs: (cpu.user + cpu.system) / READS, wallUs: wall / READS };
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0)
    return console.log("probes-netrx bench skipped: needs root (namespaces, CAP_BPF)");
  if (!existsSync(PROBES))
    return console.log(`probes-netrx bench skipped: ${PROBES} is not built (make -C dataplane)`);
  const loaded = loadNodeBpf();
  if (!loaded.ok) throw new Error(loaded.error);
  const dir = mkdtempSync(path.join(tmpdir(), "tide-prbench-"));
  const pinDir = path.join(dir, "pins");
  let proc: ChildProcess | undefined;
  ip("netns", "add", NS_A);
  ip("netns", "add", NS_B);
  try {
    ip("-n", NS_A, "link", "add", "tr0", "type", "veth", "peer", "name", "tr1", "netns", NS_B);
    ip("-n", NS_A, "addr", "add", "10.231.80.1/24", "dev", "tr0");
    ip("-n", NS_B, "addr", "add", "10.231.80.2/24", "dev", "tr1");
    ip("-n", NS_A, "link", "set", "tr0", "up");
    ip("-n", NS_B, "link", "set", "tr1", "up");
    proc = spawn(PROBES, ["--interval-ms", "200", "--pin-dir", pinDir, "--no-stdin"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const lines: string[] = [];
    createInterface({ input: proc.stdout! }).on("line", (l) => lines.push(l));
    await promisify(execFile)("ip", [
      ...["netns", "exec", NS_A, "ping", "-q", "-c", "100", "-i", "0.002", "-W", "1", "10.231.80.2"],
    ]);
    await new Promise((r) => setTimeout(r, 500));
    const hello = lines.find((l) => l.includes('"hello"'));
    const sample = lines.filter((l) => l.includes('"sample"')).pop();
    if (hello === undefined || sample === undefined || !existsSync(path.join(pinDir, NETRX_PIN_NAME)))
      throw new Error("tide-probes gave no hello, sample or pins");
    const helloJson = JSON.parse(hello) as { bucket_lo_us: number[] };
    const lo = helloJson.bucket_lo_us;
    const netrxText = JSON.stringify((JSON.parse(sample) as { netrx: unknown }).netrx);

    const maps = new NetRxMaps(loaded.bpf, pinDir, possibleCpus());
    const source = new ProbesMapsSource();
    const jsonState = new ProbeState();
    jsonState.handle(JSON.parse(hello) as Record<string, unknown>);
    const mapState = new ProbeState(undefined, (e) => source.readNetRx(pinDir, e));
    mapState.handle(JSON.parse(hello) as Record<string, unknown>);
    const results = [
      measure("netrx only: node-bpf maps", () =>
        maps.read().map((c) => ({ cpu: c.cpu, d: rebucket(c.hist, lo), m: c.maxUs })),
      ),
      measure("netrx only: json section", () =>
        (JSON.parse(netrxText) as { cpu: number; hist: number[]; max_us: number }[]).map((c) => ({
          cpu: c.cpu,
          d: rebucket(c.hist, lo),
          m: c.max_us,
        })),
      ),
      measure("interval: json line only", () => {
        jsonState.handle(JSON.parse(sample) as Record<string, unknown>);
        return jsonState.probeResults();
      }),
      measure("interval: json line + maps", () => {
        mapState.handle(JSON.parse(sample) as Record<string, unknown>);
        return mapState.probeResults();
      }),
    ];
    if (source.states()[0]?.source !== "node-bpf")
      throw new Error(`maps not read: ${source.states()[0]?.reason}`);
    maps.close();
    source.close();
    console.log(
      `tide-probes net_rx_softirq, ${READS} reads each (${possibleCpus()} possible CPUs, sample line ` +
        `${sample.length} B, netrx section ${netrxText.length} B), per read:`,
    );
    for (const r of results)
      console.log(
        `  ${r.label.padEnd(30)} agent CPU ${r.agentUs.toFixed(1).padStart(7)} µs   wall ${r.wallUs.toFixed(1).padStart(7)} µs`,
      );
  } finally {
    const p = proc;
    if (p !== undefined)
      await new Promise<void>((resolve) => {
        if (p.exitCode !== null) return resolve();
        p.once("exit", () => resolve());
        p.kill("SIGTERM"); // unpins, unmounts and removes the pin dir it made
      });
    ip("netns", "del", NS_A);
    ip("netns", "del", NS_B);
    if (readFileSync("/proc/self/mounts", "utf8").includes(` ${pinDir} `)) execFileSync("umount", [pinDir]);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
