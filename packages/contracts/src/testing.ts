/**
 * Wire lines as the data plane's helpers really printed them, for the tests of both ends: the
 * contract's schemas (probes-wire, nsdiag-wire) and the agent code that reads them; and the hello
 * of a simulated agent. Test-only: `@tide/contracts/testing`, never imported by production code.
 */
import type { AgentHello } from "./agent-protocol";

/** The hello of a simulated agent on `hostname`: protocol 1, a proxy, no probes, no data plane. */
export const testHello = (hostname: string): AgentHello => ({
  protocolVersion: 1,
  agentVersion: "0.1.0",
  hostname,
  kernelRelease: null,
  roles: ["proxy"],
  probes: [],
  dataPlane: [],
});

/** tide-probes' latency bucket lower bounds, µs (what its hello's bucket_lo_us lists). */
export const PROBES_BUCKET_LO_US = [
  0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144,
  524288, 1048576, 2097152, 4194304, 8388608, 16777216, 33554432,
];

/** A hello as dataplane/build/tide-probes wrote it (started without --pin-dir). */
export const PROBES_HELLO = {
  type: "hello",
  version: "0.1.0",
  pid: 9323,
  at: 1795390832899,
  interval_ms: 1000,
  counters: "cumulative since attach; netrx max_us and wait_max_us since the previous sample",
  bucket_lo_us: PROBES_BUCKET_LO_US,
  probes: {
    listen_backlog: { on: true },
    listen_overflow: { on: true },
    connect_latency: { on: true },
    port_parity: { on: true },
    netrx_softirq: { on: true },
    netrx_wait: { on: true },
    icmp_frag_needed: { on: false, reason: "tracepoint icmp:icmp_send not found" },
  },
};

/** A listen() event line of tide-probes. */
export const PROBES_LISTEN = {
  type: "listen",
  at: 1795390833012,
  pid: 77,
  comm: "server",
  netns: 4026532000,
  family: "inet",
  port: 8080,
  requested: 1024,
  effective: 128,
  limited: true,
};

/** A sample line of tide-probes (histograms trimmed). */
export const PROBES_SAMPLE = {
  type: "sample",
  at: 1795390833900,
  listen_overflow: [{ netns: 4026532000, port: 8080, drops: 17 }],
  connect: [
    {
      netns: 4026531833,
      pid: 42,
      comm: "curl",
      calls: 3,
      errors: 0,
      eaddrnotavail: 1,
      total_us: 90,
      sport_even: 2,
      sport_odd: 1,
      hist: [0, 1, 1, 0, 0, 1],
    },
  ],
  netrx: [
    {
      cpu: 1,
      runs: 5,
      total_us: 20,
      max_us: 7,
      hist: [1, 2, 2],
      waits: 0,
      wait_total_us: 0,
      wait_max_us: 0,
      wait_hist: [],
    },
  ],
};

/** A namespace entry as dataplane/build/tide-nsdiag printed it (files trimmed). */
export const NSDIAG_OK = {
  inode: 4026532319,
  state: "ok",
  listeners: [
    ["127.0.0.1", 9000, 3, 3],
    ["::", 9002, 0, 3],
    ["*", 9001, 0, 2],
  ],
  listeners_total: 3,
  established: [
    ["10.77.0.1", 9000, 50],
    ["fd77::1", 9002, 7],
    ["10.77.0.1", 41000, 1],
  ],
  established_total: 58,
  ports: [
    [9000, 1],
    [9001, 1],
    [9002, 1],
  ],
  sysctls: { "net/core/somaxconn": "3\n", "net/ipv4/tcp_rmem": "4096\t131072\t33554432\n" },
  netstat: "TcpExt: ListenOverflows\nTcpExt: 2\n",
  snmp: null,
  sockstat: "sockets: used 10\nTCP: inuse 7 orphan 0 tw 0 alloc 10 mem 38\n",
};

/** A namespace tide-nsdiag could not enter. */
export const NSDIAG_GONE = {
  inode: 4026532500,
  state: "gone",
  error: "open /run/netns/web: No such file or directory",
};
