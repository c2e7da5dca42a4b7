import { netnsKey, type Finding, type Observation } from "@tide/contracts";
import { ruleContexts, ruleFor } from "./diagnose";
import type { DiagnoseOptions, RuleContext } from "./evaluation";

/** Why a finding is resolved. */
export type ResolvedReason = "cleared" | "subject_gone";

export interface ResolvedFinding {
  finding: Finding;
  reason: ResolvedReason;
}

export interface Resolution {
  /** The new evaluation's findings, carrying firstSeenAt and acknowledged status from before. */
  open: Finding[];
  /** Previous findings that the window could evaluate and no longer shows, now status resolved. */
  resolved: ResolvedFinding[];
  /**
   * Previous findings the window could not evaluate (host silent, probe off, too few samples,
   * target not checked again): still open, unchanged. Missing data never resolves a finding.
   */
  unevaluated: Finding[];
}

/** Whether the finding's subject no longer exists on a host that still reports. */
function subjectGone(ctx: RuleContext, f: Finding): boolean {
  const latest = ctx.window.latest;
  if (f.subject.netns !== null) {
    const key = netnsKey(f.subject.netns);
    if (!latest.namespaces.some((n) => netnsKey(n.netns) === key)) return true;
  }
  if (f.subject.cpu !== null && !latest.cpus.some((c) => c.cpu === f.subject.cpu)) return true;
  return false;
}

/** Everything that identifies a finding's problem except its port. */
function baseKey(f: Finding): string {
  const s = f.subject;
  return JSON.stringify([
    f.kind,
    s.hostId,
    s.netns === null ? null : netnsKey(s.netns),
    s.process?.comm ?? null,
    s.cpu,
    s.target,
  ]);
}

/**
 * Whether `c` is the same problem as the stored `p`, seen more or less precisely: same kind and
 * subject, and the port is the same or only one side knows it. The port of a namespace's overflow
 * comes from evidence that is not in every window (ss catching Recv-Q > Send-Q, the probe's drops):
 * without this, a finding would resolve and a new one open each time the port is learned or lost.
 */
function samePort(p: Finding, c: Finding): boolean {
  return p.subject.port === null || c.subject.port === null || p.subject.port === c.subject.port;
}

/**
 * Track findings across evaluations: given the previously open (or acknowledged) findings, the new
 * evaluation (diagnose of `window`) and that window, say which are still open, which are resolved
 * and which could not be evaluated. Same problem on the same subject keeps its id (and stored
 * fingerprint): matched by fingerprint first, then by subject with the port learned or lost.
 */
export function resolve(
  previous: readonly Finding[],
  current: readonly Finding[],
  window: readonly Observation[],
  options: DiagnoseOptions = {},
): Resolution {
  const prev = previous.filter((f) => f.status !== "resolved");
  const matchOf = new Map<Finding, Finding>();
  const taken = new Set<string>();
  // Exact matches first, so a refinement never takes a finding that is still there as it was.
  const prevByFingerprint = new Map(prev.map((f) => [f.fingerprint, f]));
  for (const c of current) {
    const p = prevByFingerprint.get(c.fingerprint);
    if (p !== undefined && !taken.has(p.id)) {
      matchOf.set(c, p);
      taken.add(p.id);
    }
  }
  for (const c of current) {
    if (matchOf.has(c)) continue;
    const p = prev.find((q) => !taken.has(q.id) && baseKey(q) === baseKey(c) && samePort(q, c));
    if (p !== undefined) {
      matchOf.set(c, p);
      taken.add(p.id);
    }
  }
  const open = current.map((c) => {
    const p = matchOf.get(c);
    if (p === undefined) return c;
    return {
      ...c,
      id: p.id,
      fingerprint: p.fingerprint,
      firstSeenAt: p.firstSeenAt,
      status: p.status === "acknowledged" ? ("acknowledged" as const) : c.status,
    };
  });
  // The window's rates only when some previous finding is not matched: in the steady state every
  // one is, and computing them again (diagnose() did) was half of an evaluation's diagnostics time.
  let contexts: Map<string, RuleContext> | null = null;
  const contextOf = (hostId: string) =>
    (contexts ??= new Map(ruleContexts(window, options).map((ctx) => [ctx.window.hostId, ctx]))).get(hostId);
  const resolved: ResolvedFinding[] = [];
  const unevaluated: Finding[] = [];
  for (const p of prev) {
    if (taken.has(p.id)) continue;
    const ctx = contextOf(p.subject.hostId);
    if (ctx === undefined) {
      unevaluated.push(p);
      continue;
    }
    const done = (reason: ResolvedReason) =>
      resolved.push({ finding: { ...p, status: "resolved", resolvedAt: ctx.at }, reason });
    if (subjectGone(ctx, p)) done("subject_gone");
    else if (ruleFor(p.kind).canEvaluate(ctx, p)) done("cleared");
    else unevaluated.push(p);
  }
  return { open, resolved, unevaluated };
}
