import { findingFingerprint, findingIdOf, type Finding, type Observation } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import { ROOT, WEB, at, minute, namespace, probesOn, sample, series } from "./__fixtures__/observations";
import { diagnose } from "./diagnose";
import { resolve } from "./resolve";

const overflowing = (t: number, perS = 3) =>
  sample(t, {
    namespaces: [namespace(t), namespace(t, { netns: WEB, ratePerS: { TcpExtListenOverflows: perS } })],
  });

/** Samples t0 .. t0 + n - 1. */
const from = (t0: number, n: number, make: (t: number) => Observation) => series(n, (i) => make(t0 + i));

describe("resolve", () => {
  const first = diagnose(minute((t) => overflowing(t)));

  it("resolves a finding the next window no longer shows", () => {
    const window = from(100, 61, (t) => overflowing(t, 0));
    const r = resolve(first, diagnose(window), window);
    expect(r.open).toEqual([]);
    expect(r.unevaluated).toEqual([]);
    expect(r.resolved).toHaveLength(1);
    expect(r.resolved[0]!.reason).toBe("cleared");
    expect(r.resolved[0]!.finding).toMatchObject({
      id: first[0]!.id,
      status: "resolved",
      resolvedAt: at(160),
    });
  });

  it("keeps firstSeenAt and the acknowledged status of a finding still present", () => {
    const acked = first.map((f) => ({ ...f, status: "acknowledged" as const }));
    const window = from(100, 61, (t) => overflowing(t, 7));
    const r = resolve(acked, diagnose(window), window);
    expect(r.open).toHaveLength(1);
    expect(r.open[0]).toMatchObject({
      id: first[0]!.id,
      status: "acknowledged",
      severity: "critical",
      firstSeenAt: at(60),
      lastSeenAt: at(160),
    });
    expect(r.resolved).toEqual([]);
  });

  it("leaves findings open when the window cannot tell: one sample, or the host is silent", () => {
    const one = [overflowing(100, 0)];
    expect(resolve(first, diagnose(one), one).unevaluated.map((f) => f.id)).toEqual([first[0]!.id]);
    const otherHost = minute((t) => sample(t, { hostId: "lb-ams-01" }));
    expect(resolve(first, diagnose(otherHost), otherHost).unevaluated).toHaveLength(1);
  });

  it("resolves when the namespace is gone", () => {
    const window = from(100, 61, (t) => sample(t));
    const r = resolve(first, diagnose(window), window);
    expect(r.resolved.map((x) => x.reason)).toEqual(["subject_gone"]);
  });

  it("does not resolve a probe-based finding because the probe went off", () => {
    const slow = (t: number, probes = probesOn()) =>
      sample(t, {
        namespaces: [namespace(t, { ipLocalPortRange: [50000, 51999] })],
        probes,
        probeResults: {
          connectLatency: [
            {
              netnsInode: ROOT.inode,
              pid: 3121,
              comm: "haproxy",
              latencyUs: [0, 0, 0, 0, 0, 0, 200 * t],
              eaddrnotavail: 0,
              evenPorts: 0,
              oddPorts: 200 * t,
            },
          ],
        },
      });
    const before = diagnose(minute((t) => slow(t)));
    expect(before.map((f) => f.kind)).toEqual(["connect_port_exhaustion"]);
    const off = from(100, 61, (t) => slow(t, probesOn(["listen_overflow"])));
    const r = resolve(before, diagnose(off), off);
    expect(r.resolved).toEqual([]);
    expect(r.unevaluated.map((f) => f.id)).toEqual([before[0]!.id]);
  });

  it("resolves a path finding only when its target is checked again", () => {
    const path = {
      target: "10.30.0.2",
      method: "tracepath" as const,
      measuredAt: at(0),
      localMtu: 1500,
      pmtu: 1500,
      hops: null,
      reached: true,
      blackhole: true,
      evidence: "Too many hops: pmtu 1500",
    };
    const before = diagnose([sample(0, { paths: [path] })]);
    const unchecked = [sample(400)];
    expect(resolve(before, diagnose(unchecked), unchecked).unevaluated).toHaveLength(1);
    const fixed = [sample(400, { paths: [{ ...path, measuredAt: at(390), blackhole: false, hops: 3 }] })];
    expect(resolve(before, diagnose(fixed), fixed).resolved.map((x) => x.reason)).toEqual(["cleared"]);
  });

  it("ignores previous findings that are already resolved", () => {
    const done = first.map((f) => ({ ...f, status: "resolved" as const, resolvedAt: at(61) }));
    const window = from(100, 61, (t) => overflowing(t, 0));
    expect(resolve(done, diagnose(window), window)).toEqual({ open: [], resolved: [], unevaluated: [] });
  });
});

describe("resolve, NET_RX stalls", () => {
  const stall = (t: number, maxUs: number, probes = probesOn()) =>
    sample(t, {
      probes,
      probeResults: { netRxSoftirq: [{ cpu: 3, durationUs: [0, 0, 9_000 * t], intervalMaxUs: maxUs }] },
    });

  it("keeps a probe-seen stall open while the probe is off, resolves it once the probe sees none", () => {
    const before = diagnose(minute((t) => stall(t, t === 30 ? 150_000 : 900)));
    expect(before.map((f) => [f.kind, f.subject.cpu, f.severity])).toEqual([
      ["softirq_net_rx_stall", 3, "critical"],
    ]);
    const off = from(100, 61, (t) => stall(t, 0, probesOn(["listen_overflow"])));
    expect(resolve(before, diagnose(off), off).unevaluated).toHaveLength(1);
    const calm = from(100, 61, (t) => stall(t, 900));
    expect(resolve(before, diagnose(calm), calm).resolved.map((x) => x.reason)).toEqual(["cleared"]);
  });

  describe("a port learned or lost keeps the finding", () => {
    /** Overflowing "web"; with `port`, ss catches Recv-Q above Send-Q on :8080 in some samples. */
    const web = (t: number, port: boolean, perS = 7) =>
      sample(t, {
        namespaces: [
          namespace(t),
          namespace(t, {
            netns: WEB,
            ratePerS: { TcpExtListenOverflows: perS },
            somaxconn: 10,
            listeners: [
              { address: "0.0.0.0", port: 8080, recvQ: port ? 11 : 0, sendQ: 10, requestedBacklog: null },
            ],
          }),
        ],
      });

    it("refines a namespace-wide finding to its port, then keeps it when the port is not seen again", () => {
      const wide = diagnose(minute((t) => web(t, false)));
      expect(wide.map((f) => f.subject.port)).toEqual([null]);

      const w2 = from(60, 61, (t) => web(t, t === 110));
      const refined = resolve(wide, diagnose(w2), w2);
      expect(refined.resolved).toEqual([]);
      expect(refined.open).toHaveLength(1);
      expect(refined.open[0]).toMatchObject({
        id: wide[0]!.id,
        fingerprint: wide[0]!.fingerprint,
        firstSeenAt: wide[0]!.firstSeenAt,
        subject: { port: 8080 },
      });

      // Stored as refined; the next window has no ss evidence: still the same finding, port lost.
      const w3 = from(180, 61, (t) => web(t, false));
      const again = resolve(refined.open, diagnose(w3), w3);
      expect(again.resolved).toEqual([]);
      expect(again.open.map((f) => [f.id, f.subject.port])).toEqual([[wide[0]!.id, null]]);

      // And it still resolves when the overflow stops.
      const quiet = from(300, 61, (t) => web(t, false, 0));
      const done = resolve(again.open, diagnose(quiet), quiet);
      expect(done.resolved.map((r) => [r.finding.id, r.reason])).toEqual([[wide[0]!.id, "cleared"]]);
    });

    it("does not merge different ports or different namespaces", () => {
      const w = from(60, 61, (t) => web(t, true));
      const on8080 = diagnose(w);
      expect(on8080.map((f) => f.subject.port)).toEqual([8080]);
      const storedAs = (subject: Finding["subject"]): Finding => {
        const fingerprint = findingFingerprint(on8080[0]!.kind, subject);
        return { ...on8080[0]!, subject, fingerprint, id: findingIdOf(fingerprint) };
      };
      const other = [
        storedAs({ ...on8080[0]!.subject, port: 9090 }),
        storedAs({ ...on8080[0]!.subject, netns: ROOT, port: null }),
      ];
      const r = resolve(other, on8080, w);
      expect(r.open.map((f) => f.id)).toEqual([on8080[0]!.id]);
      expect(r.resolved.map((x) => x.finding.subject.port).sort()).toEqual([9090, null].sort());
    });
  });
});
