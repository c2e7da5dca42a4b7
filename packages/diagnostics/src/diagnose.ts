import {
  KERNEL_INCIDENTS,
  severityRank,
  type Finding,
  type FindingKind,
  type KernelIncidentSlug,
  type Observation,
} from "@tide/contracts";
import { settings, type DiagnoseOptions, type Rule, type RuleContext } from "./evaluation";
import { rollingWindows, type HostWindow } from "./rates";
import { acceptQueueRule } from "./rules/accept-queue";
import { listenerCrowdingRule } from "./rules/listener-crowding";
import { pmtuRule } from "./rules/pmtu";
import { portExhaustionRule } from "./rules/port-exhaustion";
import { softirqStallRule } from "./rules/softirq-stall";
import { synQueueRule } from "./rules/syn-queue";
import { tcpCollapseRule } from "./rules/tcp-collapse";

/** The rule of each incident of the registry (@tide/contracts' KERNEL_INCIDENTS), by slug. */
export const ruleOfIncident: Readonly<Record<KernelIncidentSlug, Rule>> = {
  "accept-queue": acceptQueueRule,
  "syn-queue": synQueueRule,
  "pmtu-blackhole": pmtuRule,
  "port-exhaustion": portExhaustionRule,
  "softirq-stall": softirqStallRule,
  "tcp-collapse": tcpCollapseRule,
  "listener-crowding": listenerCrowdingRule,
};

/** Every rule, one module per incident, in the registry's order. */
export const rules: readonly Rule[] = KERNEL_INCIDENTS.map((i) => ruleOfIncident[i.slug]);

/** The rule that makes a kind. */
export function ruleFor(kind: FindingKind): Rule {
  // Health findings (the console's, from proxy health checks) have no rule.
  const rule = rules.find((r) => (r.kinds as readonly FindingKind[]).includes(kind));
  if (rule === undefined) throw new Error(`no rule makes ${kind}`);
  return rule;
}

/** Rule contexts of each host in the observations (the last windowSeconds before its latest sample). */
export function ruleContexts(window: readonly Observation[], options: DiagnoseOptions = {}): RuleContext[] {
  const s = settings(options);
  return rollingWindows(window, s.windowSeconds, options.namespaceSums).map((w: HostWindow) => ({
    window: w,
    settings: s,
    at: w.latest.sampledAt,
  }));
}

/**
 * Findings of every host in the observations, worst first. Pure: the evaluation time is the latest
 * sample's, so the same observations give the same findings (ids included).
 */
export function diagnose(window: readonly Observation[], options: DiagnoseOptions = {}): Finding[] {
  const out: Finding[] = [];
  for (const ctx of ruleContexts(window, options)) {
    for (const rule of rules) out.push(...rule.evaluate(ctx));
  }
  return out.sort(
    (a, b) =>
      severityRank[b.severity] - severityRank[a.severity] || a.fingerprint.localeCompare(b.fingerprint),
  );
}
