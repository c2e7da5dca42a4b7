import type { Observation } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import { WEB, minute, namespace, sample } from "../__fixtures__/observations";
import { diagnose } from "../diagnose";

const of = (kind: string, obs: Observation[]) => diagnose(obs).filter((f) => f.kind === kind);

describe("syn_queue_overflow", () => {
  it("calls legitimate load what it is when cookies come back", () => {
    const obs = minute((t) =>
      sample(t, {
        namespaces: [
          namespace(t, {
            ratePerS: { TcpExtTCPReqQFullDoCookies: 12, TcpExtSyncookiesSent: 12, TcpExtSyncookiesRecv: 11 },
          }),
        ],
      }),
    );
    const [f] = of("syn_queue_overflow", obs);
    expect(f!.severity).toBe("critical");
    expect(f!.evidence[0]).toMatchObject({ metric: "TcpExtTCPReqQFullDoCookies", value: 12 });
    expect(f!.explanation).toContain("not an attack");
    expect(f!.remedy.steps.map((s) => s.command)).toContain("sysctl -w net.ipv4.tcp_max_syn_backlog=16384");
  });

  it("flags a real flood when almost no cookie comes back", () => {
    const obs = minute((t) =>
      sample(t, {
        namespaces: [
          namespace(t, {
            ratePerS: { TcpExtTCPReqQFullDoCookies: 3, TcpExtSyncookiesSent: 3000, TcpExtSyncookiesRecv: 30 },
          }),
        ],
      }),
    );
    const [f] = of("syn_queue_overflow", obs);
    expect(f!.severity).toBe("warn");
    expect(f!.explanation).toContain("real (spoofed) SYN flood");
  });

  it.each([
    [1, null],
    [2, "warn"],
    [6, "critical"],
  ])("TCPReqQFullDoCookies at %s/s gives %s", (perS, severity) => {
    const obs = minute((t) =>
      sample(t, { namespaces: [namespace(t, { ratePerS: { TcpExtTCPReqQFullDoCookies: perS } })] }),
    );
    expect(of("syn_queue_overflow", obs)[0]?.severity ?? null).toBe(severity);
  });
});

describe("syn_flood_drops", () => {
  it("tells to turn cookies on in the namespace that has them off", () => {
    const obs = minute((t) =>
      sample(t, {
        namespaces: [
          namespace(t),
          namespace(t, {
            netns: WEB,
            tcpSyncookies: 0,
            tcpMaxSynBacklog: 512,
            ratePerS: { TcpExtTCPReqQFullDrop: 4 },
          }),
        ],
      }),
    );
    const found = of("syn_flood_drops", obs);
    expect(found).toHaveLength(1);
    const f = found[0]!;
    expect(f.severity).toBe("warn");
    expect(f.subject.netns).toEqual(WEB);
    expect(f.title).toContain("cookies off");
    expect(f.evidence.map((e) => [e.metric, e.value])).toEqual([
      ["TcpExtTCPReqQFullDrop", 4],
      ["net.ipv4.tcp_syncookies", 0],
    ]);
    expect(f.remedy.steps[0]!.command).toBe("ip netns exec web sysctl -w net.ipv4.tcp_syncookies=1");
    expect(f.remedy.steps.map((s) => s.command)).toContain(
      "ip netns exec web sysctl -w net.ipv4.tcp_max_syn_backlog=16384",
    );
    // Cookies are off here, so no cookie finding.
    expect(of("syn_queue_overflow", obs)).toEqual([]);
  });

  it("does not suggest enabling cookies that are already on", () => {
    const obs = minute((t) =>
      sample(t, { namespaces: [namespace(t, { ratePerS: { TcpExtTCPReqQFullDrop: 9 } })] }),
    );
    const [f] = of("syn_flood_drops", obs);
    expect(f!.severity).toBe("critical");
    expect(f!.remedy.steps.some((s) => s.command?.includes("tcp_syncookies"))).toBe(false);
  });
});
