import type { Observation } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import { CONTAINER, minute, namespace, sample } from "../__fixtures__/observations";
import { diagnose } from "../diagnose";

const of = (obs: Observation[]) => diagnose(obs).filter((f) => f.kind === "tcp_collapse");

function collapsing(
  rate: Record<string, number>,
  tcpRmem: [number, number, number] = [4096, 131072, 33554432],
) {
  return minute((t) =>
    sample(t, {
      namespaces: [namespace(t), namespace(t, { netns: CONTAINER, pids: [777], tcpRmem, ratePerS: rate })],
    }),
  );
}

describe("tcp_collapse", () => {
  it("finds pruning with a 32 MiB tcp_rmem and says to bring it down in that namespace", () => {
    const [f, ...rest] = of(collapsing({ TcpExtPruneCalled: 2, TcpExtTCPRcvCollapsed: 0.5 }));
    expect(rest).toEqual([]);
    expect(f!.severity).toBe("warn");
    expect(f!.subject.netns).toEqual(CONTAINER);
    expect(f!.explanation).toContain("tcp_rmem max here is 32 MiB");
    expect(f!.evidence.find((e) => e.metric === "net.ipv4.tcp_rmem.max")!.value).toBe(33554432);
    expect(f!.remedy.steps[0]!.command).toBe(
      'nsenter --net=/proc/777/ns/net sysctl -w net.ipv4.tcp_rmem="4096 131072 6291456"',
    );
  });

  it.each([
    [{ TcpExtPruneCalled: 1 }, null],
    [{ TcpExtTCPRcvCollapsed: 3 }, "warn"],
    [{ TcpExtTCPRcvCollapsed: 40 }, "critical"],
    [{ TcpExtPruneCalled: 2, TcpExtRcvPruned: 2 }, "critical"],
  ])("rates %o give %s", (rate, severity) => {
    expect(of(collapsing(rate))[0]?.severity ?? null).toBe(severity);
  });

  it("does not tell to shrink a tcp_rmem that is already moderate", () => {
    const [f] = of(collapsing({ TcpExtPruneCalled: 3 }, [4096, 131072, 4194304]));
    expect(f!.remedy.steps.some((s) => s.command?.includes("tcp_rmem"))).toBe(false);
    expect(f!.explanation).not.toContain("tcp_rmem max here");
  });
});
