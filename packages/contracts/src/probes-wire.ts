import { z } from "zod";

/**
 * tide-probes' wire format (dataplane/probes, README.md there): the agent spawns the loader and reads
 * one JSON object per line on its stdout (diagnostics go to stderr):
 *
 *   first line:    ProbesHello (which probes are on, the histogram bucket bounds, pinning)
 *   at once:       ProbesListen for every successful listen()
 *   each interval: ProbesSample (a section is present only when its probe is on)
 *
 * Field names are snake_case because they are the wire names. Objects are not strict: a field a
 * newer loader adds is dropped, not a reason to refuse the line. A line that does not parse as
 * ProbesLine is counted and skipped by the agent.
 */

const Count = z.int().min(0).describe("A non-negative count");
const Micros = z.int().min(0);
const NetnsInode = z.int().min(0).describe("Network namespace inode (0 when the kernel gave none)");
const Port = z.int().min(0).max(65535);
const Comm = z.string().max(16).describe("The task's comm (at most TP_COMM_LEN = 16 bytes)");
const Histogram = z
  .array(Count)
  .describe("Counts per bucket; bucket i covers [bucket_lo_us[i], bucket_lo_us[i+1]) µs");
const AtMs = z.int().min(0).describe("Wall clock when the line was written, ms since the epoch");

export const ProbesProbeState = z
  .union([
    z.object({ on: z.literal(true) }),
    z.object({
      on: z.literal(false),
      reason: z.string().describe('Why it is off, in words ("tracepoint icmp:icmp_send not found", ...)'),
    }),
  ])
  .describe("One loader probe: attached, or off with the reason");
export type ProbesProbeState = z.infer<typeof ProbesProbeState>;

export const ProbesHello = z
  .object({
    type: z.literal("hello"),
    version: z.string().describe("The release version tide-probes was built as"),
    pid: z.int().min(1).describe("The loader's pid"),
    at: AtMs,
    interval_ms: z.int().min(1).describe("How often a sample line is written (--interval-ms)"),
    counters: z
      .string()
      .optional()
      .describe("What the counters mean, in words (cumulative since attach; maxima since the last sample)"),
    bucket_lo_us: z.array(Micros).describe("Lower bound of each histogram bucket, µs (0, 1, 2, 4, ...)"),
    probes: z
      .record(z.string(), ProbesProbeState)
      .describe(
        "Loader probe name (listen_backlog, listen_overflow, connect_latency, port_parity, " +
          "netrx_softirq, netrx_wait, icmp_frag_needed) -> its state",
      ),
    pin_dir: z.string().optional().describe("--pin-dir: where the aggregate maps are pinned; absent without"),
    pin_error: z.string().optional().describe("Why pinning in pin_dir failed; absent when it worked"),
  })
  .describe("The first line tide-probes writes");
export type ProbesHello = z.infer<typeof ProbesHello>;

export const ProbesListen = z
  .object({
    type: z.literal("listen"),
    at: AtMs,
    pid: z.int().min(0).describe("The listening process (tgid)"),
    comm: Comm,
    netns: NetnsInode,
    family: z.enum(["inet", "inet6", "unix", "other"]).describe("The socket's address family"),
    port: Port.describe("The local port (0 for non-inet sockets)"),
    requested: z.int().describe("The backlog passed to listen() (negative means the maximum)"),
    effective: Count.describe("sk_max_ack_backlog after the call (capped at somaxconn)"),
    limited: z.boolean().describe("True when the kernel capped it: effective < requested"),
  })
  .describe("One successful listen(), written at once");
export type ProbesListen = z.infer<typeof ProbesListen>;

export const ProbesListenOverflow = z
  .object({ netns: NetnsInode, port: Port, drops: Count.describe("Accept-queue overflows") })
  .describe("Accept-queue overflow drops of one listener (cumulative since attach)");

export const ProbesConnect = z
  .object({
    netns: NetnsInode,
    pid: z.int().min(0),
    comm: Comm,
    calls: Count.describe("connect() calls"),
    errors: Count.describe("Calls that failed"),
    eaddrnotavail: Count.describe("Calls that failed with EADDRNOTAVAIL (no local port left)"),
    total_us: Micros.describe("Time spent in connect(), µs"),
    sport_even: Count.describe("Connections that got an even source port"),
    sport_odd: Count.describe("Connections that got an odd source port"),
    hist: Histogram.describe("connect() latency histogram"),
  })
  .describe("connect() latency and source-port parity of one process (cumulative since attach)");

export const ProbesNetRx = z
  .object({
    cpu: z.int().min(0).describe("The CPU"),
    runs: Count.describe("NET_RX softirq runs"),
    total_us: Micros.describe("Time in NET_RX softirq, µs"),
    max_us: Micros.describe("Longest run since the previous sample, µs"),
    hist: Histogram.describe("Run duration histogram"),
    waits: Count.describe("Times NET_RX was raised and waited to run"),
    wait_total_us: Micros,
    wait_max_us: Micros.describe("Longest wait since the previous sample, µs"),
    wait_hist: Histogram.describe("Raise-to-run wait histogram"),
  })
  .describe("NET_RX softirq time of one CPU (cumulative since attach; maxima since the last sample)");

export const ProbesIcmpFragNeeded = z
  .object({ netns: NetnsInode, sent: Count.describe("ICMP fragmentation-needed messages sent") })
  .describe("ICMP fragmentation-needed messages one namespace sent (cumulative since attach)");

export const ProbesSample = z
  .object({
    type: z.literal("sample"),
    at: AtMs,
    listen_overflow: z.array(ProbesListenOverflow).optional().describe("Present when listen_overflow is on"),
    connect: z.array(ProbesConnect).optional().describe("Present when connect_latency is on"),
    netrx: z.array(ProbesNetRx).optional().describe("Present when netrx_softirq is on"),
    icmp_frag_needed: z
      .array(ProbesIcmpFragNeeded)
      .optional()
      .describe("Present when icmp_frag_needed is on"),
  })
  .describe("The aggregates, every interval");
export type ProbesSample = z.infer<typeof ProbesSample>;

export const ProbesLine = z
  .discriminatedUnion("type", [ProbesHello, ProbesListen, ProbesSample])
  .describe("One line tide-probes writes on stdout");
export type ProbesLine = z.infer<typeof ProbesLine>;
