import type { Evidence, Finding, FindingSeverity } from "@tide/contracts";
import { severityRank } from "@tide/contracts";
import {
  counterRate,
  counterThreshold,
  finding,
  hasCoverage,
  netnsLabel,
  rateEvidence,
  severityAbove,
  subject,
  sysctlCommand,
  valueEvidence,
  type Rule,
  type RuleContext,
  overWindowText,
} from "../evaluation";

/**
 * Incident 6: tcp_collapse. When a socket's receive queue outgrows its buffer the kernel prunes it
 * (TcpExtPruneCalled, one per prune) by collapsing many small skbs into fewer (TcpExtTCPRcvCollapsed,
 * one per skb), inside softirq; with a huge tcp_rmem that takes milliseconds (32 MiB: 21 ms). Counter
 * thresholds on either rate; RcvPruned (data thrown away because collapsing was not enough) above the
 * warn rate makes it critical.
 */

/**
 * tcp_rmem max above which receive-buffer collapsing gets expensive, in bytes: 32 MiB gave 21 ms
 * of collapse in softirq, 4 MiB a few ms. The kernel default is 6 MiB.
 */
export const TCP_RMEM_LARGE_BYTES = 8 * 1024 * 1024;

/** A sane tcp_rmem to suggest: the kernel defaults (4 KiB, 128 KiB, 6 MiB). */
export const TCP_RMEM_SUGGESTED: readonly [number, number, number] = [4096, 131072, 6291456];

function worse(a: FindingSeverity | null, b: FindingSeverity | null): FindingSeverity | null {
  if (a === null) return b;
  if (b === null) return a;
  return severityRank[a] >= severityRank[b] ? a : b;
}

function evaluate(ctx: RuleContext): Finding[] {
  const out: Finding[] = [];
  const { warn, critical } = counterThreshold(ctx);
  for (const ns of ctx.window.latest.namespaces) {
    const inode = ns.netns.inode;
    const prune = counterRate(ctx, inode, "TcpExtPruneCalled");
    const collapsed = counterRate(ctx, inode, "TcpExtTCPRcvCollapsed");
    const rcvPruned = counterRate(ctx, inode, "TcpExtRcvPruned");
    const ofoPruned = counterRate(ctx, inode, "TcpExtOfoPruned");
    let severity = worse(
      prune === null ? null : severityAbove(prune.perSecond, warn, critical),
      collapsed === null ? null : severityAbove(collapsed.perSecond, warn, critical),
    );
    if (severity === null) continue;
    const losing = rcvPruned !== null && rcvPruned.perSecond > warn;
    if (losing) severity = "critical";

    const evidence: Evidence[] = [];
    if (prune !== null) evidence.push(rateEvidence(ctx, "TcpExtPruneCalled", prune, { warn, critical }));
    if (collapsed !== null)
      evidence.push(rateEvidence(ctx, "TcpExtTCPRcvCollapsed", collapsed, { warn, critical }));
    if (rcvPruned !== null)
      evidence.push(rateEvidence(ctx, "TcpExtRcvPruned", rcvPruned, { warn: null, critical: warn }));
    if (ofoPruned !== null) evidence.push(rateEvidence(ctx, "TcpExtOfoPruned", ofoPruned, null));
    const rmemMax = ns.sysctls.tcpRmem?.[2] ?? null;
    if (rmemMax !== null) evidence.push(valueEvidence(ctx, "net.ipv4.tcp_rmem.max", rmemMax, "bytes"));
    const large = rmemMax !== null && rmemMax > TCP_RMEM_LARGE_BYTES;
    const where = netnsLabel(ns);
    const mib = (b: number) => `${(b / 1048576).toFixed(b % 1048576 === 0 ? 0 : 1)} MiB`;

    out.push(
      finding(ctx, {
        kind: "tcp_collapse",
        severity,
        subject: subject(ctx.window.hostId, { netns: ns.netns }),
        title: `Receive queues collapsing in ${where}`,
        evidence,
        explanation:
          `Sockets in ${where} fill their receive buffers faster than the application reads them, so the ` +
          `kernel prunes them ${(prune?.perSecond ?? 0).toFixed(1)} times a second, collapsing ` +
          `${(collapsed?.perSecond ?? 0).toFixed(0)} small packets a second into fewer` +
          `${(prune ?? collapsed) ? ` (${overWindowText((prune ?? collapsed)!)})` : ""}. ` +
          "That work runs inside the NET_RX softirq and holds every other packet on that CPU: with a 32 MiB " +
          "buffer a collapse took 21 ms, with 4 MiB a few ms." +
          (large ? ` tcp_rmem max here is ${mib(rmemMax!)}, so each collapse can take milliseconds.` : "") +
          (losing
            ? " Collapsing is not enough: received data is being thrown away (RcvPruned) and retransmitted."
            : ""),
        remedy: {
          summary: "Read sockets promptly and keep receive buffers moderate (tcp_rmem, SO_RCVBUF).",
          steps: [
            ...(large || rmemMax === null
              ? [
                  {
                    scope: "namespace" as const,
                    action: `Bring tcp_rmem in ${where} back to the kernel defaults (max 6 MiB): smaller queues collapse faster.`,
                    command: sysctlCommand(ns, "net.ipv4.tcp_rmem", TCP_RMEM_SUGGESTED.join(" ")),
                  },
                ]
              : []),
            {
              scope: "application",
              action:
                "Read from the socket without stalls and do not set a huge SO_RCVBUF (it also turns off " +
                "receive autotuning); many tiny segments from the sender make it worse (Nagle off, small writes).",
              command: null,
            },
          ],
        },
      }),
    );
  }
  return out;
}

export const tcpCollapseRule: Rule = {
  kinds: ["tcp_collapse"],
  evaluate,
  canEvaluate: hasCoverage,
};
