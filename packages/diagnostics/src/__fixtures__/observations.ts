/**
 * Realistic observation builders for the rule tests: a proxy host with a root namespace and a
 * container namespace, sampled once a second. Counters ramp at given rates from values a host that
 * has been up for days would show.
 */
import {
  Observation,
  type CpuObservation,
  type NamespaceObservation,
  type NetnsRef,
  type PmtuPathResult,
  type ProbeAvailability,
  type ProbeName,
  type ProbeResults,
} from "@tide/contracts";

export const HOST = "lb-fra-03";
export const T0 = Date.parse("2026-11-22T23:00:00.000Z");
export const PROBES_STARTED = "2026-11-22T22:00:00.000Z";

export const ROOT: NetnsRef = { inode: 4026531840, name: null, root: true };
export const WEB: NetnsRef = { inode: 4026532511, name: "web", root: false };
export const CONTAINER: NetnsRef = { inode: 4026532733, name: null, root: false };

/** Counter values of a host that has been up for a while (nstat names). */
export const BASE_COUNTERS: Record<string, number> = {
  TcpActiveOpens: 18_443_120,
  TcpPassiveOpens: 92_117_004,
  TcpExtListenOverflows: 1_043,
  TcpExtListenDrops: 1_051,
  TcpExtTCPReqQFullDoCookies: 12,
  TcpExtTCPReqQFullDrop: 0,
  TcpExtSyncookiesSent: 12,
  TcpExtSyncookiesRecv: 11,
  TcpExtSyncookiesFailed: 3,
  TcpExtTCPRcvCollapsed: 4_410,
  TcpExtPruneCalled: 211,
  TcpExtRcvPruned: 0,
  TcpExtOfoPruned: 2,
  IpFragFails: 0,
  IcmpMsgOutType3: 880,
  IcmpOutDestUnreachs: 880,
};

export interface NsSpec {
  netns?: NetnsRef;
  pids?: number[];
  /** Counter growth per second (nstat names). */
  ratePerS?: Record<string, number>;
  counters?: Record<string, number>;
  somaxconn?: number;
  tcpSyncookies?: 0 | 1 | 2;
  tcpMaxSynBacklog?: number;
  tcpRmem?: [number, number, number];
  ipLocalPortRange?: [number, number];
  sockstat?: NamespaceObservation["sockstat"];
  listeners?: NamespaceObservation["listeners"];
  listenPorts?: NamespaceObservation["listenPorts"];
}

export function namespace(t: number, spec: NsSpec = {}): NamespaceObservation {
  const counters: Record<string, number> = { ...BASE_COUNTERS, ...spec.counters };
  for (const [k, r] of Object.entries(spec.ratePerS ?? {}))
    counters[k] = Math.round((counters[k] ?? 0) + r * t);
  const listeners = spec.listeners ?? [
    { address: "0.0.0.0", port: 443, recvQ: 0, sendQ: 4096, requestedBacklog: null },
  ];
  return {
    netns: spec.netns ?? ROOT,
    pids: spec.pids ?? [1],
    counters,
    sockstat: spec.sockstat ?? { tcpInuse: 812, tcpOrphan: 0, tcpTw: 2_310, tcpAlloc: 950, tcpMemPages: 412 },
    sysctls: {
      somaxconn: spec.somaxconn ?? 4096,
      tcpMaxSynBacklog: spec.tcpMaxSynBacklog ?? 4096,
      tcpSyncookies: spec.tcpSyncookies ?? 1,
      tcpRmem: spec.tcpRmem ?? [4096, 131072, 6291456],
      ipLocalPortRange: spec.ipLocalPortRange ?? [32768, 60999],
      tcpMtuProbing: 0,
    },
    listeners,
    listenPorts:
      spec.listenPorts ??
      [...new Set(listeners.map((l) => l.port))].map((port) => ({
        port,
        sockets: listeners.filter((l) => l.port === port).length,
      })),
  };
}

export function cpus(
  t: number,
  n = 4,
  perCpu: (cpu: number, t: number) => Partial<CpuObservation> = () => ({}),
) {
  return Array.from({ length: n }, (_, cpu) => ({
    cpu,
    softnetProcessed: 9_000_000 + 20_000 * t,
    softnetDropped: 0,
    softnetTimeSqueeze: 140,
    netRxSoftirqs: 5_000_000 + 10_000 * t,
    ...perCpu(cpu, t),
  }));
}

export const NO_PROBE_RESULTS: ProbeResults = {
  listenCapped: [],
  listenOverflow: [],
  connectLatency: [],
  netRxSoftirq: [],
  icmpFragNeeded: [],
};

const ALL_PROBES: ProbeName[] = [
  "listen_capped",
  "listen_overflow",
  "connect_latency",
  "net_rx_softirq",
  "icmp_frag_needed",
];

export function probesOn(names: ProbeName[] = ALL_PROBES, startedAt = PROBES_STARTED): ProbeAvailability[] {
  return ALL_PROBES.map((probe) =>
    names.includes(probe)
      ? { probe, state: "on" as const, startedAt }
      : { probe, state: "off" as const, reason: "missing_privilege" as const, detail: "no CAP_BPF" },
  );
}

export interface SampleSpec {
  namespaces?: NamespaceObservation[];
  cpus?: CpuObservation[];
  probes?: ProbeAvailability[];
  probeResults?: Partial<ProbeResults>;
  paths?: PmtuPathResult[];
  kernelRelease?: string | null;
  hostId?: string;
}

/** One sample at T0 + t seconds; parsed by the contract so fixtures stay valid. */
export function sample(t: number, spec: SampleSpec = {}): Observation {
  return Observation.parse({
    schemaVersion: 1,
    hostId: spec.hostId ?? HOST,
    agentVersion: "0.1.0",
    kernelRelease: spec.kernelRelease === undefined ? "6.12.48-tide" : spec.kernelRelease,
    sampledAt: at(t),
    namespaces: spec.namespaces ?? [namespace(t)],
    cpus: spec.cpus ?? cpus(t),
    probes: spec.probes ?? probesOn(),
    probeResults: { ...NO_PROBE_RESULTS, ...spec.probeResults },
    paths: spec.paths ?? [],
  });
}

export function at(t: number): string {
  return new Date(T0 + t * 1000).toISOString();
}

/** Samples at t = 0, 1, ..., n - 1 seconds. */
export function series(n: number, make: (t: number) => Observation): Observation[] {
  return Array.from({ length: n }, (_, t) => make(t));
}

/** A minute of samples, one a second (61 samples, 60 s of rates). */
export function minute(make: (t: number) => Observation): Observation[] {
  return series(61, make);
}
