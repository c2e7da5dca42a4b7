import type { Observation } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import { ROOT, minute, namespace, probesOn, sample } from "../__fixtures__/observations";
import { diagnose } from "../diagnose";

const of = (obs: Observation[], options = {}) =>
  diagnose(obs, options).filter((f) => f.kind === "connect_port_exhaustion");

interface Load {
  /** connect() calls per second landing in each log2 µs bucket. */
  perBucket: Record<number, number>;
  oddShare?: number;
  failPerS?: number;
  inuse?: number;
}

/** haproxy opening 200 connections a second from a 2,000-port range (the lab's 50000-51999). */
function connecting(load: Load, probes = probesOn()) {
  return minute((t) => {
    const latencyUs: number[] = [];
    for (const [b, n] of Object.entries(load.perBucket)) latencyUs[Number(b)] = 5_000 + n * t;
    for (let i = 0; i < latencyUs.length; i++) latencyUs[i] ??= 0;
    const calls = Object.values(load.perBucket).reduce((s, n) => s + n, 0) * t;
    const odd = Math.round(calls * (load.oddShare ?? 0));
    return sample(t, {
      namespaces: [
        namespace(t, {
          ipLocalPortRange: [50000, 51999],
          sockstat: { tcpInuse: load.inuse ?? 300, tcpOrphan: 0, tcpTw: 40, tcpAlloc: 400, tcpMemPages: 90 },
        }),
      ],
      probes,
      probeResults: {
        connectLatency: [
          {
            netnsInode: ROOT.inode,
            pid: 3121,
            comm: "haproxy",
            latencyUs,
            eaddrnotavail: 17 + Math.round((load.failPerS ?? 0) * t),
            evenPorts: 90_000 + calls - odd,
            oddPorts: 1_000 + odd,
          },
        ],
      },
    });
  });
}

describe("connect_port_exhaustion", () => {
  it("is warn when connect() is slow and most new connections get odd ports", () => {
    const [f, ...rest] = of(connecting({ perBucket: { 4: 20, 6: 180 }, oddShare: 0.9 }));
    expect(rest).toEqual([]);
    expect(f!.severity).toBe("warn");
    expect(f!.subject).toMatchObject({ netns: ROOT, process: { pid: 3121, comm: "haproxy" } });
    const byMetric = Object.fromEntries(f!.evidence.map((e) => [e.metric, e.value]));
    expect(byMetric["probe.connect_latency.p99"]).toBeGreaterThan(64);
    expect(byMetric["probe.connect_latency.odd_port_share"]).toBe(0.9);
    expect(byMetric["net.ipv4.ip_local_port_range.size"]).toBe(2000);
    expect(f!.remedy.steps[0]!.command).toContain("IP_LOCAL_PORT_RANGE");
    expect(f!.remedy.steps[0]!.command).toContain("51");
  });

  it("takes sockstat as the range-in-use signal too", () => {
    const [f] = of(connecting({ perBucket: { 6: 200 }, oddShare: 0, inuse: 1_500 }));
    expect(f!.severity).toBe("warn");
  });

  it("is critical as soon as connect() fails with EADDRNOTAVAIL", () => {
    const [f] = of(connecting({ perBucket: { 6: 150 }, oddShare: 1, failPerS: 0.5 }));
    expect(f!.severity).toBe("critical");
    expect(f!.evidence[0]).toMatchObject({ metric: "probe.connect_latency.eaddrnotavail", value: 0.5 });
    expect(f!.title).toContain("EADDRNOTAVAIL");
  });

  it("needs both: slow but uncrowded, or crowded but fast, is no finding", () => {
    expect(of(connecting({ perBucket: { 6: 200 }, oddShare: 0 }))).toEqual([]);
    expect(of(connecting({ perBucket: { 4: 200 }, oddShare: 1 }))).toEqual([]);
  });

  it("switches at the p99 threshold", () => {
    const obs = connecting({ perBucket: { 6: 200 }, oddShare: 1 });
    expect(of(obs, { connectP99WarnUs: 127 })).toHaveLength(1);
    expect(of(obs, { connectP99WarnUs: 128 })).toHaveLength(0);
  });

  it("makes no finding without the connect probe, whatever sockstat says", () => {
    const off = probesOn(["listen_overflow", "net_rx_softirq"]);
    expect(of(connecting({ perBucket: { 6: 200 }, oddShare: 1, inuse: 1_900 }, off))).toEqual([]);
  });

  it("ignores the 17 failures from before the window", () => {
    expect(of(connecting({ perBucket: { 4: 200 }, oddShare: 0 }))).toEqual([]);
  });
});
