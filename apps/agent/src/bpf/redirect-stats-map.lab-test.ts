/**
 * tide-redirect's pinned stats map read through npm `bpf` (root; dataplane/build/tide-redirect):
 * a real tide-redirect with --pin-dir on a veth in its own namespace pair, a few GUE-port
 * datagrams from the peer, then the node-bpf reading equals the control socket's `stats` reply,
 * redirectState takes it from the map (and the VIPs of two real GUE packets from the reply), and
 * falls back to JSON once the daemon (and its pin) is gone.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { GUE_PORT } from "@tide/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "@tide/devstack";
import { controlExchange } from "../dataplane/control-client";
import { redirectState } from "../dataplane/data-plane-state";
import { loadNodeBpf } from "./node-bpf";
import { possibleCpus } from "./possible-cpus";
import { REDIRECT_STATS_PIN_NAME, RedirectStatsMap } from "./redirect-stats-map";
import { RedirectStatsSource } from "./redirect-stats-source";

const REPO = path.resolve(import.meta.dirname, "../../../..");
const REDIRECT = path.join(REPO, "dataplane/build/tide-redirect");
/** GUE port tide-redirect listens for (its default, REDIRECT_CONTROL's port). */
const NS_PROXY = `tide-bpf-${process.pid}-p`;
const NS_PEER = `tide-bpf-${process.pid}-c`;

let dir: string;
let pinDir: string;
let socket: string;
let proc: ChildProcess | undefined;
let log = "";

const ip = (...args: string[]) => execFileSync("ip", args, { stdio: "pipe" });
const inNs = (ns: string, ...args: string[]) =>
  execFileSync("ip", ["netns", "exec", ns, ...args], { stdio: "pipe" });

const F_SYN = 0x02;
const F_ACK = 0x10;

/**
 * A GUE payload as tide-director writes it (the UDP header is the kernel's): base header (hlen 2,
 * proto 4), GLB private data (next_hop, hop_count 1), one hop, then an inner IPv4 TCP packet
 * 10.231.88.5:40000 -> VIP 10.231.99.10:80. Inner checksums are not set: the program counts
 * before the stack would check them.
 */
function gue(nextHop: number, flags: number): Buffer {
  const inner = Buffer.alloc(40);
  inner[0] = 0x45;
  inner.writeUInt16BE(40, 2);
  inner[8] = 64;
  inner[9] = 6;
  Buffer.from([10, 231, 88, 5]).copy(inner, 12);
  Buffer.from([10, 231, 99, 10]).copy(inner, 16);
  inner.writeUInt16BE(40000, 20);
  inner.writeUInt16BE(80, 22);
  inner[32] = 5 << 4;
  inner[33] = flags;
  const head = Buffer.from([2, 4, 0, 0, 0, 0, nextHop, 1, 10, 231, 77, 9]);
  return Buffer.concat([head, inner]);
}

async function statsReply(): Promise<Record<string, number>> {
  const [reply] = await controlExchange(socket, [{ id: 1, cmd: "stats" }]);
  return (reply as { result: { counters: Record<string, number> } }).result.counters;
}

const waitForRedirect = (what: string, ok: () => boolean, timeoutMs = 10_000) =>
  waitFor(what, ok, { timeoutMs, intervalMs: 50, detail: () => `tide-redirect said: ${log}` });

function stopRedirect(): Promise<void> {
  const p = proc;
  proc = undefined;
  if (p === undefined || p.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => p.kill("SIGKILL"), 5_000);
    p.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    p.kill("SIGTERM"); // detaches, unpins, unmounts the bpffs it mounted, removes the dir it made
  });
}

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error("this lab test needs root (network namespaces, CAP_BPF)");
  if (!existsSync(REDIRECT)) throw new Error(`${REDIRECT} is not built: make -C dataplane`);
  dir = mkdtempSync(path.join(tmpdir(), "tide-bpf-lab-"));
  pinDir = path.join(dir, "pins");
  socket = path.join(dir, "redirect.sock");
  ip("netns", "add", NS_PROXY);
  ip("netns", "add", NS_PEER);
  for (const ns of [NS_PROXY, NS_PEER]) {
    // No IPv6: router solicitations would keep moving not_gue while the two readings are compared.
    inNs(ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1");
    ip("-n", ns, "link", "set", "lo", "up");
  }
  ip("-n", NS_PROXY, "link", "add", "tb0", "type", "veth", "peer", "name", "tb1", "netns", NS_PEER);
  ip("-n", NS_PROXY, "addr", "add", "10.231.77.1/24", "dev", "tb0");
  ip("-n", NS_PEER, "addr", "add", "10.231.77.2/24", "dev", "tb1");
  ip("-n", NS_PROXY, "link", "set", "tb0", "up");
  ip("-n", NS_PEER, "link", "set", "tb1", "up");
  proc = spawn(REDIRECT, ["--iface", "tb0", "--netns", NS_PROXY, "--socket", socket, "--pin-dir", pinDir], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  proc.stderr?.on("data", (d: Buffer) => (log += d.toString()));
  await waitForRedirect(
    "the control socket and the pin",
    () => existsSync(socket) && existsSync(path.join(pinDir, REDIRECT_STATS_PIN_NAME)),
  );
});

afterAll(async () => {
  await stopRedirect();
  for (const ns of [NS_PROXY, NS_PEER]) {
    try {
      ip("netns", "del", ns);
    } catch {
      // not made (an early failure)
    }
  }
  // A killed tide-redirect leaves its bpffs mounted: unmount before removing the directory.
  if (dir !== undefined && readFileSync("/proc/self/mounts", "utf8").includes(` ${pinDir} `))
    execFileSync("umount", [pinDir]);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe("tide-redirect's pinned stats map through npm bpf", () => {
  it("loads the module (prebuilt linux-x64 addon)", () => {
    const loaded = loadNodeBpf();
    expect(loaded.ok, loaded.ok ? "" : loaded.error).toBe(true);
  });

  it("reads the same counters as the control socket's stats reply", async () => {
    // Datagrams to the GUE port that are not valid GUE: counted in total and a dropped_* slot.
    for (let i = 0; i < 5; i++)
      inNs(NS_PEER, "bash", "-c", `printf 'not-gue-${i}' > /dev/udp/10.231.77.1/${GUE_PORT}`);
    const loaded = loadNodeBpf();
    if (!loaded.ok) throw new Error(loaded.error);
    const map = new RedirectStatsMap(loaded.bpf, path.join(pinDir, REDIRECT_STATS_PIN_NAME), possibleCpus());
    try {
      for (let i = 0; i < 100 && ((await statsReply()).total ?? 0) < 5; i++)
        await new Promise((r) => setTimeout(r, 50));
      let before: Record<string, number> = {};
      let after: Record<string, number> | null = null;
      let fromMap: Record<string, number> = {};
      // Sandwich the map reading between two socket readings (ARP may still move not_gue).
      for (let attempt = 0; attempt < 20 && JSON.stringify(before) !== JSON.stringify(after); attempt++) {
        before = await statsReply();
        fromMap = map.read();
        after = await statsReply();
      }
      expect(after).toEqual(before);
      expect(fromMap).toEqual(before);
      expect(fromMap.total).toBeGreaterThanOrEqual(5);
    } finally {
      map.close();
    }
  });

  it("redirectState reports the VIPs of real GUE packets with the why counters", async () => {
    // A GUE SYN to VIP 10.231.99.10:80 (first hop) and an unknown flow's ACK that arrives as the
    // last hop (next_hop 1 of 1: last resort): the VIP entry counts both, no second chance.
    const file = path.join(dir, "gue.bin");
    for (const p of [gue(0, F_SYN), gue(1, F_ACK)]) {
      writeFileSync(file, p);
      inNs(NS_PEER, "bash", "-c", `cat ${file} > /dev/udp/10.231.77.1/${GUE_PORT}`);
    }
    const source = new RedirectStatsSource();
    let state = await redirectState(socket, { pinDir, source });
    for (let i = 0; i < 100 && (state.redirectVips?.length ?? 0) === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      state = await redirectState(socket, { pinDir, source });
    }
    source.close();
    expect(state.countersReadAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(state.redirectCounters).toMatchObject({ accepted_second_chance: 0, accepted_alternate_hash: 0 });
    expect(state.redirectVips).toEqual([
      {
        address: "10.231.99.10",
        port: 80,
        proto: "tcp",
        counters: {
          forwarded_to_alternate: 0,
          accepted_second_chance: 0,
          accepted_alternate_hash: 0,
          accepted_last_resort: 1,
          accepted_established: 0,
          accepted_syn: 1,
        },
      },
    ]);
  });

  it("redirectState takes the counters from the map, and JSON once the pin is gone", async () => {
    const source = new RedirectStatsSource();
    const viaMap = await redirectState(socket, { pinDir, source });
    expect(viaMap).toMatchObject({ reachable: true, error: null });
    expect(source.state()).toMatchObject({ source: "node-bpf", reason: null });
    expect(viaMap.redirectCounters?.total).toBeGreaterThanOrEqual(5);
    const viaJson = await redirectState(socket, { pinDir: null, source });
    expect(source.state()).toMatchObject({ source: "json" });
    expect(viaJson.redirectCounters?.total).toBe(viaMap.redirectCounters?.total);

    await stopRedirect();
    expect(existsSync(pinDir), "tide-redirect removes its pin dir on exit").toBe(false);
    const gone = await redirectState(socket, { pinDir, source });
    expect(gone.reachable).toBe(false);
    expect(source.state()).toMatchObject({ source: "json", reason: expect.stringMatching(/^no pinned map/) });
    source.close();
  });
});
