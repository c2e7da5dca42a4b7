/**
 * A host as tide-agent reports it, for e2e specs that need findings: a host token made through the
 * REST API as the signed-in admin, the agent's hello, and realistic observations (a root namespace
 * and "web", whose nginx listener on :8080 is capped at 128 and overflows at a chosen rate).
 * host-health.spec.ts and findings.spec.ts share it.
 */
import type { APIRequestContext, Page } from "@playwright/test";
import { expect } from "./fixtures";
import { TIDE_VERSION } from "./tide-version";

export const ROOT_INODE = 4026531840;
export const WEB_INODE = 4026532301;
export const PORT = 8080;

export interface Sampling {
  hostname: string;
  /** Seconds since the first sample: counters are absolute, so they grow with t. */
  t: number;
  at: Date;
  overflowPerS: number;
  paths?: unknown[];
}

/** One realistic Observation: root namespace plus "web" whose nginx listener is capped at 128. */
export function observation(s: Sampling) {
  const listenOverflows = s.overflowPerS * s.t;
  // One probe start for the host (an hour before its first sample): rules only trust a probe's
  // counts between samples that name the same start, so it must not move with the wall clock.
  const probesStartedAt = new Date(s.at.getTime() - s.t * 1000 - 3_600_000).toISOString();
  const counters = (extra: Record<string, number>) => ({
    TcpExtListenDrops: 0,
    TcpExtTCPReqQFullDoCookies: 0,
    TcpExtTCPReqQFullDrop: 0,
    TcpExtSyncookiesSent: 0,
    TcpExtTCPRcvCollapsed: 0,
    TcpExtPruneCalled: 0,
    IpFragFails: 0,
    IcmpMsgOutType3: 0,
    TcpActiveOpens: 1000 + 50 * s.t,
    TcpPassiveOpens: 5000 + 400 * s.t,
    ...extra,
  });
  const sysctls = (somaxconn: number) => ({
    somaxconn,
    tcpMaxSynBacklog: 4096,
    tcpSyncookies: 1 as const,
    tcpRmem: [4096, 131072, 6291456],
    ipLocalPortRange: [32768, 60999],
    tcpMtuProbing: 0 as const,
  });
  return {
    schemaVersion: 1,
    hostId: s.hostname,
    agentVersion: TIDE_VERSION,
    kernelRelease: "6.12.38+deb13-amd64",
    sampledAt: s.at.toISOString(),
    namespaces: [
      {
        netns: { inode: ROOT_INODE, name: null, root: true },
        pids: [1],
        counters: counters({ TcpExtListenOverflows: 0 }),
        sockstat: { tcpInuse: 42, tcpOrphan: 0, tcpTw: 310, tcpAlloc: 60, tcpMemPages: 12 },
        sysctls: sysctls(4096),
        listeners: [{ address: "0.0.0.0", port: 22, recvQ: 0, sendQ: 128, requestedBacklog: null }],
        listenPorts: [{ port: 22, sockets: 1 }],
      },
      {
        netns: { inode: WEB_INODE, name: "web", root: false },
        pids: [4242],
        counters: counters({ TcpExtListenOverflows: listenOverflows, TcpExtListenDrops: listenOverflows }),
        sockstat: { tcpInuse: 900, tcpOrphan: 2, tcpTw: 1200, tcpAlloc: 960, tcpMemPages: 12 },
        sysctls: sysctls(128),
        // ss -ltn while the accept queue is full: Recv-Q is backlog + 1.
        listeners: [{ address: "0.0.0.0", port: PORT, recvQ: 129, sendQ: 128, requestedBacklog: 4096 }],
        listenPorts: [{ port: PORT, sockets: 1 }],
      },
    ],
    cpus: [0, 1].map((cpu) => ({
      cpu,
      softnetProcessed: 100_000 + 2_000 * s.t,
      softnetDropped: 0,
      softnetTimeSqueeze: cpu === 1 ? 3 * s.t : 0,
      netRxSoftirqs: 50_000 + 900 * s.t,
    })),
    probes: [
      { probe: "listen_capped", state: "on", startedAt: probesStartedAt },
      { probe: "listen_overflow", state: "on", startedAt: probesStartedAt },
      { probe: "connect_latency", state: "off", reason: "disabled", detail: "probes.connect_latency=false" },
      { probe: "net_rx_softirq", state: "off", reason: "btf_missing", detail: "no /sys/kernel/btf/vmlinux" },
      { probe: "icmp_frag_needed", state: "off", reason: "disabled", detail: "" },
    ],
    probeResults: {
      listenCapped: [
        { netnsInode: WEB_INODE, port: PORT, pid: 4242, comm: "nginx", requested: 4096, effective: 128 },
      ],
      listenOverflow: [{ netnsInode: WEB_INODE, port: PORT, drops: listenOverflows }],
      connectLatency: [],
      netRxSoftirq: [],
      icmpFragNeeded: [],
    },
    paths: s.paths ?? [],
  };
}

export const dataPlane = [
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

/** A host token for a new host, made through the REST API as the signed-in admin. */
export async function createHostToken(page: Page, hostname: string): Promise<string> {
  const res = await page.request.post("/api/v1/host-tokens", { data: { hostname } });
  expect(res.status(), await res.text()).toBe(200);
  const body = (await res.json()) as { token: string };
  expect(body.token).toMatch(/^tide_host_/);
  return body.token;
}

export async function hello(request: APIRequestContext, token: string, hostname: string): Promise<void> {
  const res = await request.post("/api/v1/agent/hello", {
    headers: { authorization: `Bearer ${token}` },
    data: {
      protocolVersion: 1,
      agentVersion: TIDE_VERSION,
      hostname,
      kernelRelease: "6.12.38+deb13-amd64",
      roles: ["proxy"],
      probes: observation({ hostname, t: 0, at: new Date(), overflowPerS: 0 }).probes,
      dataPlane,
    },
  });
  expect(res.status(), await res.text()).toBe(200);
}

/** Posts samples t = from..to-1, one second apart, ending about now. */
export async function postSamples(
  request: APIRequestContext,
  token: string,
  base: {
    hostname: string;
    start: number;
    overflowPerS: number;
    paths?: unknown[];
    /** Changes each sample (e.g. probes and their results). */
    edit?: (o: ReturnType<typeof observation>, t: number) => void;
    dataPlane?: unknown[];
  },
  from: number,
  to: number,
): Promise<void> {
  const observations = [];
  for (let t = from; t < to; t++) {
    const o = observation({ ...base, t, at: new Date(base.start + t * 1000) });
    base.edit?.(o, t);
    observations.push(o);
  }
  const res = await request.post("/api/v1/agent/observations", {
    headers: { authorization: `Bearer ${token}` },
    data: { observations, dataPlane: base.dataPlane ?? dataPlane, replayed: false },
  });
  expect(res.status(), await res.text()).toBe(200);
}
