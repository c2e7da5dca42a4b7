import {
  DIRECTOR_SILENT_AFTER_MS,
  SYNC_PROPAGATION_MARGIN_MS,
  SYNC_PROPAGATION_P99_MS,
  SYNC_REPORT_INTERVAL_MS,
  SYNC_REPORT_SLACK_MS,
  type DirectorPoolSyncState,
  type DirectorSyncState,
  type PoolSyncState,
  type SyncThresholds,
} from "@tide/contracts";

/**
 * The sync view's decisions, pure (director-sync.service.ts reads the facts and writes the rows).
 * Facts carry their times: what the pool wants and when it was written, what the director's last
 * report said and when it arrived, when its agent was last in contact. A state never claims more than
 * the last report says: a report older than the change tells nothing about the change, so the
 * director is "propagating" until the change has had its expected time, "behind" only when a report
 * made after that time still says an older table, and "unknown" whenever its reports are late.
 */

/** The thresholds for a report interval (the batch interval the console asks of its agents), ms. */
export function syncThresholds(reportIntervalMs: number = SYNC_REPORT_INTERVAL_MS): SyncThresholds {
  const interval = Math.max(SYNC_REPORT_INTERVAL_MS, reportIntervalMs);
  const reportLateAfterMs = interval + SYNC_REPORT_SLACK_MS;
  return {
    reportIntervalMs: interval,
    reportLateAfterMs,
    // At one report a second: DIRECTOR_SILENT_AFTER_MS (5 s).
    silentAfterMs: Math.max(DIRECTOR_SILENT_AFTER_MS, reportLateAfterMs + SYNC_REPORT_SLACK_MS),
    // The p99 was measured at one report a second; a longer interval delays the report that shows it.
    propagationExpectedMs:
      SYNC_PROPAGATION_P99_MS + SYNC_PROPAGATION_MARGIN_MS + (interval - SYNC_REPORT_INTERVAL_MS),
  };
}

/** The pool's current version: what every assigned director should serve. */
export interface DesiredFact {
  contentHash: string;
  /** When the version was written (console clock). */
  writtenAt: Date;
}

/** The director's last report for the pool (one row of director_pool_sync). */
export interface ReportFact {
  /** When the console received it (console clock). */
  at: Date;
  /** The content hash it said the director serves for the pool; null: nothing (or unreachable). */
  servedHash: string | null;
  /** Whether the agent reached the director's control socket for it. */
  reachable: boolean;
  /** The first report that said this hash. */
  servedSince: Date;
  /** The first report that did not match the version current at its time; null while matching. */
  outOfSyncSince: Date | null;
}

export interface PoolSyncDecision {
  state: DirectorPoolSyncState;
  since: Date | null;
  expectedBy: Date | null;
  /** Age of the last report, ms; null without one. */
  reportAgeMs: number | null;
}

const later = (a: Date, b: Date) => (a.getTime() >= b.getTime() ? a : b);

/**
 * One pool on one director. In order: no version -> no_table; no report, or a late one -> unknown
 * (whatever it said, it may no longer be true); it says the current hash -> in_sync; it says the
 * director is unreachable -> not_served at once (a fault, not a change on its way); otherwise the
 * change has its expected propagation time, counted from the later of the version's writing and the
 * first report without it (a director that lost its table, or was just assigned the pool, gets the
 * same time to be given it): a report made before the end -> propagating, after -> behind (it names
 * a table) or not_served (it names none).
 */
export function decidePoolSync(
  desired: DesiredFact | null,
  report: ReportFact | null,
  now: Date,
  t: SyncThresholds,
): PoolSyncDecision {
  const reportAgeMs = report ? Math.max(0, now.getTime() - report.at.getTime()) : null;
  if (!desired) return { state: "no_table", since: null, expectedBy: null, reportAgeMs };
  if (report === null || reportAgeMs! > t.reportLateAfterMs)
    return { state: "unknown", since: report?.at ?? null, expectedBy: null, reportAgeMs };
  if (report.servedHash === desired.contentHash)
    // Identical bytes can recur (drain, then undo): served since the later of the two.
    return {
      state: "in_sync",
      since: later(report.servedSince, desired.writtenAt),
      expectedBy: null,
      reportAgeMs,
    };
  if (!report.reachable)
    return { state: "not_served", since: report.outOfSyncSince ?? report.at, expectedBy: null, reportAgeMs };
  const since = report.outOfSyncSince ? later(report.outOfSyncSince, desired.writtenAt) : desired.writtenAt;
  const expectedBy = new Date(since.getTime() + t.propagationExpectedMs);
  if (report.at.getTime() < expectedBy.getTime())
    return { state: "propagating", since, expectedBy, reportAgeMs };
  return { state: report.servedHash === null ? "not_served" : "behind", since, expectedBy, reportAgeMs };
}

export interface DirectorSyncDecision {
  state: DirectorSyncState;
  since: Date | null;
}

/** Pool states that raise the fleet alarm: a report after the expected time says it is not served. */
export const POOL_ALARM_STATES: readonly DirectorPoolSyncState[] = ["behind", "not_served"];

const earliest = (dates: (Date | null)[]): Date | null =>
  dates.reduce<Date | null>((a, d) => (d && (!a || d.getTime() < a.getTime()) ? d : a), null);

/**
 * A director from its pools: never heard of -> no_agent; no contact (report, poll or hello) for
 * silentAfterMs -> silent; no pools -> idle; then the worst of its pools: behind or not served ->
 * out_of_sync, unknown, propagating, in_sync. Only out_of_sync and silent raise the fleet alarm.
 */
export function decideDirectorSync(
  lastContactAt: Date | null,
  pools: readonly PoolSyncDecision[],
  now: Date,
  t: SyncThresholds,
): DirectorSyncDecision {
  if (lastContactAt === null) return { state: "no_agent", since: null };
  if (now.getTime() - lastContactAt.getTime() > t.silentAfterMs)
    return { state: "silent", since: lastContactAt };
  if (pools.length === 0) return { state: "idle", since: null };
  for (const state of ["out_of_sync", "unknown", "propagating"] as const) {
    const of = pools.filter((p) =>
      state === "out_of_sync" ? POOL_ALARM_STATES.includes(p.state) : p.state === state,
    );
    if (of.length > 0) return { state, since: earliest(of.map((p) => p.since)) };
  }
  return { state: "in_sync", since: null };
}

/** The pool as a whole: the worst of its directors (an unknown or silent director is unknown). */
export function decidePoolSummary(
  hasVersion: boolean,
  directors: readonly { state: DirectorPoolSyncState }[],
): PoolSyncState {
  if (directors.length === 0) return "no_directors";
  if (!hasVersion) return "no_table";
  const has = (s: DirectorPoolSyncState) => directors.some((d) => d.state === s);
  if (POOL_ALARM_STATES.some(has)) return "out_of_sync";
  if (has("unknown")) return "unknown";
  if (has("propagating")) return "propagating";
  return "in_sync";
}
