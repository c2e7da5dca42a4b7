/**
 * Incident softirq-stall: NET_RX softirq stalls on one CPU.
 *
 *   tide-inc-si-client 10.201.5.2 ──veth── tide-inc-si-server 10.201.5.1 (udp :8085, nothing listens)
 *     udp-flood.py pinned to the other CPU        RPS steers sq0's receive work to `cpu`;
 *                                                 table inet tide_slow_input: `rules` linear rules
 *
 * Every packet the server receives walks a long linear nftables input chain (no sets), which costs
 * about 0.4 ms per packet at 20,000 rules, inside NET_RX. RPS on the server's veth puts the packets
 * in `cpu`'s input backlog (the sender runs on another CPU, so it keeps queueing), and that CPU's
 * NET_RX polls the backlog 64 packets at a time: one run lasts tens of milliseconds, the backlog
 * (net.core.netdev_max_backlog, untouched) overflows and softnet_stat `dropped` rises on that CPU.
 * remedy() deletes the table: runs go back to well under a millisecond and drops stop.
 * measure() runs the flood while tide-probes (net_rx_softirq: irq:softirq_entry/exit vector 3,
 * raise->entry wait) and /proc/net/softnet_stat watch the CPU; those figures are the signal.
 *
 * Candidates tried on kernel 6.18, 2 vCPU (figures from tide-probes, 1 s samples, 4 s floods):
 *  (a) the documented cause, dying memory cgroups (memory is on cgroup v1 here, no cgroup.stat
 *      for it: /proc/cgroups num_cgroups went 71 -> 20,073 with 20,000 created, charged 8-64 KiB of
 *      page cache each and removed) and a memory.stat reader pinned to the CPU that ran a ping -f
 *      flood: memory.stat reads took 0.05 ms (7.8 ms once, on a stats flush, in process context),
 *      NET_RX max on that CPU stayed 71-144 us, raise->entry wait max 56 us. The rstat-based
 *      memcg stats of this kernel no longer walk dying cgroups with softirqs held off: no stall.
 *  (b) a 20,000-rule linear input chain, RPS off, sender on the same CPU: each send runs NET_RX
 *      for its own packet at once, so runs stay at one packet: max 0.7-5.5 ms, 2,600 pkt/s, no
 *      drops. With RPS steering to the other CPU (this incident): max NET_RX 25.8-42.3 ms per 1 s
 *      sample, wait max 1.3-4.0 ms, softnet dropped 206,122 in 4 s (~51,000/s) with a 16 MiB
 *      SO_SNDBUF sender (a default send buffer caps in-flight datagrams at ~250 and gives long runs
 *      but no drops). After remedy() (table deleted): max 0.2-1.0 ms, 0 drops at 100,000 pkt/s.
 *      Through this module (measure(), 4 s flood, 0.5 s samples): 20,000 rules max NET_RX 30.6 ms,
 *      wait max 104.7 ms, dropped 43,618/s, time_squeeze +167; after remedy() max 1.24 ms, 0
 *      drops. 5,000 rules: max 19.7 ms, 68,224 drops/s; 60,000 rules (setup 4 s): max 159.5 ms
 *      (the critical level), 54,512 drops/s.
 *  (c) no chain, netdev_max_backlog lowered host-wide to 16 (restored to 1000 right after):
 *      6,823 drops in 4 s (~1,700/s) but NET_RX max 0.1-2.1 ms: drops without a stall, and a
 *      host-wide change other tests would feel. Not used.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { REPO_ROOT } from "../env";
import { LabError } from "../errors";
import { runInNamespace } from "../host-command";
import {
  cleanupStaleNamespaces,
  clientServerNamespaces,
  createClientServerPair,
  deleteNamespace,
  INCIDENT_PREFIX,
  incidentAsset,
  PYTHON,
  requireRoot,
  runJsonHelper,
  type IncidentNamespace,
} from "./namespace";

export const SOFTIRQ_STALL_PREFIX = `${INCIDENT_PREFIX}si-`;
/** The nftables table holding the long chain (in the server namespace only). */
export const SLOW_TABLE = "tide_slow_input";
export const DEFAULT_PROBES_BINARY = path.join(REPO_ROOT, "dataplane/build/tide-probes");
const IFNAME = "sq0";

export interface SoftirqStallOptions {
  /**
   * Linear rules in the server's input chain: ~0.4 ms of NET_RX per packet at 20,000 (runs of
   * 25-40 ms: warn); 60,000 gave runs over 100 ms (critical).
   */
  rules?: number;
  /** The CPU whose NET_RX does the receive work (RPS target); default the last CPU. */
  cpu?: number;
  port?: number;
  /** tide-probes binary measure() runs. */
  probesBinary?: string;
}

export interface SoftirqStallTrigger {
  durationMs?: number;
  senders?: number;
  /** Datagram payload bytes. */
  size?: number;
  /** SO_SNDBUFFORCE of each sender: enough datagrams in flight to overflow the backlog. */
  sndbuf?: number;
}

export interface FloodResult {
  sent: number;
  errors: Record<string, number>;
}

/** What the kernel showed for the CPU while a flood ran. */
export interface SoftirqStallMeasurement {
  cpu: number;
  flood: FloodResult;
  /** tide-probes samples that covered the flood. */
  samples: number;
  /** Longest NET_RX run on the CPU (max of the per-sample max_us). */
  maxNetRxUs: number;
  maxNetRxMs: number;
  /** Longest NET_RX raise -> entry wait on the CPU. */
  maxWaitUs: number;
  netRxRuns: number;
  /** softnet_stat deltas of the CPU over the flood (`seconds` long), and the dropped rate. */
  softnetProcessed: number;
  softnetDropped: number;
  softnetTimeSqueeze: number;
  droppedPerSecond: number;
  seconds: number;
}

export interface SoftirqStallHandle {
  readonly namespaces: { client: IncidentNamespace; server: IncidentNamespace };
  readonly port: number;
  /** The CPU whose NET_RX stalls; the flood runs on senderCpu. */
  readonly cpu: number;
  readonly senderCpu: number;
  readonly rules: number;
  trigger(options?: SoftirqStallTrigger): Promise<FloodResult>;
  /** trigger() while tide-probes and softnet_stat watch `cpu`. */
  measure(options?: SoftirqStallTrigger): Promise<SoftirqStallMeasurement>;
  remedy(): Promise<void>;
  /** Rules now in the server's slow chain (0 once the table is gone). */
  slowRules(): Promise<number>;
  teardown(): Promise<void>;
}

/** One CPU's row of /proc/net/softnet_stat. */
export interface SoftnetRow {
  cpu: number;
  processed: number;
  dropped: number;
  timeSqueeze: number;
}

/** Rows are per online CPU; column 13 (kernel 5.10+) is the CPU id, older kernels: row index. */
export function parseSoftnetStat(text: string): SoftnetRow[] {
  return text
    .trim()
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((line, i) => {
      const f = line
        .trim()
        .split(/\s+/)
        .map((x) => parseInt(x, 16));
      return { cpu: f[12] ?? i, processed: f[0] ?? 0, dropped: f[1] ?? 0, timeSqueeze: f[2] ?? 0 };
    });
}

async function softnetRow(cpu: number): Promise<SoftnetRow> {
  const row = parseSoftnetStat(await readFile("/proc/net/softnet_stat", "utf8")).find((r) => r.cpu === cpu);
  if (!row) throw new LabError("bad_argument", `CPU ${cpu} has no softnet_stat row (offline?)`);
  return row;
}

/** The long chain: distinct non-matching rules nft keeps linear (no set, no merge without -o). */
export function slowRuleset(rules: number): string {
  const lines = [
    `table inet ${SLOW_TABLE} {`,
    "  chain input {",
    "    type filter hook input priority 0; policy accept;",
  ];
  for (let i = 0; i < rules; i++) {
    const saddr = `192.0.${Math.floor(i / 250) % 250}.${(i % 250) + 1}`;
    lines.push(`    ip saddr ${saddr} udp dport ${1 + (i % 60_000)} counter`);
  }
  lines.push("  }", "}", "");
  return lines.join("\n");
}

/** One netrx entry of a tide-probes sample line. */
interface NetRxEntry {
  cpu: number;
  runs: number;
  max_us: number;
  wait_max_us: number;
}

const OTHER_PROBES = [
  "listen_backlog",
  "listen_overflow",
  "connect_latency",
  "port_parity",
  "icmp_frag_needed",
];

/**
 * tide-probes with only the NET_RX probes on (the agent's loader, minus the agent): resolves once
 * it said hello with netrx_softirq on; stop() detaches and returns the samples seen.
 */
export async function startNetRxProbe(
  binary = DEFAULT_PROBES_BINARY,
  intervalMs = 500,
): Promise<{ stop(): Promise<NetRxEntry[][]> }> {
  const args = ["--interval-ms", String(intervalMs), ...OTHER_PROBES.flatMap((p) => ["--off", p])];
  const child = spawn(binary, args, { stdio: ["pipe", "pipe", "pipe"] });
  const samples: NetRxEntry[][] = [];
  let hello: Record<string, unknown> | null = null;
  let exited = false;
  let stderr = "";
  child.on("error", () => undefined);
  child.on("exit", () => {
    exited = true;
  });
  child.stdin.on("error", () => undefined);
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (c: string) => {
    stderr = (stderr + c).slice(-500);
  });
  createInterface({ input: child.stdout }).on("line", (line) => {
    try {
      const o = JSON.parse(line) as Record<string, unknown>;
      if (o["type"] === "hello") hello = o;
      if (o["type"] === "sample" && Array.isArray(o["netrx"])) samples.push(o["netrx"] as NetRxEntry[]);
    } catch {
      /* not JSON */
    }
  });
  const stop = async (): Promise<NetRxEntry[][]> => {
    if (!exited) {
      child.stdin.end(); // EOF detaches everything, as the agent's loader does
      child.kill("SIGTERM");
      for (let i = 0; i < 150 && !exited; i++) await sleep(20);
      if (!exited) child.kill("SIGKILL");
    }
    return samples;
  };
  const deadline = Date.now() + 10_000;
  while (hello === null && !exited && Date.now() < deadline) await sleep(20);
  const probes = (hello as Record<string, unknown> | null)?.["probes"] as
    Record<string, { on: boolean; reason?: string }> | undefined;
  const netrx = probes?.["netrx_softirq"];
  if (!netrx?.on) {
    await stop();
    throw new LabError(
      exited ? "process_exited" : "not_running",
      `${binary}: netrx_softirq probe not on (${netrx?.reason ?? (stderr.trim() || "no hello")})`,
    );
  }
  return { stop };
}

export async function setup(options: SoftirqStallOptions = {}): Promise<SoftirqStallHandle> {
  requireRoot();
  const cpus = availableParallelism();
  if (cpus < 2)
    throw new LabError("bad_argument", "the softirq-stall incident needs two CPUs (sender and stalled CPU)");
  const cpu = options.cpu ?? cpus - 1;
  if (!Number.isInteger(cpu) || cpu < 0 || cpu >= cpus) throw new LabError("bad_argument", `bad cpu ${cpu}`);
  const senderCpu = cpu === 0 ? 1 : 0;
  const rules = options.rules ?? 20_000;
  const port = options.port ?? 8085;
  const probesBinary = options.probesBinary ?? DEFAULT_PROBES_BINARY;
  const { client, server } = clientServerNamespaces(SOFTIRQ_STALL_PREFIX, 5);
  await cleanupStaleNamespaces(SOFTIRQ_STALL_PREFIX);
  const teardown = async () => {
    await deleteNamespace(client.name);
    await deleteNamespace(server.name);
  };
  try {
    await createClientServerPair(client, server, IFNAME);
    // RPS: the server's receive work goes to `cpu`'s backlog whatever CPU sent it. `ip netns exec`
    // mounts the namespace's own /sys, where sq0 is visible.
    const mask = (1n << BigInt(cpu)).toString(16);
    await runInNamespace(server.name, [
      "sh",
      "-c",
      `echo ${mask} > /sys/class/net/${IFNAME}/queues/rx-0/rps_cpus`,
    ]);
    // Too long for one argv string (128 KiB limit): nft reads it from a private temp file.
    const dir = await mkdtemp(path.join(tmpdir(), `${SOFTIRQ_STALL_PREFIX}`));
    try {
      const file = path.join(dir, "slow.nft");
      await writeFile(file, slowRuleset(rules));
      await runInNamespace(server.name, ["nft", "-f", file], { timeoutMs: 60_000 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  } catch (e) {
    await teardown();
    throw e;
  }
  const trigger = (t: SoftirqStallTrigger = {}): Promise<FloodResult> => {
    const durationMs = t.durationMs ?? 4_000;
    return runJsonHelper<FloodResult>(
      client.name,
      [
        PYTHON,
        incidentAsset("udp-flood.py"),
        "--host",
        server.address,
        "--port",
        String(port),
        "--cpu",
        String(senderCpu),
        "--senders",
        String(t.senders ?? 1),
        "--size",
        String(t.size ?? 64),
        "--sndbuf",
        String(t.sndbuf ?? 16 * 1024 * 1024),
        "--duration-ms",
        String(durationMs),
      ],
      durationMs + 20_000,
    );
  };
  return {
    namespaces: { client, server },
    port,
    cpu,
    senderCpu,
    rules,
    trigger,
    measure: async (t = {}) => {
      const probe = await startNetRxProbe(probesBinary);
      let samples: NetRxEntry[][] = [];
      let flood: FloodResult;
      let before: SoftnetRow;
      let after: SoftnetRow;
      let floodMs = 0;
      try {
        await sleep(600); // one sample before the flood: its max is the idle baseline
        before = await softnetRow(cpu);
        const started = Date.now();
        flood = await trigger(t);
        after = await softnetRow(cpu);
        floodMs = Date.now() - started;
        await sleep(1_100); // the sample covering the flood's end (and ksoftirqd catching up)
      } finally {
        samples = await probe.stop();
      }
      const seconds = floodMs / 1000;
      const mine = samples.map((s) => s.find((x) => x.cpu === cpu)).filter((x) => x !== undefined);
      const maxNetRxUs = Math.max(0, ...mine.map((x) => x.max_us));
      const dropped = after.dropped - before.dropped;
      return {
        cpu,
        flood,
        samples: mine.length,
        maxNetRxUs,
        maxNetRxMs: maxNetRxUs / 1000,
        maxWaitUs: Math.max(0, ...mine.map((x) => x.wait_max_us)),
        netRxRuns: (mine.at(-1)?.runs ?? 0) - (mine[0]?.runs ?? 0),
        softnetProcessed: after.processed - before.processed,
        softnetDropped: dropped,
        softnetTimeSqueeze: after.timeSqueeze - before.timeSqueeze,
        droppedPerSecond: dropped / seconds,
        seconds,
      };
    },
    remedy: async () => {
      await runInNamespace(server.name, ["nft", "delete", "table", "inet", SLOW_TABLE]);
    },
    slowRules: async () => {
      const { stdout } = await runInNamespace(server.name, ["nft", "list", "tables"]);
      if (!stdout.includes(`inet ${SLOW_TABLE}`)) return 0;
      const listed = await runInNamespace(
        server.name,
        ["nft", "-a", "list", "chain", "inet", SLOW_TABLE, "input"],
        {
          timeoutMs: 60_000,
        },
      );
      return listed.stdout.split("\n").filter((l) => l.includes(" counter ")).length;
    },
    teardown,
  };
}
