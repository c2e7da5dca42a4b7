import type { Observation, PmtuPathResult } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import { ROOT, WEB, at, minute, namespace, probesOn, sample } from "../__fixtures__/observations";
import { diagnose } from "../diagnose";

const of = (kind: string, obs: Observation[]) => diagnose(obs).filter((f) => f.kind === kind);

/** What the agent makes of tracepath with the frag-needed drop rule in place (measured in the lab). */
const blackholed: PmtuPathResult = {
  target: "10.30.0.2",
  method: "tracepath",
  measuredAt: at(-20),
  localMtu: 1500,
  pmtu: 1500,
  hops: null,
  reached: true,
  blackhole: true,
  evidence:
    " 1?: [LOCALHOST]  pmtu 1500\n 2:  no reply\n     Too many hops: pmtu 1500; ping -M do -s 1400: 100% loss",
};

/** Without the rule PMTUD works: tracepath reports the 1200 link. */
const stepped: PmtuPathResult = {
  ...blackholed,
  blackhole: false,
  pmtu: 1200,
  hops: 3,
  evidence:
    " 1?: [LOCALHOST]  pmtu 1500\n 2:  10.20.0.1  0.081ms pmtu 1200\n     Resume: pmtu 1200 hops 3 back 3",
};

describe("pmtu_blackhole", () => {
  it("is critical with the path evidence and the ICMP / mtu_probing remedies", () => {
    const [f, ...rest] = of("pmtu_blackhole", [sample(0, { paths: [blackholed] })]);
    expect(rest).toEqual([]);
    expect(f!.severity).toBe("critical");
    expect(f!.subject).toMatchObject({ target: "10.30.0.2", netns: null });
    expect(f!.evidence.map((e) => e.metric)).toEqual([
      "tracepath.pmtu",
      "tracepath.local_mtu",
      "net.ipv4.tcp_mtu_probing",
    ]);
    expect(f!.explanation).toContain("Too many hops: pmtu 1500");
    expect(f!.explanation).toContain("tcp_mtu_probing is 0");
    const commands = f!.remedy.steps.map((s) => s.command);
    expect(commands).toContain("sysctl -w net.ipv4.tcp_mtu_probing=1");
    expect(commands.some((c) => c?.includes("frag-needed accept"))).toBe(true);
  });

  it("uses the latest check of a target in the window", () => {
    const obs = [
      sample(0, { paths: [blackholed] }),
      sample(30, { paths: [{ ...stepped, measuredAt: at(25) }] }),
    ];
    expect(of("pmtu_blackhole", obs)).toEqual([]);
    expect(of("mtu_mismatch", obs)[0]).toMatchObject({
      severity: "info",
      title: "MTU step towards 10.30.0.2: 1500 -> 1200",
    });
  });

  it("says nothing about a healthy path or when no check ran", () => {
    const healthy = { ...stepped, pmtu: 1500 };
    expect(diagnose([sample(0, { paths: [healthy] })]).filter((f) => f.incident === 3)).toEqual([]);
    expect(diagnose([sample(0)]).filter((f) => f.incident === 3)).toEqual([]);
  });
});

describe("mtu_mismatch at a router", () => {
  const router = (perS: number, probes = probesOn()) =>
    minute((t) =>
      sample(t, {
        namespaces: [
          namespace(t),
          namespace(t, { netns: WEB, ratePerS: { IpFragFails: perS, IcmpMsgOutType3: perS } }),
        ],
        probes,
        probeResults: { icmpFragNeeded: [{ netnsInode: WEB.inode, sent: 100 + Math.round(perS * t) }] },
      }),
    );

  it.each([
    [0.5, null],
    [3, "warn"],
    [20, "critical"],
  ])("frag-needed sent at %s/s gives %s", (perS, severity) => {
    const found = of("mtu_mismatch", router(perS));
    expect(found[0]?.severity ?? null).toBe(severity);
    if (severity !== null) {
      expect(found[0]!.subject).toMatchObject({ netns: WEB, target: null });
      expect(found[0]!.evidence[0]!.metric).toBe("probe.icmp_frag_needed.sent");
      expect(found[0]!.remedy.steps[0]!.command).toBe("ip netns exec web ip link show");
    }
  });

  it("falls back to IpFragFails when the probe is off", () => {
    const [f] = of("mtu_mismatch", router(3, probesOn(["listen_overflow"])));
    expect(f!.evidence[0]).toMatchObject({ metric: "IpFragFails", value: 3 });
    expect(f!.subject.netns).toEqual(WEB);
    expect(of("mtu_mismatch", router(3)).every((x) => x.subject.netns !== ROOT)).toBe(true);
  });
});
