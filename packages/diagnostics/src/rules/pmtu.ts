import type { Evidence, Finding, NamespaceObservation, PmtuPathResult } from "@tide/contracts";
import {
  counterRate,
  counterThreshold,
  finding,
  hasCoverage,
  netnsExec,
  netnsLabel,
  netnsLabelCapitalized,
  probeOn,
  rateEvidence,
  severityAbove,
  subject,
  sysctlCommand,
  trustedRate,
  valueEvidence,
  type Rule,
  type RuleContext,
  type WindowRate,
} from "../evaluation";

/**
 * Incident 3: path MTU.
 *
 * pmtu_blackhole (critical): the agent's path check found small probes reaching the target and DF
 * probes at the path's claimed MTU getting neither ICMP nor a reply. Either an MTU step whose
 * frag-needed is dropped by a firewall, or an MTU mismatch on one L2 link (the receiver drops big
 * frames and nobody sends ICMP); both stall large transfers while small ones work.
 *
 * mtu_mismatch:
 *  - on a path (info): the check reached the target with a path MTU below the first hop's. PMTUD
 *    works today because frag-needed gets back, but every flow pays for it, and the first firewall
 *    that drops ICMP turns it into a blackhole.
 *  - at a host (counter thresholds): a namespace keeps trying to send frag-needed (icmp_frag_needed
 *    probe, else IpFragFails): it is the router at an MTU step and senders do not learn (their ICMP
 *    is dropped on the way back, or for a VIP reaches a proxy that does not own the flow).
 */

/** MTU of plain Ethernet: a path check below it on a 1500 link means an MTU step on the path. */
export const ETHERNET_MTU = 1500;

/** Latest result per target over the window's samples. */
function latestPaths(ctx: RuleContext): Map<string, PmtuPathResult> {
  const out = new Map<string, PmtuPathResult>();
  for (const o of ctx.window.samples) {
    for (const p of o.paths) {
      const prev = out.get(p.target);
      if (prev === undefined || Date.parse(p.measuredAt) >= Date.parse(prev.measuredAt)) out.set(p.target, p);
    }
  }
  return out;
}

function pathEvidence(ctx: RuleContext, p: PmtuPathResult): Evidence[] {
  const ev: Evidence[] = [];
  if (p.pmtu !== null) ev.push(valueEvidence(ctx, `${p.method}.pmtu`, p.pmtu, "mtu_bytes"));
  if (p.localMtu !== null) ev.push(valueEvidence(ctx, `${p.method}.local_mtu`, p.localMtu, "mtu_bytes"));
  if (p.hops !== null) ev.push(valueEvidence(ctx, `${p.method}.hops`, p.hops, "count"));
  return ev;
}

function rootNamespace(ctx: RuleContext): NamespaceObservation | undefined {
  return ctx.window.latest.namespaces.find((n) => n.netns.root);
}

const ALLOW_FRAG_NEEDED =
  "nft insert rule inet filter forward icmp type destination-unreachable icmp code frag-needed accept";
const CLAMP_MSS = "nft add rule inet filter forward tcp flags syn tcp option maxseg size set rt mtu";

function blackhole(ctx: RuleContext, p: PmtuPathResult): Finding {
  const root = rootNamespace(ctx);
  const probing = root?.sysctls.tcpMtuProbing ?? null;
  const evidence = pathEvidence(ctx, p);
  if (probing !== null) evidence.push(valueEvidence(ctx, "net.ipv4.tcp_mtu_probing", probing, "count"));
  const claimed = p.pmtu ?? p.localMtu;
  return finding(ctx, {
    kind: "pmtu_blackhole",
    severity: "critical",
    subject: subject(ctx.window.hostId, { target: p.target }),
    title: `Path MTU blackhole towards ${p.target}`,
    evidence,
    explanation:
      `Small probes reach ${p.target}, but DF probes` +
      (claimed !== null ? ` of ${claimed} bytes (the MTU the path claims)` : "") +
      " get no reply and no ICMP frag-needed: large packets vanish. Small requests work while large " +
      "transfers stall (TLS handshakes with big certificates, bulk responses). Either a link on the path " +
      "has a smaller MTU and a firewall drops the ICMP frag-needed its router sends, or the two ends of one " +
      "L2 link disagree on the MTU and the receiver drops big frames silently. For a VIP, frag-needed must " +
      "also reach the proxy that owns the flow (the director hashes ICMP on the inner header)." +
      (probing === 0 ? " net.ipv4.tcp_mtu_probing is 0 here, so TCP never recovers on its own." : "") +
      ` Check output: ${p.evidence}`,
    remedy: {
      summary:
        "Let ICMP frag-needed through (or fix the mismatched link MTU); meanwhile probe or clamp the MSS.",
      steps: [
        {
          scope: "network",
          action:
            "On every router and firewall of the path, accept ICMP type 3 code 4 (and ICMPv6 type 2, " +
            "packet too big) instead of dropping it.",
          command: ALLOW_FRAG_NEEDED,
        },
        {
          scope: "network",
          action:
            "Compare the MTU at both ends of each link on the path (`ip link show`); make them equal. " +
            "In a lab, turn offloads off on veths (ethtool -K DEV gso off tso off gro off) or GSO hides it.",
          command: null,
        },
        ...(root !== undefined
          ? [
              {
                scope: "namespace" as const,
                action: "Until the path is fixed, let TCP find the MTU itself after a blackhole is detected.",
                command: sysctlCommand(root, "net.ipv4.tcp_mtu_probing", 1),
              },
            ]
          : []),
        {
          scope: "network",
          action: "Or clamp the TCP MSS to the route MTU on the router in front of the small link.",
          command: CLAMP_MSS,
        },
      ],
    },
  });
}

function pathStep(ctx: RuleContext, p: PmtuPathResult): Finding | null {
  if (!p.reached || p.blackhole || p.pmtu === null || p.localMtu === null || p.pmtu >= p.localMtu)
    return null;
  return finding(ctx, {
    kind: "mtu_mismatch",
    severity: "info",
    subject: subject(ctx.window.hostId, { target: p.target }),
    title: `MTU step towards ${p.target}: ${p.localMtu} -> ${p.pmtu}`,
    evidence: pathEvidence(ctx, p),
    explanation:
      `The path to ${p.target} has a link with MTU ${p.pmtu}, smaller than this host's first hop ` +
      `(${p.localMtu}). Path MTU discovery works today because ICMP frag-needed comes back, but each new ` +
      "flow loses its first large packets to it, and the first firewall that drops ICMP on this path turns it " +
      "into a blackhole.",
    remedy: {
      summary: `Make the MTU consistent along the path to ${p.target}, or clamp the MSS at the step.`,
      steps: [
        {
          scope: "network",
          action: `Raise the small link to ${p.localMtu}, or lower the senders' MTU to ${p.pmtu}.`,
          command: null,
        },
        {
          scope: "network",
          action: "Or clamp the TCP MSS to the route MTU on the router at the step.",
          command: CLAMP_MSS,
        },
      ],
    },
  });
}

function fragNeededRate(ctx: RuleContext, inode: number): { metric: string; rate: WindowRate } | null {
  if (probeOn(ctx, "icmp_frag_needed")) {
    const r = trustedRate(ctx, ctx.window.rates?.icmpFragNeeded.get(inode));
    // The probe reports only namespaces that sent one; a missing entry with the probe on is zero.
    if (r !== null) return { metric: "probe.icmp_frag_needed.sent", rate: r };
  }
  const r = counterRate(ctx, inode, "IpFragFails");
  return r === null ? null : { metric: "IpFragFails", rate: r };
}

function routerStep(ctx: RuleContext, ns: NamespaceObservation): Finding | null {
  const sent = fragNeededRate(ctx, ns.netns.inode);
  if (sent === null) return null;
  const { warn, critical } = counterThreshold(ctx);
  const severity = severityAbove(sent.rate.perSecond, warn, critical);
  if (severity === null) return null;
  const evidence = [rateEvidence(ctx, sent.metric, sent.rate, { warn, critical })];
  const type3 = counterRate(ctx, ns.netns.inode, "IcmpMsgOutType3");
  if (type3 !== null) evidence.push(rateEvidence(ctx, "IcmpMsgOutType3", type3, null));
  const where = netnsLabel(ns);
  return finding(ctx, {
    kind: "mtu_mismatch",
    severity,
    subject: subject(ctx.window.hostId, { netns: ns.netns }),
    title: `${where} sends ICMP frag-needed ${sent.rate.perSecond.toFixed(1)}/s`,
    evidence,
    explanation:
      `${netnsLabelCapitalized(ns)} forwards packets larger than its outgoing link's MTU with DF set and tries to send ICMP ` +
      `frag-needed ${sent.rate.perSecond.toFixed(1)} times a second (counted before any firewall, so this ` +
      'says "tried to send", not "delivered"). It sits at an MTU step. Senders that got the ICMP would ' +
      "lower their packet size and stop; a sustained rate means they do not learn: a firewall drops the " +
      "ICMP on the way back, or for a VIP it reaches a proxy that does not own the flow. Their large " +
      "transfers stall (a PMTU blackhole seen from their side).",
    remedy: {
      summary: "Make the MTU equal on both sides of this host, or make sure frag-needed reaches the senders.",
      steps: [
        {
          scope: "network",
          action: "Compare the MTU of this host's links (`ip link show`) and make the smaller one match.",
          command: `${netnsExec(ns)}ip link show`,
        },
        {
          scope: "network",
          action: "Accept ICMP type 3 code 4 on every firewall between this host and the senders.",
          command: ALLOW_FRAG_NEEDED,
        },
        {
          scope: "network",
          action: "Or clamp the TCP MSS to the route MTU here, so TCP senders never exceed it.",
          command: CLAMP_MSS,
        },
      ],
    },
  });
}

function evaluate(ctx: RuleContext): Finding[] {
  const out: Finding[] = [];
  for (const p of [...latestPaths(ctx).values()].sort((a, b) => a.target.localeCompare(b.target))) {
    if (p.blackhole) out.push(blackhole(ctx, p));
    else {
      const f = pathStep(ctx, p);
      if (f !== null) out.push(f);
    }
  }
  for (const ns of ctx.window.latest.namespaces) {
    const f = routerStep(ctx, ns);
    if (f !== null) out.push(f);
  }
  return out;
}

export const pmtuRule: Rule = {
  kinds: ["pmtu_blackhole", "mtu_mismatch"],
  evaluate,
  // A path finding needs a new check of its target; a host finding needs counter coverage.
  canEvaluate: (ctx, f) =>
    f.subject.target !== null ? latestPaths(ctx).has(f.subject.target) : hasCoverage(ctx),
};
