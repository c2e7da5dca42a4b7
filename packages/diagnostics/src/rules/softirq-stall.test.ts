import type { Observation } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import { cpus, minute, namespace, probesOn, sample } from "../__fixtures__/observations";
import { diagnose } from "../diagnose";

const of = (obs: Observation[]) => diagnose(obs).filter((f) => f.kind === "softirq_net_rx_stall");

/** NET_RX on 4 CPUs: 4 µs typical runs, CPU 2 has one long run at t = 42. */
function stalled(maxUs: number, probes = probesOn()) {
  return minute((t) =>
    sample(t, {
      probes,
      probeResults: {
        netRxSoftirq: [0, 1, 2, 3].map((cpu) => ({
          cpu,
          durationUs: [
            0,
            0,
            1_000_000 + 9_000 * t,
            80_000 + 900 * t,
            0,
            0,
            0,
            0,
            0,
            0,
            3 + (t >= 42 ? 1 : 0),
          ],
          intervalMaxUs: cpu === 2 && t === 42 ? maxUs : 1_800,
        })),
      },
    }),
  );
}

describe("softirq_net_rx_stall", () => {
  it.each([
    [9_000, null],
    [10_000, null],
    [12_500, "warn"],
    [100_000, "warn"],
    [140_000, "critical"],
  ])("a %s µs NET_RX run gives %s", (maxUs, severity) => {
    const found = of(stalled(maxUs));
    expect(found[0]?.severity ?? null).toBe(severity);
    if (severity !== null) {
      expect(found).toHaveLength(1);
      expect(found[0]!.subject.cpu).toBe(2);
      expect(found[0]!.evidence[0]).toMatchObject({ metric: "probe.net_rx_softirq.max", value: maxUs });
    }
  });

  it("names the cause and mentions tcp_collapse when it also runs", () => {
    const obs = stalled(140_000).map((o, t) => ({
      ...o,
      namespaces: [namespace(t, { ratePerS: { TcpExtPruneCalled: 0.5 } })],
    }));
    const [f] = of(obs);
    expect(f!.explanation).toContain("memory.stat");
    expect(f!.explanation).toContain("tcp_collapse");
    expect(f!.remedy.steps[0]!.command).toBe("cat /sys/fs/cgroup/cgroup.stat");
  });

  it("catches backlog drops from softnet_stat without the probe", () => {
    const off = probesOn([]);
    const obs = minute((t) =>
      sample(t, {
        probes: off,
        cpus: cpus(t, 4, (cpu, t) => (cpu === 1 ? { softnetDropped: 40 + 7 * t } : {})),
      }),
    );
    const [f, ...rest] = of(obs);
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ severity: "critical", subject: { cpu: 1 } });
    expect(f!.evidence[0]).toMatchObject({ metric: "softnet_stat.dropped", value: 7 });
    expect(f!.remedy.steps.map((s) => s.command)).toContain("sysctl -w net.core.netdev_max_backlog=4096");
  });

  it("ignores a long run reported while the probe is off", () => {
    expect(of(stalled(500_000, probesOn(["connect_latency"])))).toEqual([]);
  });
});
