import type { Evidence, Finding, FindingSeverity } from "@tide/contracts";
import {
  finding,
  hasCoverage,
  latestNamespace,
  netnsLabel,
  probeOn,
  round,
  severityAbove,
  subject,
  sysctlCommand,
  valueEvidence,
  type Rule,
  type RuleContext,
} from "../evaluation";
import { histogramCount, histogramQuantile } from "../histogram";

/**
 * Incident 4: slow connect() from ephemeral port exhaustion. The kernel scans even source ports
 * first, then odd; once half the range is used every connect() scans the whole even half.
 *
 * Needs the connect_latency probe (per-process histogram, EADDRNOTAVAIL, source-port parity): without
 * it sockstat alone cannot tell outbound from inbound sockets, so no finding is made.
 *  - critical: connect() failed with EADDRNOTAVAIL in the window (> 0/s average).
 *  - warn: p99 > CONNECT_P99_WARN_US and more than half the range in use, seen as most new connections
 *    getting odd ports (the even half is full) or sockstat TCP inuse + tw above half the range.
 */

/** Fewest connect() calls in the window for a p99 to mean something (1% of 100 is one call). */
export const CONNECT_MIN_CALLS = 100;

/** EADDRNOTAVAIL per second (window average) above which connect failures are critical: any. */
export const CONNECT_EADDRNOTAVAIL_CRITICAL_PER_S = 0;

function evaluate(ctx: RuleContext): Finding[] {
  if (!probeOn(ctx, "connect_latency") || !hasCoverage(ctx)) return [];
  const out: Finding[] = [];
  const s = ctx.settings;
  for (const c of [...(ctx.window.rates?.connect.values() ?? [])].sort((a, b) => a.pid - b.pid)) {
    const ns = latestNamespace(ctx, c.netnsInode);
    if (ns === undefined) continue;
    const calls = histogramCount(c.latencyUs);
    const failPerS = c.seconds > 0 ? c.eaddrnotavail / c.seconds : 0;
    const failing = failPerS > CONNECT_EADDRNOTAVAIL_CRITICAL_PER_S;
    if (calls < CONNECT_MIN_CALLS && !failing) continue;
    const p99 = histogramQuantile(c.latencyUs, 0.99);
    const newConnections = c.evenPorts + c.oddPorts;
    const oddShare = newConnections > 0 ? c.oddPorts / newConnections : null;
    const range = ns.sysctls.ipLocalPortRange;
    const rangeSize = range === null ? null : range[1] - range[0] + 1;
    const sockShare =
      rangeSize !== null && rangeSize > 0 && ns.sockstat !== null
        ? (ns.sockstat.tcpInuse + ns.sockstat.tcpTw) / rangeSize
        : null;
    const crowded =
      (oddShare !== null && oddShare > s.connectRangeInUseWarn) ||
      (sockShare !== null && sockShare > s.connectRangeInUseWarn);
    const slow = p99 !== null && severityAbove(p99, s.connectP99WarnUs, null) !== null;
    let severity: FindingSeverity | null = null;
    if (failing) severity = "critical";
    else if (slow && crowded) severity = "warn";
    if (severity === null) continue;

    const evidence: Evidence[] = [];
    if (failing || c.eaddrnotavail > 0) {
      evidence.push({
        metric: "probe.connect_latency.eaddrnotavail",
        value: round(failPerS),
        unit: "per_second",
        ratePerSecond: round(failPerS),
        threshold: { warn: null, critical: CONNECT_EADDRNOTAVAIL_CRITICAL_PER_S },
        window: { from: ctx.window.rates!.from, to: ctx.window.rates!.to, seconds: round(c.seconds) },
      });
    }
    if (p99 !== null) {
      evidence.push(
        valueEvidence(
          ctx,
          "probe.connect_latency.p99",
          p99,
          "microseconds",
          { warn: s.connectP99WarnUs, critical: null },
          true,
        ),
      );
    }
    evidence.push(valueEvidence(ctx, "probe.connect_latency.calls", calls, "count", null, true));
    if (oddShare !== null) {
      evidence.push(
        valueEvidence(
          ctx,
          "probe.connect_latency.odd_port_share",
          oddShare,
          "ratio",
          { warn: s.connectRangeInUseWarn, critical: null },
          true,
        ),
      );
    }
    if (sockShare !== null) {
      evidence.push(
        valueEvidence(ctx, "sockstat.tcp_inuse_tw_per_range", sockShare, "ratio", {
          warn: s.connectRangeInUseWarn,
          critical: null,
        }),
      );
    }
    if (rangeSize !== null)
      evidence.push(valueEvidence(ctx, "net.ipv4.ip_local_port_range.size", rangeSize, "ports"));

    const where = netnsLabel(ns);
    const rangeText =
      range === null ? "the ephemeral port range" : `ip_local_port_range ${range[0]}-${range[1]}`;
    const lo = range?.[0] ?? 32768;
    out.push(
      finding(ctx, {
        kind: "connect_port_exhaustion",
        severity,
        subject: subject(ctx.window.hostId, { netns: ns.netns, process: { pid: c.pid, comm: c.comm } }),
        title: failing
          ? `connect() failing with EADDRNOTAVAIL in ${c.comm}`
          : `Slow connect() in ${c.comm}: ephemeral ports crowded`,
        evidence,
        explanation:
          `${c.comm} (pid ${c.pid}, ${where}) ` +
          (failing
            ? `gets EADDRNOTAVAIL from connect() ${failPerS.toFixed(1)} times a second: no source port of ` +
              `${rangeText} is free for the destination, so connections fail. `
            : `waits ${p99!.toFixed(0)} µs at p99 in connect() (${calls} calls in the window). `) +
          "The kernel looks for a free source port by scanning even ports first, then odd; once half of " +
          "the range is in use every connect() walks the whole even half before it finds one. Measured " +
          "with a 2,000-port range: 22 µs per connect with free ports, 75 µs with 1,000 held, 109 µs " +
          "full." +
          (oddShare !== null ? ` ${(oddShare * 100).toFixed(0)}% of new connections got an odd port.` : ""),
        remedy: {
          summary:
            "Give each socket its own small port window with IP_LOCAL_PORT_RANGE, reuse connections, widen the range.",
          steps: [
            {
              scope: "application",
              action:
                "Before connect(), set IP_LOCAL_PORT_RANGE (IPPROTO_IP socket option 51, Linux 6.3+) to a " +
                "random 100-port window inside the range: the kernel then searches only that window " +
                "(measured 22-37 µs per connect instead of 75-109 µs).",
              command: `setsockopt(fd, IPPROTO_IP, 51 /* IP_LOCAL_PORT_RANGE */, &(uint32_t){(hi << 16) | lo}, 4) with lo = ${lo} + random, hi = lo + 99`,
            },
            {
              scope: "application",
              action:
                "Reuse connections (keep-alive, pools) instead of one per request; when binding a source " +
                "address, set IP_BIND_ADDRESS_NO_PORT before bind() so the port is chosen per 4-tuple.",
              command: null,
            },
            {
              scope: "namespace",
              action:
                `Widen the ephemeral range in ${where} (keep listening ports out of it with ` +
                "net.ipv4.ip_local_reserved_ports), or spread connections over more source addresses.",
              command: sysctlCommand(ns, "net.ipv4.ip_local_port_range", "10000 65000"),
            },
          ],
        },
      }),
    );
  }
  return out;
}

export const portExhaustionRule: Rule = {
  kinds: ["connect_port_exhaustion"],
  evaluate,
  canEvaluate: (ctx) => probeOn(ctx, "connect_latency") && hasCoverage(ctx),
};
