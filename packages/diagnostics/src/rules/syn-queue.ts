import type { Evidence, Finding, NamespaceObservation, RemedyStep } from "@tide/contracts";
import {
  backlogFor,
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
 * Incident 2: SYN queue full. With cookies on (tcp_syncookies 1) the kernel answers with a SYN
 * cookie (TcpExtTCPReqQFullDoCookies): syn_queue_overflow. With cookies off it drops the SYN
 * (TcpExtTCPReqQFullDrop): syn_flood_drops. "Possible SYN flooding on port N" is usually legitimate
 * load whose queue is too small for RTT x rate; a real flood shows as cookies that never come back
 * (SyncookiesRecv / SyncookiesSent below SYN_FLOOD_COMPLETION_RATIO).
 */

/**
 * SYN cookie completion ratio (SyncookiesRecv / SyncookiesSent) below which cookie traffic looks
 * like a real flood: spoofed SYNs never come back with the final ACK, legitimate clients do.
 */
export const SYN_FLOOD_COMPLETION_RATIO = 0.1;

function largestBacklog(ns: NamespaceObservation): number {
  return Math.max(0, ...ns.listeners.map((l) => l.sendQ));
}

function queueSteps(ns: NamespaceObservation): RemedyStep[] {
  const want = backlogFor(Math.max(4 * largestBacklog(ns), 4096));
  const steps: RemedyStep[] = [
    {
      scope: "application",
      action:
        `Give the busy listener a larger listen() backlog (e.g. ${want}): a listener's SYN queue holds at ` +
        "most its accept backlog, and it must cover connection rate x handshake RTT.",
      command: null,
    },
  ];
  if ((ns.sysctls.somaxconn ?? 0) < want) {
    steps.push({
      scope: "namespace",
      action: `Raise net.core.somaxconn in ${netnsLabel(ns)} so that backlog is not capped.`,
      command: sysctlCommand(ns, "net.core.somaxconn", want),
    });
  }
  if ((ns.sysctls.tcpMaxSynBacklog ?? 0) < want) {
    steps.push({
      scope: "namespace",
      action: `Raise net.ipv4.tcp_max_syn_backlog in ${netnsLabel(ns)} (bounds half-open connections).`,
      command: sysctlCommand(ns, "net.ipv4.tcp_max_syn_backlog", want),
    });
  }
  return steps;
}

function cookieEvidence(
  ctx: RuleContext,
  inode: number,
): { evidence: Evidence[]; completion: number | null } {
  const evidence: Evidence[] = [];
  const sent = counterRate(ctx, inode, "TcpExtSyncookiesSent");
  const recv = counterRate(ctx, inode, "TcpExtSyncookiesRecv");
  const failed = counterRate(ctx, inode, "TcpExtSyncookiesFailed");
  if (sent !== null) evidence.push(rateEvidence(ctx, "TcpExtSyncookiesSent", sent, null));
  if (recv !== null) evidence.push(rateEvidence(ctx, "TcpExtSyncookiesRecv", recv, null));
  if (failed !== null) evidence.push(rateEvidence(ctx, "TcpExtSyncookiesFailed", failed, null));
  const completion =
    sent !== null && recv !== null && sent.delta.delta > 0 ? recv.delta.delta / sent.delta.delta : null;
  if (completion !== null) {
    evidence.push(
      valueEvidence(ctx, "SyncookiesRecv/SyncookiesSent", completion, "ratio", {
        warn: null,
        critical: null,
      }),
    );
  }
  return { evidence, completion };
}

function floodNote(completion: number | null): string {
  if (completion === null) return "";
  return completion < SYN_FLOOD_COMPLETION_RATIO
    ? ` Only ${(completion * 100).toFixed(0)}% of SYN cookies came back: most SYNs never complete the ` +
        "handshake, which looks like a real (spoofed) SYN flood: keep cookies on and filter upstream."
    : ` ${(completion * 100).toFixed(0)}% of SYN cookies came back, so these are real clients: legitimate ` +
        "load whose SYN queue is too small for its connection rate x RTT, not an attack.";
}

function evaluate(ctx: RuleContext): Finding[] {
  const out: Finding[] = [];
  const { warn, critical } = counterThreshold(ctx);
  for (const ns of ctx.window.latest.namespaces) {
    const inode = ns.netns.inode;
    const where = netnsLabel(ns);
    const cookies = counterRate(ctx, inode, "TcpExtTCPReqQFullDoCookies");
    const cookieSeverity = cookies === null ? null : severityAbove(cookies.perSecond, warn, critical);
    if (cookies !== null && cookieSeverity !== null) {
      const extra = cookieEvidence(ctx, inode);
      out.push(
        finding(ctx, {
          kind: "syn_queue_overflow",
          severity: cookieSeverity,
          subject: subject(ctx.window.hostId, { netns: ns.netns }),
          title: `SYN queue full in ${where}: answering with SYN cookies`,
          evidence: [
            rateEvidence(ctx, "TcpExtTCPReqQFullDoCookies", cookies, { warn, critical }),
            ...extra.evidence,
          ],
          explanation:
            `In ${where} a listener's SYN queue was full ${cookies.perSecond.toFixed(1)} times a second ` +
            `(${overWindowText(cookies)}), so the kernel answered with SYN cookies (the kernel log says "Possible ` +
            'SYN flooding on port N. Sending cookies."). Connections still work, but cookie handshakes ' +
            "lose TCP options such as window scaling unless timestamps are on, which slows large transfers." +
            floodNote(extra.completion),
          remedy: {
            summary:
              "Size the SYN queue for the connection rate: larger listen() backlog, somaxconn and tcp_max_syn_backlog.",
            steps: queueSteps(ns),
          },
        }),
      );
    }

    const drops = counterRate(ctx, inode, "TcpExtTCPReqQFullDrop");
    const dropSeverity = drops === null ? null : severityAbove(drops.perSecond, warn, critical);
    if (drops !== null && dropSeverity !== null) {
      const evidence: Evidence[] = [rateEvidence(ctx, "TcpExtTCPReqQFullDrop", drops, { warn, critical })];
      if (ns.sysctls.tcpSyncookies !== null) {
        evidence.push(valueEvidence(ctx, "net.ipv4.tcp_syncookies", ns.sysctls.tcpSyncookies, "count"));
      }
      const cookiesOff = ns.sysctls.tcpSyncookies === 0;
      const steps: RemedyStep[] = [];
      if (ns.sysctls.tcpSyncookies !== 1 && ns.sysctls.tcpSyncookies !== 2) {
        steps.push({
          scope: "namespace",
          action: `Turn SYN cookies on in ${where} so a full SYN queue answers with cookies instead of dropping.`,
          command: sysctlCommand(ns, "net.ipv4.tcp_syncookies", 1),
        });
      }
      steps.push(...queueSteps(ns));
      out.push(
        finding(ctx, {
          kind: "syn_flood_drops",
          severity: dropSeverity,
          subject: subject(ctx.window.hostId, { netns: ns.netns }),
          title: `SYNs dropped in ${where}: SYN queue full` + (cookiesOff ? ", cookies off" : ""),
          evidence,
          explanation:
            `In ${where} ${drops.perSecond.toFixed(1)} SYNs a second (${overWindowText(drops)}) found the SYN queue ` +
            "full and were dropped (TcpExt TCPReqQFullDrop)" +
            (cookiesOff ? " because net.ipv4.tcp_syncookies is 0 in this namespace" : "") +
            ". Clients retransmit the SYN after 1 s, then 3 s, 7 s: users see connects taking seconds. " +
            "During a real SYN flood this is the flood succeeding.",
          remedy: {
            summary: cookiesOff
              ? `Enable tcp_syncookies in ${where} and size the SYN queue for the load.`
              : "Size the SYN queue for the load (listen() backlog, somaxconn, tcp_max_syn_backlog).",
            steps,
          },
        }),
      );
    }
  }
  return out;
}

export const synQueueRule: Rule = {
  kinds: ["syn_queue_overflow", "syn_flood_drops"],
  evaluate,
  canEvaluate: hasCoverage,
};
