import { Finding, findingFingerprint, findingIdOf, KernelFindingKind } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import { CONTAINER, ROOT, WEB, at, cpus, minute, namespace, sample } from "./__fixtures__/observations";
import { diagnose, ruleFor, rules } from "./diagnose";

/** A host with every incident at once. */
function everything(t: number) {
  return sample(t, {
    kernelRelease: "4.14.301-1",
    namespaces: [
      namespace(t, { somaxconn: 65535, ratePerS: { TcpExtTCPReqQFullDoCookies: 2, IpFragFails: 2 } }),
      namespace(t, {
        netns: WEB,
        ratePerS: { TcpExtListenOverflows: 6, TcpExtTCPReqQFullDrop: 2, TcpExtPruneCalled: 2 },
        tcpSyncookies: 0,
        listenPorts: [{ port: 53, sockets: 4096 }],
      }),
      namespace(t, { netns: CONTAINER, pids: [4242] }),
    ],
    cpus: cpus(t, 2, (cpu) => (cpu === 1 ? { softnetDropped: 3 * t } : {})),
    probeResults: {
      listenCapped: [
        {
          netnsInode: CONTAINER.inode,
          port: 8443,
          pid: 4242,
          comm: "envoy",
          requested: 65535,
          effective: 4096,
        },
      ],
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
      netRxSoftirq: [{ cpu: 0, durationUs: [0, 0, 9_000 * t], intervalMaxUs: t === 30 ? 25_000 : 900 }],
    },
    paths: [
      {
        target: "10.30.0.2",
        method: "ping",
        measuredAt: at(0),
        localMtu: 1500,
        pmtu: 1500,
        hops: null,
        reached: true,
        blackhole: true,
        evidence: "ping -M do -s 1472: 100% loss; -s 1000: ok",
      },
    ],
  });
}

describe("diagnose", () => {
  it("finds nothing on a quiet host", () => {
    expect(diagnose(minute((t) => sample(t)))).toEqual([]);
    expect(diagnose([])).toEqual([]);
  });

  it("finds every kind, valid by the contract, worst first", () => {
    const found = diagnose(minute(everything));
    for (const f of found) expect(Finding.parse(f)).toEqual(f);
    expect(new Set(found.map((f) => f.kind))).toEqual(new Set(KernelFindingKind.options));
    const ranks = found.map((f) => ({ info: 0, warn: 1, critical: 2 })[f.severity]);
    expect(ranks).toEqual([...ranks].sort((a, b) => b - a));
    for (const f of found) {
      expect(f.id).toBe(findingIdOf(findingFingerprint(f.kind, f.subject)));
      expect(f.firstSeenAt).toBe(at(60));
      expect(f.status).toBe("open");
    }
  });

  it("is deterministic and independent of input order", () => {
    const obs = minute(everything);
    expect(diagnose([...obs].reverse())).toEqual(diagnose(obs));
  });

  it("evaluates each host on its own", () => {
    const other = minute((t) =>
      sample(t + 5, {
        hostId: "lb-ams-01",
        namespaces: [namespace(t, { ratePerS: { TcpExtListenOverflows: 2 } })],
      }),
    );
    const found = diagnose([...minute((t) => sample(t)), ...other]);
    expect(found.map((f) => [f.subject.hostId, f.kind])).toEqual([["lb-ams-01", "accept_queue_overflow"]]);
  });

  it("has one rule for every kind", () => {
    for (const kind of KernelFindingKind.options) expect(rules).toContain(ruleFor(kind));
    expect(rules.flatMap((r) => r.kinds).sort()).toEqual([...KernelFindingKind.options].sort());
  });
});
