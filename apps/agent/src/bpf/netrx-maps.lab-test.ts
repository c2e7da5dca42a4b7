/**
 * tide-probes' pinned NET_RX maps read through npm `bpf` (root; dataplane/build/tide-probes):
 * a real tide-probes with --pin-dir, ping traffic over a veth between two namespaces of its own,
 * then the node-bpf reading lies between the two JSON samples around it, the agent's probe state
 * takes net_rx_softirq from the maps, ProbeLoader passes --pin-dir, and JSON is used once the pins
 * are gone.
 *
 * Tolerance: the map is read while the loader keeps counting (NET_RX runs on every CPU for any
 * traffic on the host, not only ours), so a reading cannot equal a sample. It is read right after
 * sample k's line arrives (the loader writes that line after reading its maps) and before the
 * loader reads them for sample k+1, and the counters are cumulative: for every CPU, runs, total_us
 * and every histogram bucket satisfy sample k <= map <= sample k+1. The peak map is zeroed by the
 * loader before it writes line k, so the map's peak is part of the window sample k+1 reports:
 * map max_us <= sample k+1's max_us. A reading is kept only when it provably ended before the loader
 * started sample k+1 (its `at` is taken before it reads the maps): a busy event loop can deliver
 * lines k and k+1 together.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "@tide/devstack";
import { ProbeLoader } from "../probes/loader";
import { ProbeState } from "../probes/probe-state";
import { NETRX_PEAK_PIN_NAME, NETRX_PIN_NAME, NetRxMaps, type NetRxCpuRaw } from "./netrx-maps";
import { loadNodeBpf } from "./node-bpf";
import { possibleCpus } from "./possible-cpus";
import { ProbesMapsSource } from "./probes-maps-source";

const REPO = path.resolve(import.meta.dirname, "../../../..");
const PROBES = path.join(REPO, "dataplane/build/tide-probes");
const INTERVAL_MS = 300;
const NS_A = `tide-prm-${process.pid}-a`;
const NS_B = `tide-prm-${process.pid}-b`;

type Json = Record<string, unknown>;
interface JsonNetRx {
  cpu: number;
  runs: number;
  total_us: number;
  max_us: number;
  hist: number[];
  waits: number;
  wait_total_us: number;
  wait_max_us: number;
  wait_hist: number[];
}

let dir: string;
const pinDirs: string[] = [];
const procs: ChildProcess[] = [];
let log = "";

const ip = (...args: string[]) => execFileSync("ip", args, { stdio: "pipe" });

const waitForProbes = (what: string, ok: () => boolean, timeoutMs = 15_000) =>
  waitFor(what, ok, { timeoutMs, intervalMs: 50, detail: () => `tide-probes said: ${log}` });

function stop(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => p.kill("SIGKILL"), 5_000);
    p.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    p.kill("SIGTERM"); // detaches, unpins, unmounts the bpffs it mounted, removes the dir it made
  });
}

beforeAll(() => {
  if (process.getuid?.() !== 0) throw new Error("this lab test needs root (network namespaces, CAP_BPF)");
  if (!existsSync(PROBES)) throw new Error(`${PROBES} is not built: make -C dataplane`);
  dir = mkdtempSync(path.join(tmpdir(), "tide-probes-maps-lab-"));
  ip("netns", "add", NS_A);
  ip("netns", "add", NS_B);
  ip("-n", NS_A, "link", "add", "tq0", "type", "veth", "peer", "name", "tq1", "netns", NS_B);
  ip("-n", NS_A, "addr", "add", "10.231.79.1/24", "dev", "tq0");
  ip("-n", NS_B, "addr", "add", "10.231.79.2/24", "dev", "tq1");
  ip("-n", NS_A, "link", "set", "tq0", "up");
  ip("-n", NS_B, "link", "set", "tq1", "up");
});

/** tide-probes processes started with a pin dir under `dir` (ProbeLoader's child is not ours to await). */
function loadersUnder(d: string): number[] {
  const pids: number[] = [];
  for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(d)) pids.push(Number(pid));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

afterAll(async () => {
  for (const p of procs) await stop(p);
  if (dir !== undefined)
    for (let i = 0; i < 100 && loadersUnder(dir).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
  for (const ns of [NS_A, NS_B]) {
    try {
      ip("netns", "del", ns);
    } catch {
      // not made (an early failure)
    }
  }
  // A killed tide-probes leaves its bpffs mounted: unmount before removing the directory.
  const mounts = readFileSync("/proc/self/mounts", "utf8");
  for (const d of pinDirs) if (mounts.includes(` ${d} `)) execFileSync("umount", [d]);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** ~0.1 s of ICMP over the veth; asynchronous: the event loop must read each sample line at once. */
const ping = () =>
  promisify(execFile)("ip", [
    "netns",
    "exec",
    NS_A,
    "ping",
    "-q",
    "-c",
    "50",
    "-i",
    "0.002",
    "-W",
    "1",
    "10.231.79.2",
  ]);

function expectBetween(label: string, lo: number, v: number, hi: number): void {
  expect(v, `${label}: ${lo} <= ${v} <= ${hi}`).toBeGreaterThanOrEqual(lo);
  expect(v, `${label}: ${lo} <= ${v} <= ${hi}`).toBeLessThanOrEqual(hi);
}

describe("tide-probes' pinned NET_RX maps through npm bpf", () => {
  it("reads what the JSON samples around the reading say, and the agent's state uses it", async () => {
    const loaded = loadNodeBpf();
    if (!loaded.ok) throw new Error(loaded.error);
    const pinDir = path.join(dir, "pins");
    pinDirs.push(pinDir);
    const proc = spawn(PROBES, ["--interval-ms", String(INTERVAL_MS), "--pin-dir", pinDir, "--no-stdin"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    procs.push(proc);
    proc.stderr?.on("data", (d: Buffer) => (log = (log + d.toString()).slice(-2000)));
    const source = new ProbesMapsSource();
    let pinError: string | null = null;
    const state = new ProbeState(undefined, (e) => source.readNetRx(pinDir, e));
    const maps = new NetRxMaps(loaded.bpf, pinDir, possibleCpus());
    let hello: Json | null = null;
    let reading = false;
    // [sample k's netrx, map read right after line k, sample k+1's netrx]
    const triples: [JsonNetRx[], NetRxCpuRaw[], JsonNetRx[] | null][] = [];
    let pending: { before: JsonNetRx[]; fromMap: NetRxCpuRaw[]; readEndMs: number } | null = null;
    let discarded = 0;
    createInterface({ input: proc.stdout! }).on("line", (text) => {
      const line = JSON.parse(text) as Json;
      state.handle(line);
      if (line.type === "hello") {
        hello = line;
        pinError = typeof line.pin_error === "string" ? line.pin_error : null;
      }
      if (line.type !== "sample" || !reading) return;
      const netrx = line.netrx as JsonNetRx[];
      if (pending !== null) {
        if (pending.readEndMs < (line.at as number)) triples.push([pending.before, pending.fromMap, netrx]);
        else discarded++;
      }
      pending = null;
      if (triples.length < 5) {
        const fromMap = maps.read(); // synchronously, on line k's arrival
        pending = { before: netrx, fromMap, readEndMs: Date.now() };
      }
    });
    try {
      await waitForProbes("hello", () => hello !== null);
      const probes = (hello as unknown as { probes: Record<string, { on: boolean; reason?: string }> })
        .probes;
      expect(probes.netrx_softirq, JSON.stringify(probes.netrx_softirq)).toMatchObject({ on: true });
      expect(pinError).toBeNull();
      for (const name of [NETRX_PIN_NAME, NETRX_PEAK_PIN_NAME])
        expect(existsSync(path.join(pinDir, name)), name).toBe(true);

      reading = true;
      await waitFor(
        "5 sandwiched readings",
        async () => {
          if (triples.length >= 5) return true;
          await ping();
          return false;
        },
        {
          timeoutMs: 20_000,
          intervalMs: 0,
          detail: () => `${triples.length} so far, ${discarded} discarded`,
        },
      );
      expect(triples.length, `sandwiched readings (${discarded} discarded)`).toBe(5);

      let runsSeen = 0;
      for (const [before, fromMap, after] of triples) {
        expect(fromMap).toHaveLength(before.length); // one entry per possible CPU both ways
        for (const m of fromMap) {
          const b = before.find((x) => x.cpu === m.cpu)!;
          const a = after!.find((x) => x.cpu === m.cpu)!;
          expectBetween(`cpu ${m.cpu} runs`, b.runs, m.runs, a.runs);
          expectBetween(`cpu ${m.cpu} total_us`, b.total_us, m.totalUs, a.total_us);
          expectBetween(`cpu ${m.cpu} waits`, b.waits, m.waits, a.waits);
          m.hist.forEach((v, i) => expectBetween(`cpu ${m.cpu} hist[${i}]`, b.hist[i]!, v, a.hist[i]!));
          m.waitHist.forEach((v, i) =>
            expectBetween(`cpu ${m.cpu} wait_hist[${i}]`, b.wait_hist[i]!, v, a.wait_hist[i]!),
          );
          expect(m.maxUs).toBeLessThanOrEqual(a.max_us);
          expect(m.waitMaxUs).toBeLessThanOrEqual(a.wait_max_us);
          runsSeen += m.runs;
        }
      }
      expect(runsSeen, "NET_RX runs counted (ping over the veth)").toBeGreaterThan(0);

      // The agent's state: net_rx_softirq from the maps, one entry per possible CPU.
      const results = state.probeResults();
      expect(results.netRxSoftirq).toHaveLength(possibleCpus());
      expect(source.states()).toEqual([
        {
          component: "probes:net_rx_softirq",
          source: "node-bpf",
          reason: null,
          pinPath: path.join(pinDir, NETRX_PIN_NAME),
        },
      ]);
      // Read later than the last sandwiched reading: at least as many runs in its histograms.
      const runs = (cpus: { durationUs: number[] }[]) =>
        cpus.reduce((n, c) => n + c.durationUs.reduce((x, y) => x + y, 0), 0);
      expect(runs(results.netRxSoftirq)).toBeGreaterThanOrEqual(
        triples[4]![1].reduce((n, c) => n + c.runs, 0),
      );
    } finally {
      maps.close();
      await stop(proc);
    }
    expect(existsSync(pinDir), "tide-probes removes its pin dir on exit").toBe(false);
    // Pins gone (the probe state still says on: its last hello): JSON with the reason.
    expect(source.readNetRx(pinDir)).toBeNull();
    expect(source.states()[0]).toMatchObject({
      source: "json",
      reason: expect.stringMatching(/^no pinned map/),
    });
    source.close();
  });

  it("ProbeLoader passes --pin-dir and its state reads the maps", async () => {
    const pinDir = path.join(dir, "loader-pins");
    pinDirs.push(pinDir);
    const source = new ProbesMapsSource();
    const loader = new ProbeLoader(PROBES, INTERVAL_MS, (l) => (log += l), { pinDir, mapsSource: source });
    await loader.start();
    try {
      await waitForProbes(
        "the loader's hello and pins",
        () =>
          loader.state.probes().some((p) => p.probe === "net_rx_softirq" && p.state === "on") &&
          existsSync(path.join(pinDir, NETRX_PIN_NAME)),
      );
      await ping();
      const results = loader.state.probeResults();
      expect(source.states()[0]).toMatchObject({ source: "node-bpf", reason: null });
      expect(results.netRxSoftirq).toHaveLength(possibleCpus());
      expect(results.netRxSoftirq.some((c) => c.durationUs.length > 0)).toBe(true);
    } finally {
      loader.stop();
      source.close();
    }
    await waitForProbes("the loader to unpin and remove its pin dir", () => !existsSync(pinDir), 10_000);
  });
});
