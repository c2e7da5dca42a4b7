import {
  findingFingerprint,
  findingIdOf,
  findingIncident,
  type Evidence,
  type EvidenceUnit,
  type Finding,
  type FindingKind,
  type FindingSeverity,
  type FindingSubject,
  type KernelFindingKind,
  type NamespaceObservation,
  type Remedy,
} from "@tide/contracts";
import { perSecond, type CounterDelta, type HostWindow, type NamespaceWindowSums } from "./rates";
import {
  CONNECT_P99_WARN_US,
  CONNECT_RANGE_IN_USE_WARN,
  COUNTER_RATE_CRITICAL_PER_S,
  COUNTER_RATE_WARN_PER_S,
  LISTENER_CROWDING_WARN,
  MIN_RATE_COVERAGE_S,
  NET_RX_MAX_CRITICAL_US,
  NET_RX_MAX_WARN_US,
  RATE_WINDOW_S,
} from "./thresholds";

/** Overridable thresholds (defaults in thresholds.ts), and a cache of window sums. */
export interface DiagnoseOptions {
  windowSeconds?: number;
  minCoverageSeconds?: number;
  counterRateWarnPerS?: number;
  counterRateCriticalPerS?: number;
  connectP99WarnUs?: number;
  connectRangeInUseWarn?: number;
  netRxMaxWarnUs?: number;
  netRxMaxCriticalUs?: number;
  listenerCrowdingWarn?: number;
  /**
   * Not a threshold: where windows of the same hosts asked for again and again keep their
   * namespace-counter sums (rates.ts NamespaceWindowSums; the console's finding evaluator passes
   * one). The findings are the same with or without it.
   */
  namespaceSums?: NamespaceWindowSums;
}

export type Settings = Required<Omit<DiagnoseOptions, "namespaceSums">>;

export function settings(options: DiagnoseOptions = {}): Settings {
  return {
    windowSeconds: options.windowSeconds ?? RATE_WINDOW_S,
    minCoverageSeconds: options.minCoverageSeconds ?? MIN_RATE_COVERAGE_S,
    counterRateWarnPerS: options.counterRateWarnPerS ?? COUNTER_RATE_WARN_PER_S,
    counterRateCriticalPerS: options.counterRateCriticalPerS ?? COUNTER_RATE_CRITICAL_PER_S,
    connectP99WarnUs: options.connectP99WarnUs ?? CONNECT_P99_WARN_US,
    connectRangeInUseWarn: options.connectRangeInUseWarn ?? CONNECT_RANGE_IN_USE_WARN,
    netRxMaxWarnUs: options.netRxMaxWarnUs ?? NET_RX_MAX_WARN_US,
    netRxMaxCriticalUs: options.netRxMaxCriticalUs ?? NET_RX_MAX_CRITICAL_US,
    listenerCrowdingWarn: options.listenerCrowdingWarn ?? LISTENER_CROWDING_WARN,
  };
}

/** What a rule sees: one host's window and the thresholds. */
export interface RuleContext {
  window: HostWindow;
  settings: Settings;
  /** Evaluation time: the latest sample's time. */
  at: string;
}

/** One rule module: the kinds it makes, how it finds them, and when it could have. */
export interface Rule {
  kinds: readonly KernelFindingKind[];
  evaluate(ctx: RuleContext): Finding[];
  /**
   * Whether this window had the data to find `finding` again (same host): only then does its absence
   * mean it is resolved. A probe that went off or too short a window leaves it open.
   */
  canEvaluate(ctx: RuleContext, finding: Finding): boolean;
}

// ---------------------------------------------------------------------------------------------------
// Severity

/** Severity of a value against warn / critical thresholds (strictly above), or null below warn. */
export function severityAbove(
  value: number,
  warn: number | null,
  critical: number | null,
): FindingSeverity | null {
  if (critical !== null && value > critical) return "critical";
  if (warn !== null && value > warn) return "warn";
  return null;
}

// ---------------------------------------------------------------------------------------------------
// Rates with enough coverage

export interface WindowRate {
  perSecond: number;
  delta: CounterDelta;
}

/** Whether the window's rates cover enough time to trust a counter rate. */
export function hasCoverage(ctx: RuleContext): boolean {
  return ctx.window.rates !== null && ctx.window.rates.seconds >= ctx.settings.minCoverageSeconds;
}

function trusted(ctx: RuleContext, d: CounterDelta | null | undefined): WindowRate | null {
  if (d === null || d === undefined || d.seconds < ctx.settings.minCoverageSeconds) return null;
  return { perSecond: perSecond(d), delta: d };
}

/**
 * A rate as the narrative states it: per second with one decimal (as the evidence table shows it)
 * and the time it is averaged over, which is the evidence's window: up to RATE_WINDOW_S, less
 * while a host has not yet reported for that long. "2.4/s over the last 37 s".
 */
export function rateText(rate: WindowRate, unit = "/s"): string {
  return `${rate.perSecond.toFixed(1)}${unit} ${overWindowText(rate)}`;
}

/** "over the last 37 s": the seconds a rate is averaged over, as the evidence's window shows them. */
export function overWindowText(rate: WindowRate): string {
  return `over the last ${Math.round(rate.delta.seconds)} s`;
}

/** Average rate of a namespace counter over the window, or null without enough data. */
export function counterRate(ctx: RuleContext, inode: number, name: string): WindowRate | null {
  return trusted(ctx, ctx.window.rates?.namespaces.get(inode)?.counters.get(name));
}

/** Same for any delta the rules computed (probe counts, softnet). */
export function trustedRate(ctx: RuleContext, d: CounterDelta | null | undefined): WindowRate | null {
  return trusted(ctx, d);
}

/** Whether a probe is on in the latest sample. */
export function probeOn(ctx: RuleContext, probe: string): boolean {
  return ctx.window.latest.probes.some((p) => p.probe === probe && p.state === "on");
}

// ---------------------------------------------------------------------------------------------------
// Evidence

function windowOf(ctx: RuleContext, seconds: number): Evidence["window"] {
  const r = ctx.window.rates;
  return r === null ? null : { from: r.from, to: r.to, seconds: round(seconds) };
}

/**
 * `v` rounded to `digits` decimals. A value too large to scale (above about 1e305) has no decimals
 * to round and is returned as it is, never as Infinity (JSON would store that as null).
 */
export function round(v: number, digits = 3): number {
  const f = 10 ** digits;
  const scaled = Math.round(v * f);
  return Number.isFinite(scaled) ? scaled / f : v;
}

/** Evidence for a counter rate compared with thresholds (null thresholds: context only). */
export function rateEvidence(
  ctx: RuleContext,
  metric: string,
  rate: WindowRate,
  threshold: { warn: number | null; critical: number | null } | null,
): Evidence {
  return {
    metric,
    value: round(rate.perSecond),
    unit: "per_second",
    ratePerSecond: round(rate.perSecond),
    threshold,
    window: windowOf(ctx, rate.delta.seconds),
  };
}

/** Evidence for a reading (gauge) or a value computed over the window. */
export function valueEvidence(
  ctx: RuleContext,
  metric: string,
  value: number,
  unit: EvidenceUnit,
  threshold: { warn: number | null; critical: number | null } | null = null,
  overWindow = false,
): Evidence {
  return {
    metric,
    value: round(value),
    unit,
    ratePerSecond: null,
    threshold,
    window: overWindow ? windowOf(ctx, ctx.window.rates?.seconds ?? 0) : null,
  };
}

/** The counter thresholds of the settings, as evidence shows them. */
export function counterThreshold(ctx: RuleContext) {
  return { warn: ctx.settings.counterRateWarnPerS, critical: ctx.settings.counterRateCriticalPerS };
}

// ---------------------------------------------------------------------------------------------------
// Findings

export function subject(hostId: string, fields: Partial<Omit<FindingSubject, "hostId">>): FindingSubject {
  return {
    hostId,
    netns: fields.netns ?? null,
    port: fields.port ?? null,
    process: fields.process ?? null,
    cpu: fields.cpu ?? null,
    target: fields.target ?? null,
  };
}

export function finding(
  ctx: RuleContext,
  f: {
    kind: FindingKind;
    severity: FindingSeverity;
    subject: FindingSubject;
    title: string;
    evidence: Evidence[];
    explanation: string;
    remedy: Remedy;
  },
): Finding {
  const fingerprint = findingFingerprint(f.kind, f.subject);
  return {
    id: findingIdOf(fingerprint),
    fingerprint,
    kind: f.kind,
    incident: findingIncident[f.kind],
    severity: f.severity,
    status: "open",
    title: f.title,
    subject: f.subject,
    evidence: f.evidence,
    explanation: f.explanation,
    remedy: f.remedy,
    firstSeenAt: ctx.at,
    lastSeenAt: ctx.at,
    resolvedAt: null,
  };
}

// ---------------------------------------------------------------------------------------------------
// Namespaces in words and commands

/** How explanations name a namespace. */
export function netnsLabel(ns: NamespaceObservation): string {
  if (ns.netns.root) return "the root namespace";
  return ns.netns.name !== null ? `namespace ${ns.netns.name}` : `namespace net:[${ns.netns.inode}]`;
}

/** The same, to start a sentence with. */
export function netnsLabelCapitalized(ns: NamespaceObservation): string {
  const label = netnsLabel(ns);
  return label.charAt(0).toUpperCase() + label.slice(1);
}

/** Prefix that runs a command inside the namespace (nothing for root). */
export function netnsExec(ns: NamespaceObservation): string {
  if (ns.netns.root) return "";
  if (ns.netns.name !== null) return `ip netns exec ${ns.netns.name} `;
  const pid = ns.pids[0];
  return `nsenter --net=/proc/${pid ?? "PID"}/ns/net `;
}

/** `sysctl -w key=value` in the namespace. */
export function sysctlCommand(ns: NamespaceObservation, key: string, value: string | number): string {
  const v = typeof value === "string" && value.includes(" ") ? `"${value}"` : String(value);
  return `${netnsExec(ns)}sysctl -w ${key}=${v}`;
}

/** The namespace observation of an inode in the latest sample. */
export function latestNamespace(ctx: RuleContext, inode: number): NamespaceObservation | undefined {
  return ctx.window.latest.namespaces.find((n) => n.netns.inode === inode);
}

/** Smallest power of two at least `n` (for suggested backlogs), capped at 65535 (u16 before 6.x). */
export function backlogFor(n: number): number {
  let p = 128;
  while (p < n) p *= 2;
  return Math.min(p, 65535);
}
