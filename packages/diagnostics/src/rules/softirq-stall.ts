import type { Evidence, Finding, FindingSeverity } from "@tide/contracts";
import { severityRank } from "@tide/contracts";
import {
  counterRate,
  counterThreshold,
  finding,
  hasCoverage,
  probeOn,
  rateEvidence,
  severityAbove,
  subject,
  trustedRate,
  valueEvidence,
  type Rule,
  type RuleContext,
  overWindowText,
} from "../evaluation";
import { histogramQuantile } from "../histogram";

/**
 * Incident 5: NET_RX softirq stalls on one CPU. A slow syscall (e.g. reading memory.stat with many
 * dying memory cgroups) keeps NET_RX from running: 100 ms pings, batches of late packets, then
 * ksoftirqd catches up.
 *  - longest NET_RX run on the CPU in the window (net_rx_softirq probe): > 10 ms warn, > 100 ms critical;
 *  - softnet_stat dropped (input backlog full) rate: counter thresholds.
 * time_squeeze is context: NET_RX running out of budget is common under load and no stall by itself.
 */

function worse(a: FindingSeverity | null, b: FindingSeverity | null): FindingSeverity | null {
  if (a === null) return b;
  if (b === null) return a;
  return severityRank[a] >= severityRank[b] ? a : b;
}

/** Longest NET_RX run per CPU over the window's samples (probe on only). */
function windowMax(ctx: RuleContext): Map<number, number> {
  const out = new Map<number, number>();
  for (const o of ctx.window.samples) {
    if (!o.probes.some((p) => p.probe === "net_rx_softirq" && p.state === "on")) continue;
    for (const x of o.probeResults.netRxSoftirq)
      out.set(x.cpu, Math.max(out.get(x.cpu) ?? 0, x.intervalMaxUs));
  }
  return out;
}

/** Whether any namespace is collapsing receive queues (incident 6 runs inside NET_RX too). */
function collapsing(ctx: RuleContext): boolean {
  return ctx.window.latest.namespaces.some(
    (n) => (counterRate(ctx, n.netns.inode, "TcpExtPruneCalled")?.perSecond ?? 0) > 0,
  );
}

function evaluate(ctx: RuleContext): Finding[] {
  const out: Finding[] = [];
  const s = ctx.settings;
  const { warn, critical } = counterThreshold(ctx);
  const maxByCpu = windowMax(ctx);
  for (const cpu of ctx.window.latest.cpus) {
    const maxUs = maxByCpu.get(cpu.cpu) ?? null;
    const rates = ctx.window.rates?.cpus.get(cpu.cpu);
    const dropped = trustedRate(ctx, rates?.softnetDropped);
    const squeeze = trustedRate(ctx, rates?.softnetTimeSqueeze);
    const maxSeverity = maxUs === null ? null : severityAbove(maxUs, s.netRxMaxWarnUs, s.netRxMaxCriticalUs);
    const dropSeverity = dropped === null ? null : severityAbove(dropped.perSecond, warn, critical);
    const severity = worse(maxSeverity, dropSeverity);
    if (severity === null) continue;

    const evidence: Evidence[] = [];
    const maxEvidence =
      maxUs === null
        ? null
        : valueEvidence(
            ctx,
            "probe.net_rx_softirq.max",
            maxUs,
            "microseconds",
            { warn: s.netRxMaxWarnUs, critical: s.netRxMaxCriticalUs },
            true,
          );
    const dropEvidence =
      dropped === null ? null : rateEvidence(ctx, "softnet_stat.dropped", dropped, { warn, critical });
    // The deciding fact first.
    for (const e of maxSeverity !== null ? [maxEvidence, dropEvidence] : [dropEvidence, maxEvidence]) {
      if (e !== null) evidence.push(e);
    }
    const hist = ctx.window.rates?.netRx.get(cpu.cpu);
    const p99 = hist === undefined ? null : histogramQuantile(hist.durationUs, 0.99);
    if (p99 !== null)
      evidence.push(valueEvidence(ctx, "probe.net_rx_softirq.p99", p99, "microseconds", null, true));
    if (squeeze !== null) evidence.push(rateEvidence(ctx, "softnet_stat.time_squeeze", squeeze, null));

    const parts: string[] = [];
    if (maxSeverity !== null) {
      parts.push(
        `NET_RX softirq processing on CPU ${cpu.cpu} was held up for ${(maxUs! / 1000).toFixed(1)} ms at once ` +
          "(healthy: a few µs on average, about 1-2 ms at most under bulk load). Every packet steered to this " +
          "CPU waited that long: pings of 100 ms, batches of late packets, then ksoftirqd catching up. The " +
          "usual cause is a slow syscall or kernel path on this CPU, e.g. reading memory.stat when many " +
          "memory cgroups are dying.",
      );
    }
    if (dropSeverity !== null) {
      parts.push(
        `CPU ${cpu.cpu} dropped ${dropped!.perSecond.toFixed(1)} packets a second because its input backlog ` +
          `(net.core.netdev_max_backlog) was full (softnet_stat dropped, ${overWindowText(dropped!)}).`,
      );
    }
    if (collapsing(ctx)) {
      parts.push(
        "Receive-queue collapsing (tcp_collapse) is also running on this host and costs milliseconds inside NET_RX.",
      );
    }

    out.push(
      finding(ctx, {
        kind: "softirq_net_rx_stall",
        severity,
        subject: subject(ctx.window.hostId, { cpu: cpu.cpu }),
        title:
          maxSeverity !== null
            ? `NET_RX stalled ${(maxUs! / 1000).toFixed(1)} ms on CPU ${cpu.cpu}`
            : `Packets dropped on CPU ${cpu.cpu}: input backlog full`,
        evidence,
        explanation: parts.join(" "),
        remedy: {
          summary:
            "Find and remove what holds the CPU (dying cgroups, slow memory.stat readers); spread RX over more CPUs.",
          steps: [
            {
              scope: "host",
              action:
                "Check for dying memory cgroups and for agents reading memory.stat often (cAdvisor, " +
                "monitoring); if nr_dying_descendants is in the thousands, fix the leak or reboot/drain.",
              command: "cat /sys/fs/cgroup/cgroup.stat",
            },
            {
              scope: "host",
              action: `Spread receive processing away from CPU ${cpu.cpu} (RSS queues or RPS mask per RX queue).`,
              command: "echo MASK > /sys/class/net/DEV/queues/rx-N/rps_cpus",
            },
            ...(dropSeverity !== null
              ? [
                  {
                    scope: "host" as const,
                    action: "Give the input backlog room for bursts while the cause is fixed.",
                    command: "sysctl -w net.core.netdev_max_backlog=4096",
                  },
                ]
              : []),
          ],
        },
      }),
    );
  }
  return out;
}

export const softirqStallRule: Rule = {
  kinds: ["softirq_net_rx_stall"],
  evaluate,
  // A stall seen by the probe needs the probe to say it is over; softnet drops need counter coverage.
  canEvaluate: (ctx, f) =>
    f.evidence.some((e) => e.metric === "probe.net_rx_softirq.max")
      ? probeOn(ctx, "net_rx_softirq")
      : hasCoverage(ctx),
};
