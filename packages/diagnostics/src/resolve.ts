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

/**
 * Track findings across evaluations: given the previously open (or acknowledged) findings, the new
 * evaluation (diagnose of `window`) and that window, say which are still open, which are resolved
 * and which could not be evaluated. Same problem on the same subject has the same id.
 */
export function resolve(
  previous: readonly Finding[],
  current: readonly Finding[],
  window: readonly Observation[],
  options: DiagnoseOptions = {},
): Resolution {
  const prevById = new Map(previous.filter((f) => f.status !== "resolved").map((f) => [f.id, f]));
  const currentIds = new Set(current.map((f) => f.id));
  const open = current.map((c) => {
    const p = prevById.get(c.id);
    if (p === undefined) return c;
    return {
      ...c,
      firstSeenAt: p.firstSeenAt,
      status: p.status === "acknowledged" ? ("acknowledged" as const) : c.status,
    };
  });
  const contexts = new Map(ruleContexts(window, options).map((ctx) => [ctx.window.hostId, ctx]));
  const resolved: ResolvedFinding[] = [];
  const unevaluated: Finding[] = [];
  for (const p of prevById.values()) {
    if (currentIds.has(p.id)) continue;
    const ctx = contexts.get(p.subject.hostId);
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
