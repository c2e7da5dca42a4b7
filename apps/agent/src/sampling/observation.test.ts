import { Observation } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import { emptyProbeResults } from "../probes/probe-state";
import { renderMetrics } from "../metrics/exposition";
import { splitTickOutput } from "./namespace-sampler";
import { buildObservation, MonotonicClock } from "./observation";

const sample = {
  namespaces: [
    {
      netns: { inode: 4026531833, name: null, root: true },
      pids: [1],
      counters: { TcpExtListenOverflows: 3 },
      sockstat: { tcpInuse: 1, tcpOrphan: 0, tcpTw: 0, tcpAlloc: 1, tcpMemPages: 2 },
      sysctls: {
        somaxconn: 4096,
        tcpMaxSynBacklog: 2048,
        tcpSyncookies: 1 as const,
        tcpRmem: [4096, 131072, 6291456] as [number, number, number],
        ipLocalPortRange: [32768, 60999] as [number, number],
        tcpMtuProbing: 0 as const,
      },
      listeners: [{ address: "0.0.0.0", port: 8080, recvQ: 0, sendQ: 128, requestedBacklog: null }],
      listenPorts: [{ port: 8080, sockets: 1 }],
    },
  ],
  cpus: [{ cpu: 0, softnetProcessed: 1, softnetDropped: 2, softnetTimeSqueeze: 0, netRxSoftirqs: 5 }],
  errors: [],
};

describe("MonotonicClock", () => {
  it("never repeats or goes back", () => {
    const times = [1000, 1000, 900, 2000];
    const clock = new MonotonicClock(() => times.shift()!);
    expect([clock.next(), clock.next(), clock.next(), clock.next()].map(Date.parse)).toEqual([
      1000, 1001, 1002, 2000,
    ]);
  });
});

describe("buildObservation", () => {
  it("produces a valid contract Observation, with requested backlogs from the listen probe", () => {
    const results = emptyProbeResults();
    results.listenCapped.push({
      netnsInode: 4026531833,
      port: 8080,
      pid: 9,
      comm: "srv",
      requested: 1024,
      effective: 128,
    });
    const o = buildObservation({
      hostId: "lb-1",
      agentVersion: "0.1.0",
      kernelRelease: "6.18",
      sampledAt: new Date(0).toISOString(),
      sample,
      probes: [],
      probeResults: results,
    });
    expect(Observation.parse(o)).toEqual(o);
    expect(o.namespaces[0]!.listeners[0]!.requestedBacklog).toBe(1024);
  });
});

describe("renderMetrics", () => {
  it("writes conventional Prometheus names with escaped labels", () => {
    const o = buildObservation({
      hostId: "lb-1",
      agentVersion: "0.1.0",
      kernelRelease: null,
      sampledAt: new Date(0).toISOString(),
      sample,
      probes: [],
      probeResults: emptyProbeResults(),
    });
    const text = renderMetrics(o, [], { bufferedSamples: 0, consoleConnected: null });
    expect(text).toContain('tide_netns_tcpext_listen_overflows_total{namespace="root",inode="4026531833"} 3');
    expect(text).toContain('tide_softnet_dropped_total{cpu="0"} 2');
    expect(text).toContain(
      'tide_listen_queue{namespace="root",inode="4026531833",address="0.0.0.0",port="8080"} 0',
    );
    expect(text).toContain("# TYPE tide_softnet_dropped_total counter");
    expect(text.match(/# TYPE tide_listen_backlog /g)).toHaveLength(1);
  });
});

describe("splitTickOutput", () => {
  it("separates sysctls from ss", () => {
    expect(splitTickOutput("a:1\n__TIDE_SS__\nLISTEN 0 1 *:1 *:*\n")).toEqual({
      sysctls: "a:1\n",
      ss: "LISTEN 0 1 *:1 *:*\n",
    });
  });
});
