import type { Evidence, Finding, FindingSeverity, NamespaceObservation, RemedyStep } from "@tide/contracts";
import {
  backlogFor,
  counterRate,
  counterThreshold,
  finding,
  hasCoverage,
  netnsExec,
  netnsLabel,
  netnsLabelCapitalized,
  overWindowText,
  probeOn,
  rateEvidence,
  rateText,
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
 * Incident 1: accept queue overflow and the capped listen() backlog.
 *
 * accept_queue_overflow: TcpExtListenOverflows rate of a namespace over the window (Netdata
 * thresholds). Attributed to ports by the listen_overflow probe (per-port drop rates) and by
 * `ss -ltn` (Recv-Q > Send-Q in any sample); with no attribution, one finding for the namespace.
 *
 * listen_backlog_capped: the listen_capped probe saw listen(requested) end with a smaller
 * sk_max_ack_backlog, i.e. net.core.somaxconn *of the socket's namespace* cut it. info on its own,
 * warn when the same port overflows.
 */

/**
 * The kernel's default net.core.somaxconn since 5.4 (4096): what a new network namespace starts
 * with, whatever the host's root namespace was set to.
 */
export const KERNEL_DEFAULT_SOMAXCONN = 4096;

interface PortOverflow {
  port: number;
  probeRate: WindowRate | null;
  /** Worst ss reading in the window (Recv-Q > Send-Q), if any. */
  recvQ: number | null;
  sendQ: number | null;
}

/** Ports of a namespace whose listener was over its backlog in some sample (ss), with the worst reading. */
function ssOverflowingPorts(ctx: RuleContext, inode: number): Map<number, { recvQ: number; sendQ: number }> {
  const out = new Map<number, { recvQ: number; sendQ: number }>();
  for (const o of ctx.window.samples) {
    const ns = o.namespaces.find((n) => n.netns.inode === inode);
    for (const l of ns?.listeners ?? []) {
      if (l.recvQ <= l.sendQ) continue;
      const prev = out.get(l.port);
      if (prev === undefined || l.recvQ - l.sendQ > prev.recvQ - prev.sendQ) {
        out.set(l.port, { recvQ: l.recvQ, sendQ: l.sendQ });
      }
    }
  }
  return out;
}

function rootSomaxconn(ctx: RuleContext): number | null {
  return ctx.window.latest.namespaces.find((n) => n.netns.root)?.sysctls.somaxconn ?? null;
}

/** Why this namespace's somaxconn is what it is, when it differs from the root namespace's. */
function somaxconnNote(ctx: RuleContext, ns: NamespaceObservation): string {
  const own = ns.sysctls.somaxconn;
  const root = rootSomaxconn(ctx);
  if (ns.netns.root || own === null || root === null || own >= root) return "";
  return (
    ` Note: net.core.somaxconn is per namespace. ${netnsLabelCapitalized(ns)} has ${own}` +
    (own === KERNEL_DEFAULT_SOMAXCONN ? " (the kernel default every new namespace starts with)" : "") +
    `, not the host's ${root}: raising it on the host did not reach this namespace.`
  );
}

function overflowRemedy(ns: NamespaceObservation, backlog: number | null, port: number | null): RemedyStep[] {
  const want = backlogFor(Math.max(2 * (backlog ?? 0), 1024));
  const somaxconn = ns.sysctls.somaxconn;
  const where = port === null ? "the overflowing listener" : `the listener on port ${port}`;
  const steps: RemedyStep[] = [
    {
      scope: "application",
      action:
        `Make ${where} accept faster (more accept threads, no blocking work before accept()) and ` +
        `call listen() with a larger backlog, e.g. listen(fd, ${want}) (nginx: listen ... backlog=${want}).`,
      command: null,
    },
  ];
  if (somaxconn === null || somaxconn < want) {
    steps.push({
      scope: "namespace",
      action:
        `Raise net.core.somaxconn in ${netnsLabel(ns)} (now ${somaxconn ?? "unknown"}) so the larger ` +
        "backlog is not capped; then restart the service or call listen() again, since the backlog is " +
        "fixed when listen() is called. Persist it in the container runtime (docker run --sysctl, " +
        "Kubernetes securityContext.sysctls) or sysctl.d for the root namespace.",
      command: sysctlCommand(ns, "net.core.somaxconn", want),
    });
  }
  return steps;
}

function evaluateOverflow(ctx: RuleContext): Finding[] {
  const out: Finding[] = [];
  const { warn, critical } = counterThreshold(ctx);
  for (const ns of ctx.window.latest.namespaces) {
    const inode = ns.netns.inode;
    const rate = counterRate(ctx, inode, "TcpExtListenOverflows");
    if (rate === null) continue;
    const nsSeverity = severityAbove(rate.perSecond, warn, critical);
    if (nsSeverity === null) continue;

    const ports = new Map<number, PortOverflow>();
    for (const d of ctx.window.rates?.listenOverflow.values() ?? []) {
      if (d.netnsInode !== inode) continue;
      const r = trustedRate(ctx, d);
      if (r !== null && severityAbove(r.perSecond, warn, critical) !== null) {
        ports.set(d.port, { port: d.port, probeRate: r, recvQ: null, sendQ: null });
      }
    }
    for (const [port, q] of ssOverflowingPorts(ctx, inode)) {
      ports.set(port, { port, probeRate: ports.get(port)?.probeRate ?? null, ...q });
    }

    const drops = counterRate(ctx, inode, "TcpExtListenDrops");
    const base: Evidence[] = [rateEvidence(ctx, "TcpExtListenOverflows", rate, { warn, critical })];
    if (drops !== null) base.push(rateEvidence(ctx, "TcpExtListenDrops", drops, null));
    if (ns.sysctls.somaxconn !== null) {
      base.push(valueEvidence(ctx, "net.core.somaxconn", ns.sysctls.somaxconn, "count"));
    }
    const where = netnsLabel(ns);

    if (ports.size === 0) {
      out.push(
        finding(ctx, {
          kind: "accept_queue_overflow",
          severity: nsSeverity,
          subject: subject(ctx.window.hostId, { netns: ns.netns }),
          title: `Accept queue overflow in ${where}`,
          evidence: base,
          explanation:
            `In ${where}, ${rate.perSecond.toFixed(1)} connections per second (${overWindowText(rate)}) ` +
            "completed the TCP handshake and were then dropped because their listener's accept queue was " +
            "full (TcpExt ListenOverflows). The application never sees them; clients retransmit and see multi-second " +
            "connect times or timeouts. No probe or ss reading tied the drops to a port: check " +
            `\`${netnsExec(ns)}ss -ltn\` for LISTEN sockets with Recv-Q above Send-Q.` +
            somaxconnNote(ctx, ns),
          remedy: {
            summary: "Accept faster and give the listener a larger backlog (listen() and somaxconn).",
            steps: overflowRemedy(ns, ns.sysctls.somaxconn, null),
          },
        }),
      );
      continue;
    }

    for (const p of [...ports.values()].sort((a, b) => a.port - b.port)) {
      const evidence: Evidence[] = [];
      let severity: FindingSeverity = nsSeverity;
      if (p.probeRate !== null) {
        evidence.push(rateEvidence(ctx, "probe.listen_overflow.drops", p.probeRate, { warn, critical }));
        severity = severityAbove(p.probeRate.perSecond, warn, critical) ?? nsSeverity;
      }
      evidence.push(...base);
      if (p.recvQ !== null && p.sendQ !== null) {
        evidence.push(valueEvidence(ctx, "ss.listen.recv_q", p.recvQ, "count", null, true));
        evidence.push(valueEvidence(ctx, "ss.listen.send_q", p.sendQ, "count", null, true));
      }
      const backlog = p.sendQ ?? ns.listeners.find((l) => l.port === p.port)?.sendQ ?? null;
      out.push(
        finding(ctx, {
          kind: "accept_queue_overflow",
          severity,
          subject: subject(ctx.window.hostId, { netns: ns.netns, port: p.port }),
          title: `Accept queue overflow on :${p.port} in ${where}`,
          evidence,
          explanation:
            `The listener on port ${p.port} in ${where} drops connections after the handshake: its ` +
            "accept queue is full, so completed connections are thrown away before the application " +
            `sees them (${rateText(p.probeRate ?? rate)}` +
            (p.probeRate === null ? ", for the namespace" : ", on this port") +
            ")." +
            (p.recvQ !== null
              ? ` ss showed Recv-Q ${p.recvQ} (queued now) above Send-Q ${p.sendQ} (backlog).`
              : "") +
            (backlog !== null
              ? ` Its effective backlog is ${backlog}, min(listen() backlog, net.core.somaxconn of the namespace).`
              : "") +
            somaxconnNote(ctx, ns),
          remedy: {
            summary: `Accept faster on :${p.port} and give it a larger backlog (listen() and somaxconn).`,
            steps: overflowRemedy(ns, backlog, p.port),
          },
        }),
      );
    }
  }
  return out;
}

function evaluateCapped(ctx: RuleContext): Finding[] {
  if (!probeOn(ctx, "listen_capped")) return [];
  const out: Finding[] = [];
  const { warn, critical } = counterThreshold(ctx);
  const seen = new Set<string>();
  for (const c of ctx.window.latest.probeResults.listenCapped) {
    if (c.requested <= c.effective) continue;
    const ns = ctx.window.latest.namespaces.find((n) => n.netns.inode === c.netnsInode);
    if (ns === undefined) continue;
    const key = `${c.netnsInode}:${c.port}:${c.comm}`;
    if (seen.has(key)) continue; // SO_REUSEPORT groups: one finding per service and port
    seen.add(key);
    const overflowRate = counterRate(ctx, c.netnsInode, "TcpExtListenOverflows");
    const overflowing =
      ssOverflowingPorts(ctx, c.netnsInode).has(c.port) ||
      (overflowRate !== null && severityAbove(overflowRate.perSecond, warn, critical) !== null);
    const evidence: Evidence[] = [
      valueEvidence(ctx, "probe.listen_capped.requested", c.requested, "count"),
      valueEvidence(ctx, "probe.listen_capped.effective", c.effective, "count"),
    ];
    if (ns.sysctls.somaxconn !== null) {
      evidence.push(valueEvidence(ctx, "net.core.somaxconn", ns.sysctls.somaxconn, "count"));
    }
    if (overflowRate !== null)
      evidence.push(rateEvidence(ctx, "TcpExtListenOverflows", overflowRate, { warn, critical }));
    const where = netnsLabel(ns);
    out.push(
      finding(ctx, {
        kind: "listen_backlog_capped",
        severity: overflowing ? "warn" : "info",
        subject: subject(ctx.window.hostId, {
          netns: ns.netns,
          port: c.port,
          process: { pid: c.pid, comm: c.comm },
        }),
        title: `listen() backlog of ${c.comm} on :${c.port} capped to ${c.effective}`,
        evidence,
        explanation:
          `${c.comm} (pid ${c.pid}) called listen() on port ${c.port} with backlog ${c.requested}, but the ` +
          `kernel silently capped it to ${c.effective}: net.core.somaxconn of ${where} is the limit, ` +
          "whatever the application asks for." +
          somaxconnNote(ctx, ns) +
          (overflowing
            ? " The namespace is dropping connections for a full accept queue, so the cap costs traffic now."
            : " Nothing overflows yet; the service has less headroom than its configuration says."),
        remedy: {
          summary: `Raise net.core.somaxconn in ${where} to at least ${c.requested}, then listen() again.`,
          steps: [
            {
              scope: "namespace",
              action:
                `Set net.core.somaxconn in ${where} to ${c.requested}, then restart ${c.comm} (or have it ` +
                "call listen() again): a listening socket keeps the backlog it got. Persist it where the " +
                "namespace is created (docker run --sysctl, Kubernetes securityContext.sysctls, sysctl.d).",
              command: sysctlCommand(ns, "net.core.somaxconn", c.requested),
            },
          ],
        },
      }),
    );
  }
  return out;
}

export const acceptQueueRule: Rule = {
  kinds: ["accept_queue_overflow", "listen_backlog_capped"],
  evaluate: (ctx) => [...evaluateOverflow(ctx), ...evaluateCapped(ctx)],
  canEvaluate: (ctx, f) =>
    f.kind === "listen_backlog_capped" ? probeOn(ctx, "listen_capped") : hasCoverage(ctx),
};
