/**
 * Synthetic agent samples for the console benchmarks (ingest-agents.ts, hardening-load.bench.ts):
 * deterministic per host index and time, so every run sends the same bytes.
 */
import type { DataPlaneState, Observation } from "@tide/contracts";
import { TIDE_VERSION } from "../support/tide-version";

// Observation generator: 3 namespaces, 2 CPUs, a few listeners, probe results; absolute counters
// that rise with time. Every 4th host has an overflowing, capped listener so diagnostics has work.
// Each namespace holds AGENT_COUNTERS counters unless asked for another number, as many as a real host's /proc/net/netstat
// and /proc/net/snmp (318 on Debian 13's kernel; TIDE_BENCH_AGENT_COUNTERS): the 20 the rules
// read, and the rest rising or flat, as most are. Samples of 20 counters made ingest, storage and
// evaluation look several times cheaper than the live lab's.
export const AGENT_COUNTERS = Number(process.env.TIDE_BENCH_AGENT_COUNTERS ?? "318");

const fillers = new Map<number, (readonly [string, number])[]>();
/** The counters beyond the rules' 20, rising (every third) or flat, as most of a real host's are. */
function fillerCounters(perNamespace: number): (readonly [string, number])[] {
  let f = fillers.get(perNamespace);
  if (!f) {
    f = Array.from(
      { length: Math.max(0, perNamespace - 20) },
      (_, k) => [`TcpExtBenchFiller${k}`, k % 3 === 0 ? 1 + (k % 11) : 0] as const,
    );
    fillers.set(perNamespace, f);
  }
  return f;
}

const ROOT = 4026531840;
const WEB = 4026532301;
const DB = 4026532402;

function hostProfile(i: number) {
  return {
    overflowPerS: i % 4 === 0 ? 3 + (i % 7) : 0,
    squeezePerS: i % 5 === 0 ? 2 : 0,
    base: 1000 * (i + 1),
  };
}

/**
 * Host `i`'s sample at `at` (`startedAt`: when its agent started), with `countersPerNamespace`
 * counters in each namespace (at least the 20 the rules read).
 */
export function observation(
  hostname: string,
  i: number,
  at: Date,
  startedAt: string,
  countersPerNamespace = AGENT_COUNTERS,
): Observation {
  const p = hostProfile(i);
  const filler = fillerCounters(countersPerNamespace);
  const t = Math.floor(at.getTime() / 1000) % 1_000_000; // seconds: counters rise with time
  const overflows = p.overflowPerS * t;
  const counters = (scale: number, extra: Record<string, number>) => ({
    TcpExtListenOverflows: 0,
    TcpExtListenDrops: 0,
    TcpExtTCPReqQFullDoCookies: 0,
    TcpExtTCPReqQFullDrop: 0,
    TcpExtSyncookiesSent: 0,
    TcpExtTCPRcvCollapsed: 0,
    TcpExtPruneCalled: 0,
    TcpExtTCPTimeouts: p.base + 2 * t * scale,
    TcpExtTCPRetransFail: 0,
    IpInReceives: p.base + 5000 * t * scale,
    IpOutRequests: p.base + 4800 * t * scale,
    IpFragFails: 0,
    IcmpMsgOutType3: 0,
    TcpActiveOpens: p.base + 50 * t * scale,
    TcpPassiveOpens: p.base + 400 * t * scale,
    TcpRetransSegs: p.base + 7 * t * scale,
    TcpInSegs: p.base + 6000 * t * scale,
    TcpOutSegs: p.base + 5900 * t * scale,
    UdpInDatagrams: p.base + 30 * t * scale,
    UdpOutDatagrams: p.base + 30 * t * scale,
    ...Object.fromEntries(filler.map(([name, perS]) => [name, p.base + perS * t * scale])),
    ...extra,
  });
  const sysctls = (somaxconn: number) => ({
    somaxconn,
    tcpMaxSynBacklog: 4096,
    tcpSyncookies: 1 as const,
    tcpRmem: [4096, 131072, 6291456] as [number, number, number],
    ipLocalPortRange: [32768, 60999] as [number, number],
    tcpMtuProbing: 0 as const,
  });
  const hist = (scale: number) => [0, 3, 10, 40, 120, 300, 200, 60, 10, 2].map((b) => b * scale * (1 + t));
  return {
    schemaVersion: 1,
    hostId: hostname,
    agentVersion: TIDE_VERSION,
    kernelRelease: "6.12.38+deb13-amd64",
    sampledAt: at.toISOString(),
    namespaces: [
      {
        netns: { inode: ROOT, name: null, root: true },
        pids: [1, 612, 733],
        counters: counters(1, {}),
        sockstat: { tcpInuse: 42, tcpOrphan: 0, tcpTw: 310, tcpAlloc: 60, tcpMemPages: 12 },
        sysctls: sysctls(4096),
        listeners: [
          { address: "0.0.0.0", port: 22, recvQ: 0, sendQ: 128, requestedBacklog: null },
          { address: "127.0.0.1", port: 9100, recvQ: 0, sendQ: 4096, requestedBacklog: 4096 },
        ],
        listenPorts: [
          { port: 22, sockets: 1 },
          { port: 9100, sockets: 1 },
        ],
      },
      {
        netns: { inode: WEB, name: "web", root: false },
        pids: [4242, 4243, 4244],
        counters: counters(3, { TcpExtListenOverflows: overflows, TcpExtListenDrops: overflows }),
        sockstat: { tcpInuse: 900, tcpOrphan: 2, tcpTw: 1200, tcpAlloc: 960, tcpMemPages: 12 },
        sysctls: sysctls(128),
        listeners: [
          {
            address: "0.0.0.0",
            port: 8080,
            recvQ: p.overflowPerS > 0 ? 129 : 3,
            sendQ: 128,
            requestedBacklog: 4096,
          },
          { address: "0.0.0.0", port: 8443, recvQ: 0, sendQ: 128, requestedBacklog: 511 },
        ],
        listenPorts: [
          { port: 8080, sockets: 1 },
          { port: 8443, sockets: 1 },
        ],
      },
      {
        netns: { inode: DB, name: null, root: false },
        pids: [5150],
        counters: counters(1, {}),
        sockstat: { tcpInuse: 120, tcpOrphan: 0, tcpTw: 15, tcpAlloc: 960, tcpMemPages: 12 },
        sysctls: sysctls(4096),
        listeners: [{ address: "0.0.0.0", port: 5432, recvQ: 0, sendQ: 244, requestedBacklog: 244 }],
        listenPorts: [{ port: 5432, sockets: 1 }],
      },
    ],
    cpus: [0, 1].map((cpu) => ({
      cpu,
      softnetProcessed: p.base + 2_000 * t,
      softnetDropped: 0,
      softnetTimeSqueeze: cpu === 1 ? p.squeezePerS * t : 0,
      netRxSoftirqs: p.base + 900 * t,
    })),
    probes: [
      { probe: "listen_capped", state: "on", startedAt },
      { probe: "listen_overflow", state: "on", startedAt },
      { probe: "connect_latency", state: "on", startedAt },
      { probe: "net_rx_softirq", state: "on", startedAt },
      { probe: "icmp_frag_needed", state: "off", reason: "disabled", detail: "" },
    ],
    probeResults: {
      listenCapped: [
        { netnsInode: WEB, port: 8080, pid: 4242, comm: "nginx", requested: 4096, effective: 128 },
        { netnsInode: WEB, port: 8443, pid: 4242, comm: "nginx", requested: 511, effective: 128 },
      ],
      listenOverflow: p.overflowPerS > 0 ? [{ netnsInode: WEB, port: 8080, drops: overflows }] : [],
      connectLatency: [
        {
          netnsInode: WEB,
          pid: 4243,
          comm: "php-fpm",
          latencyUs: hist(1),
          eaddrnotavail: 0,
          evenPorts: 25 * t,
          oddPorts: 25 * t,
        },
      ],
      netRxSoftirq: [0, 1].map((cpu) => ({ cpu, durationUs: hist(2), intervalMaxUs: 180 + 40 * cpu })),
      icmpFragNeeded: [],
    },
    paths: [],
  } satisfies Observation;
}

/** What a proxy's agent reports of its data plane (tide-redirect reachable, no counters). */
export const dataPlane: DataPlaneState[] = [
  {
    component: "redirect",
    socket: "/run/tide/redirect.sock",
    reachable: true,
    error: null,
    version: "0.4.0",
    tableHashes: {},
    directorCounters: null,
    redirectCounters: null,
  },
];
