import { z } from "zod";
import { jsonBoolean } from "./boolean";

/**
 * Host observations: what tide-agent samples on each host (about once a second) and sends to the
 * console in batches over its tRPC link. packages/diagnostics turns a window of them into findings.
 *
 * Counters are absolute values as the kernel reports them (never deltas): the agent may restart,
 * a namespace may be recreated, a probe may be reloaded, and only absolute values let the reader
 * tell a reset from a burst. nstat keeps one history file for all namespaces, so the agent reads
 * `nstat -asz --json` (absolute, no history update, zeros included) inside each namespace.
 *
 * Field names are camelCase (console <-> agent, like fleet.ts); counter names are the kernel's.
 */
export const OBSERVATION_SCHEMA_VERSION = 1;

/** Most network namespaces one observation may carry (a busy container host has a few hundred). */
export const OBSERVATION_MAX_NAMESPACES = 4096;

/** Most samples in one batch: ten minutes at one sample a second. */
export const OBSERVATION_BATCH_MAX = 600;

/** Number of log2 buckets in probe histograms: bucket 31 starts at 2^31 µs (about 36 minutes). */
export const LOG2_HISTOGRAM_BUCKETS = 32;

// ---------------------------------------------------------------------------------------------------
// Primitives

/** A kernel or probe counter: an absolute u64 (past 2^53 a JSON reader rounds it). */
const Counter = z
  .number()
  .nonnegative()
  .refine(Number.isInteger, "must be a whole number")
  .meta({ type: "integer" });

const Timestamp = z.iso.datetime().describe("RFC 3339 timestamp in UTC (Z)");

/**
 * Host identity. ids.ts has no host prefix yet (a host can be a director, a proxy or both), so this
 * is the host's name as its agent token knows it: letters, digits, dots, hyphens, underscores.
 */
export const HostId = z
  .string()
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,251}[A-Za-z0-9])?$/, "must be a host name")
  .describe("Host identity: the host name its agent token was issued for (e.g. lb-fra-03)");
export type HostId = z.infer<typeof HostId>;

/** nsfs inode of a network namespace (`readlink /proc/PID/ns/net` -> net:[4026531840]). */
export const NetnsInode = z.int().min(1).describe("Network namespace inode (net:[N] in /proc/PID/ns/net)");

const Port = z.int().min(0).max(65535).describe("TCP port, 0..65535");
const Pid = z.int().min(1).describe("Process id (in the root pid namespace)");
const Comm = z.string().min(1).max(15).describe("Process command name (task comm, at most 15 bytes)");
const Cpu = z.int().min(0).max(8191).describe("CPU number");

/** Identity of a network namespace, as findings name it. */
export const NetnsRef = z
  .strictObject({
    inode: NetnsInode,
    name: z
      .string()
      .min(1)
      .max(255)
      .nullable()
      .describe("Name under /run/netns (ip netns), or null for an unnamed namespace (containers)"),
    root: jsonBoolean().describe("True for the host's initial namespace (the one of PID 1)"),
  })
  .describe("A network namespace: inode, name if it has one, and whether it is the root namespace");
export type NetnsRef = z.infer<typeof NetnsRef>;

/**
 * Counters keyed by nstat's names: the /proc/net/{netstat,snmp} group followed by the field, e.g.
 * TcpExtListenOverflows, TcpExtTCPReqQFullDoCookies, IpFragFails, IcmpMsgOutType3. The agent sends
 * what the kernel has (TcpExt, IpExt, Ip, Icmp, IcmpMsg, Tcp, Udp, ...), so nothing is lost.
 */
export const CounterSnapshot = z
  .record(z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, "must be a kernel counter name"), Counter)
  .describe("Absolute kernel counters of one namespace, keyed by nstat name (TcpExtListenOverflows, ...)");
export type CounterSnapshot = z.infer<typeof CounterSnapshot>;

// ---------------------------------------------------------------------------------------------------
// Per namespace

export const Sockstat = z
  .strictObject({
    tcpInuse: Counter.describe("TCP sockets in use in this namespace (sockstat TCP inuse)"),
    tcpOrphan: Counter.describe("Orphaned TCP sockets (no file descriptor left; sockstat TCP orphan)"),
    tcpTw: Counter.describe("TCP sockets in TIME-WAIT in this namespace (sockstat TCP tw)"),
    tcpAlloc: Counter.describe("Allocated TCP sockets (sockstat TCP alloc; host-wide on current kernels)"),
    tcpMemPages: Counter.describe("TCP buffer memory in pages (sockstat TCP mem; host-wide)"),
  })
  .describe("/proc/net/sockstat TCP line read in the namespace");
export type Sockstat = z.infer<typeof Sockstat>;

const nullableSysctl = "; null when it could not be read";

export const NamespaceSysctls = z
  .strictObject({
    somaxconn: z
      .int()
      .min(0)
      .nullable()
      .describe("net.core.somaxconn of this namespace: the cap on listen() backlogs" + nullableSysctl),
    tcpMaxSynBacklog: z
      .int()
      .min(0)
      .nullable()
      .describe("net.ipv4.tcp_max_syn_backlog: bound on half-open connections" + nullableSysctl),
    tcpSyncookies: z
      .union([z.literal(0), z.literal(1), z.literal(2)])
      .nullable()
      .describe("net.ipv4.tcp_syncookies: 0 off, 1 when the SYN queue is full, 2 always" + nullableSysctl),
    tcpRmem: z
      .tuple([z.int().min(0), z.int().min(0), z.int().min(0)])
      .nullable()
      .describe("net.ipv4.tcp_rmem: min, default, max receive buffer in bytes" + nullableSysctl),
    ipLocalPortRange: z
      .tuple([Port, Port])
      .nullable()
      .describe("net.ipv4.ip_local_port_range: first and last ephemeral port" + nullableSysctl),
    tcpMtuProbing: z
      .union([z.literal(0), z.literal(1), z.literal(2)])
      .nullable()
      .describe(
        "net.ipv4.tcp_mtu_probing: 0 off, 1 after a blackhole is detected, 2 always" + nullableSysctl,
      ),
  })
  .describe("Network sysctls of this namespace (each namespace has its own values)");
export type NamespaceSysctls = z.infer<typeof NamespaceSysctls>;

export const ListeningSocket = z
  .strictObject({
    address: z.string().min(1).max(64).describe("Local address (IPv4, IPv6, or * / [::] for any)"),
    port: Port.describe("Local port"),
    recvQ: Counter.describe("ss Recv-Q of a LISTEN socket: connections waiting in the accept queue now"),
    sendQ: Counter.describe("ss Send-Q of a LISTEN socket: effective backlog (sk_max_ack_backlog)"),
    requestedBacklog: z
      .int()
      .min(0)
      .nullable()
      .describe("Backlog the process passed to listen(), if the listen probe saw the call; else null"),
  })
  .describe("One TCP LISTEN socket (`ss -ltnH` in the namespace); Recv-Q > Send-Q means overflowing");
export type ListeningSocket = z.infer<typeof ListeningSocket>;

export const ListenPortCount = z
  .strictObject({
    port: Port.describe("Local port"),
    sockets: Counter.describe("LISTEN sockets on this port, all local addresses together"),
  })
  .describe("Number of LISTEN sockets on one port of the namespace");
export type ListenPortCount = z.infer<typeof ListenPortCount>;

/** Most ESTABLISHED address:port counts one namespace carries (the busiest; the total stays complete). */
export const ESTABLISHED_MAX_ENDPOINTS = 256;

export const EstablishedCount = z
  .strictObject({
    address: z
      .string()
      .min(1)
      .max(45)
      .describe("Local IP in canonical text, IPv4 or IPv6 (an IPv4-mapped IPv6 address is given as IPv4)"),
    port: Port.describe("Local port"),
    count: Counter.describe("ESTABLISHED TCP sockets with this local address and port"),
  })
  .describe("Number of ESTABLISHED TCP sockets on one local address:port of the namespace");
export type EstablishedCount = z.infer<typeof EstablishedCount>;

export const NamespaceObservation = z
  .strictObject({
    netns: NetnsRef,
    pids: z
      .array(Pid)
      .max(64)
      .describe("Some processes living in this namespace (up to 64), to enter it with nsenter"),
    counters: CounterSnapshot,
    sockstat: Sockstat.nullable().describe("TCP socket counts, or null when sockstat could not be read"),
    sysctls: NamespaceSysctls,
    listeners: z
      .array(ListeningSocket)
      .max(4096)
      .describe("LISTEN sockets (at most 4096; ports with more are still counted in listenPorts)"),
    listenPorts: z
      .array(ListenPortCount)
      .describe("Complete LISTEN socket count per port, even when listeners was truncated"),
    established: z
      .array(EstablishedCount)
      .max(ESTABLISHED_MAX_ENDPOINTS)
      .optional()
      .describe(
        "ESTABLISHED TCP sockets per local address:port (the 256 busiest; absent from older agents), " +
          "by count descending, then port",
      ),
    establishedTotal: Counter.optional().describe(
      "All ESTABLISHED TCP sockets in the namespace, including those of address:ports left out of " +
        "established (absent from older agents)",
    ),
  })
  .describe("What the agent read inside one network namespace");
export type NamespaceObservation = z.infer<typeof NamespaceObservation>;

// ---------------------------------------------------------------------------------------------------
// Per CPU (host-wide)

export const CpuObservation = z
  .strictObject({
    cpu: Cpu,
    softnetProcessed: Counter.describe("/proc/net/softnet_stat column 1: packets processed"),
    softnetDropped: Counter.describe(
      "softnet_stat column 2: dropped, input backlog full (netdev_max_backlog)",
    ),
    softnetTimeSqueeze: Counter.describe("softnet_stat column 3: NET_RX ran out of budget with work left"),
    netRxSoftirqs: Counter.describe("/proc/softirqs NET_RX count for this CPU"),
  })
  .describe("Softnet and NET_RX softirq counters of one CPU (absolute)");
export type CpuObservation = z.infer<typeof CpuObservation>;

// ---------------------------------------------------------------------------------------------------
// BPF probes (dataplane/probes). Counts are absolute since the probe was (re)loaded; a reload resets
// them and changes the probe's startedAt.

export const ProbeName = z
  .enum(["listen_capped", "listen_overflow", "connect_latency", "net_rx_softirq", "icmp_frag_needed"])
  .describe(
    "listen_capped: sys_exit_listen, requested vs effective backlog; listen_overflow: skb:kfree_skb " +
      "TCP_LISTEN_OVERFLOW per port; connect_latency: sys_enter/exit_connect per process; net_rx_softirq: " +
      "irq:softirq_entry/exit vector 3 per CPU; icmp_frag_needed: icmp:icmp_send type 3 code 4",
  );
export type ProbeName = z.infer<typeof ProbeName>;

export const ProbeOffReason = z
  .enum([
    "disabled",
    "missing_privilege",
    "tracepoint_missing",
    "btf_missing",
    "load_failed",
    "loader_crashed",
    "unsupported_kernel",
  ])
  .describe(
    "disabled: turned off in the agent's configuration; missing_privilege: no CAP_BPF/CAP_PERFMON; " +
      "tracepoint_missing: the tracepoint does not exist on this kernel; btf_missing: no kernel BTF for " +
      "CO-RE; load_failed: the verifier or attach refused it; loader_crashed: the loader process exited; " +
      "unsupported_kernel: the record layout is not one the probe knows",
  );
export type ProbeOffReason = z.infer<typeof ProbeOffReason>;

export const ProbeAvailability = z
  .discriminatedUnion("state", [
    z
      .strictObject({
        probe: ProbeName,
        state: z.literal("on").describe("Attached and reporting"),
        startedAt: Timestamp.describe("When it was (re)loaded: its counts start at zero then"),
      })
      .describe("A running probe"),
    z
      .strictObject({
        probe: ProbeName,
        state: z.literal("off").describe("Not running: its results are absent, not zero"),
        reason: ProbeOffReason,
        detail: z.string().max(1000).describe("What the loader said, for humans"),
      })
      .describe("A probe that is not running, and why"),
  ])
  .describe("Whether one probe runs; a probe missing from the list counts as off");
export type ProbeAvailability = z.infer<typeof ProbeAvailability>;

const Log2Histogram = z
  .array(Counter)
  .max(LOG2_HISTOGRAM_BUCKETS)
  .describe(
    "log2 histogram in microseconds, absolute counts: bucket 0 holds [0, 2) µs, bucket i >= 1 holds " +
      "[2^i, 2^(i+1)) µs; trailing empty buckets may be left out",
  );

export const ListenCappedSocket = z
  .strictObject({
    netnsInode: NetnsInode,
    port: Port.describe("Local port of the listener"),
    pid: Pid,
    comm: Comm,
    requested: z.int().min(0).describe("Backlog passed to listen()"),
    effective: z.int().min(0).describe("sk_max_ack_backlog after the call: min(requested, somaxconn)"),
  })
  .describe("A listener whose listen() backlog the kernel capped (requested > effective), still open");
export type ListenCappedSocket = z.infer<typeof ListenCappedSocket>;

export const ListenOverflowCount = z
  .strictObject({
    netnsInode: NetnsInode,
    port: Port.describe("Listener port (rx_sk of skb:kfree_skb)"),
    drops: Counter.describe("Packets freed with reason TCP_LISTEN_OVERFLOW (absolute since probe start)"),
  })
  .describe("Accept queue overflow drops attributed to one listener port");
export type ListenOverflowCount = z.infer<typeof ListenOverflowCount>;

export const ConnectLatency = z
  .strictObject({
    netnsInode: NetnsInode,
    pid: Pid,
    comm: Comm,
    latencyUs: Log2Histogram.describe("connect() durations, log2 µs buckets (absolute counts)"),
    eaddrnotavail: Counter.describe("connect() calls that failed with EADDRNOTAVAIL (no free source port)"),
    evenPorts: Counter.describe("New connections (SYN_SENT) that got an even source port"),
    oddPorts: Counter.describe("New connections that got an odd source port (even half full or in use)"),
  })
  .describe("connect() latency and source-port use of one process");
export type ConnectLatency = z.infer<typeof ConnectLatency>;

export const NetRxSoftirq = z
  .strictObject({
    cpu: Cpu,
    durationUs: Log2Histogram.describe("NET_RX softirq run times on this CPU, log2 µs (absolute counts)"),
    intervalMaxUs: z
      .number()
      .nonnegative()
      .describe("Longest single NET_RX run on this CPU since the previous sample, in µs"),
  })
  .describe("NET_RX (vector 3) softirq durations of one CPU");
export type NetRxSoftirq = z.infer<typeof NetRxSoftirq>;

export const IcmpFragNeededSent = z
  .strictObject({
    netnsInode: NetnsInode,
    sent: Counter.describe("ICMP type 3 code 4 the stack tried to send (before any firewall)"),
  })
  .describe("Frag-needed messages this namespace tried to send: it is a router at an MTU step");
export type IcmpFragNeededSent = z.infer<typeof IcmpFragNeededSent>;

export const ProbeResults = z
  .strictObject({
    listenCapped: z.array(ListenCappedSocket).describe("Open listeners with a capped backlog"),
    listenOverflow: z.array(ListenOverflowCount).describe("Accept queue overflow drops per netns and port"),
    connectLatency: z.array(ConnectLatency).describe("connect() latency per process"),
    netRxSoftirq: z.array(NetRxSoftirq).describe("NET_RX softirq durations per CPU"),
    icmpFragNeeded: z.array(IcmpFragNeededSent).describe("ICMP frag-needed sent per namespace"),
  })
  .describe("Results of the probes that are on (see probes); an off probe's list is empty");
export type ProbeResults = z.infer<typeof ProbeResults>;

// ---------------------------------------------------------------------------------------------------
// Path MTU checks (tracepath / ping -M do from the agent to configured targets)

export const PmtuMethod = z
  .enum(["tracepath", "ping"])
  .describe("tracepath: `tracepath -n`; ping: `ping -M do -s SIZE` at decreasing sizes");

export const PmtuPathResult = z
  .strictObject({
    target: z.string().min(1).max(255).describe("Configured target (address or host name)"),
    method: PmtuMethod,
    measuredAt: Timestamp.describe("When the check finished"),
    localMtu: z
      .int()
      .min(68)
      .nullable()
      .describe("MTU of the first hop (tracepath's `1?: [LOCALHOST] pmtu N`), or null if unknown"),
    pmtu: z
      .int()
      .min(68)
      .nullable()
      .describe("Path MTU the check ended with (tracepath's Resume/Too many hops pmtu), or null"),
    hops: z.int().min(0).nullable().describe("Hops to the target, or null if it was not reached"),
    reached: jsonBoolean().describe("Whether any probe reached the target"),
    blackhole: jsonBoolean().describe(
      "Small probes reach the target but DF probes at the path's claimed MTU get no ICMP and no reply",
    ),
    evidence: z.string().max(4000).describe("The output lines that decided it, for humans"),
  })
  .describe("One path MTU check");
export type PmtuPathResult = z.infer<typeof PmtuPathResult>;

// ---------------------------------------------------------------------------------------------------
// bcc tools (optional extras: used when installed and able to run; Tide never depends on them)

export const BccToolName = z
  .enum(["tcpconnlat", "softirqs"])
  .describe(
    "tcpconnlat: SYN -> response time per active connection (kprobes); softirqs -d: softirq run times",
  );
export type BccToolName = z.infer<typeof BccToolName>;

export const BccTool = z
  .strictObject({
    tool: BccToolName,
    state: z.enum(["on", "off"]).describe("on: running; off: see reason"),
    reason: z
      .enum(["not_installed", "kprobes_unavailable", "kernel_headers_missing", "exited", "disabled"])
      .nullable()
      .describe("Why it is off (null when on)"),
    detail: z
      .string()
      .max(1000)
      .describe("Binary path when on; the check or stderr line that failed when off"),
  })
  .describe("One bcc tool: running or not, and why");
export type BccTool = z.infer<typeof BccTool>;

export const BccResults = z
  .strictObject({
    tools: z.array(BccTool).describe("Every bcc tool the agent knows, on or off"),
    tcpConnectLatency: z
      .array(
        z.strictObject({
          pid: Pid,
          comm: Comm,
          latencyUs: Log2Histogram.describe(
            "SYN -> response times (tcpconnlat), absolute since the tool started",
          ),
        }),
      )
      .max(256)
      .describe("tcpconnlat per process (the 256 busiest)"),
    softirqTime: z
      .array(
        z.strictObject({
          softirq: z.string().min(1).max(32).describe("net_rx, net_tx, timer, ... (bcc's names)"),
          durationUs: Log2Histogram.describe("Run times (softirqs -d), absolute since the tool started"),
        }),
      )
      .describe("softirqs -d per softirq, all CPUs"),
  })
  .describe("Results of the bcc tools that run; empty lists when none do");
export type BccResults = z.infer<typeof BccResults>;

// ---------------------------------------------------------------------------------------------------
// The observation and the batch

export const Observation = z
  .strictObject({
    schemaVersion: z.literal(OBSERVATION_SCHEMA_VERSION).describe("Observation schema version"),
    hostId: HostId,
    agentVersion: z
      .string()
      .regex(/^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?$/, "must be a semantic version")
      .describe("tide-agent version (semver)"),
    kernelRelease: z.string().max(128).nullable().describe("uname -r, or null if unknown"),
    sampledAt: Timestamp.describe("When the agent took this sample (agent clock, UTC)"),
    namespaces: z
      .array(NamespaceObservation)
      .min(1)
      .max(OBSERVATION_MAX_NAMESPACES)
      .refine((a) => new Set(a.map((n) => n.netns.inode)).size === a.length, "namespaces must not repeat")
      .describe("Every network namespace on the host the agent could enter (root first)"),
    cpus: z.array(CpuObservation).describe("softnet_stat and NET_RX softirq counters per online CPU"),
    probes: z.array(ProbeAvailability).describe("Which probes run and which are off, and why"),
    probeResults: ProbeResults,
    paths: z
      .array(PmtuPathResult)
      .describe("Latest path MTU check per target (checks run every few minutes, not every sample)"),
    bcc: BccResults.optional().describe("bcc tools, if the agent looked for them (older agents: absent)"),
  })
  .describe("One sample of one host's network stack")
  .meta({ id: "Observation" });
export type Observation = z.infer<typeof Observation>;

export const ObservationBatch = z
  .strictObject({
    observations: z
      .array(Observation)
      .min(1)
      .max(OBSERVATION_BATCH_MAX)
      .refine((a) => a.every((o) => o.hostId === a[0]!.hostId), "a batch holds one host's samples")
      .refine(
        (a) => a.every((o, i) => i === 0 || Date.parse(o.sampledAt) > Date.parse(a[i - 1]!.sampledAt)),
        "samples must be in strictly increasing time order",
      )
      .describe("Samples of one host, oldest first"),
  })
  .describe("What one agent sends in one call: up to 600 samples of its host")
  .meta({ id: "ObservationBatch" });
export type ObservationBatch = z.infer<typeof ObservationBatch>;
