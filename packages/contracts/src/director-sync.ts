import { z } from "zod";
import { DirectorId, PoolId } from "./ids";

/**
 * Whether the directors serve what the console wants (ARCHITECTURE.md, flow 3: desired state,
 * reconciled). Each director's agent reports the content hash it serves per pool with every batch;
 * the console compares the last report (what it said, and when it arrived) with the pool's current
 * table version. The view says only what a report says: "served vN since …" from the last report,
 * "propagating" while a change is younger than its expected propagation time, "unknown" when the
 * reports are late, and "behind" only when a report made after that time says so.
 */

/**
 * How often a director's agent reports when the console asks for one sample per batch (agents
 * sample every second; a console with many agents asks for larger batches, see
 * packages/api/src/services/telemetry/ingest-pacing.ts, and the thresholds below grow with that interval).
 */
export const SYNC_REPORT_INTERVAL_MS = 1_000;

/**
 * A report is late this long after the next one was due, ms: one more sample interval plus the
 * time a batch request may take on a loaded console. So at one report a second, "unknown" after 3 s.
 */
export const SYNC_REPORT_SLACK_MS = 2_000;

/**
 * A director whose agent has not been in contact (a batch, a desired-state poll or a hello) for one
 * more slack beyond the late threshold is "silent" and raises the fleet alarm: 5 s at one report a
 * second (interval + 2 x slack), more on a fleet asked for larger batches.
 */
export const DIRECTOR_SILENT_AFTER_MS = SYNC_REPORT_INTERVAL_MS + 2 * SYNC_REPORT_SLACK_MS;

/**
 * Measured p99 of "a change is written -> the console shows it served by every director", ms, at one
 * report a second: e2e/bench/fleet-sync.bench.ts ("change -> shown in console"), 50 drains/activates
 * on the console-mode lab (2 directors) each way, run 2026-11-28 on the shared 2-core machine:
 *   idle          p50 1809 ms  p95 4229 ms  p99 (= max of 50) 5023 ms
 *   100 streams   p50 4151 ms  p95 7738 ms  p99 (= max of 50) 9321 ms
 * The loaded p99, rounded up to whole seconds.
 */
export const SYNC_PROPAGATION_P99_MS = 10_000;
/**
 * Margin over the measured p99 before a director that has not caught up is called behind and the
 * fleet alarm rings, ms: half the p99, because the bench's machine is shared and noisy and heavier
 * load than 100 streams stretches the tail (issue 26 saw reports ~30 s late under 673 streams; a late
 * report is "unknown", not behind, so the margin need not cover that).
 */
export const SYNC_PROPAGATION_MARGIN_MS = 5_000;

const Iso = z.string().datetime();

export const SyncThresholds = z
  .object({
    reportIntervalMs: z
      .int()
      .describe("How often the console asks agents to report now (1000 for up to 100 agents a process)"),
    reportLateAfterMs: z
      .int()
      .describe("A director whose last report is older than this is 'unknown' (interval + slack)"),
    silentAfterMs: z
      .int()
      .describe("A director whose agent has not been in contact for this long is 'silent' (fleet alarm)"),
    propagationExpectedMs: z
      .int()
      .describe(
        "Expected time for a change to be served and reported by every director (measured p99 + margin, " +
          "plus the report interval beyond one second); 'behind' and the fleet alarm only after it",
      ),
  })
  .describe("The times the sync view judges by, ms");
export type SyncThresholds = z.infer<typeof SyncThresholds>;

export const SyncVersionRef = z
  .object({
    version: z.int().nullable().describe("Table version number, or null when no version has this hash"),
    contentHash: z.string().describe("sha256 (hex) of the pool's table file"),
  })
  .describe("A table as identified by its content hash");

export const DirectorPoolSyncState = z
  .enum(["in_sync", "propagating", "behind", "not_served", "unknown", "no_table"])
  .describe(
    "in_sync: its last report (not late) says it serves the current version; propagating: the current " +
      "version (or the director's loss of it) is younger than the expected propagation time and no report " +
      "made after that time says otherwise; behind: a report made after the expected propagation time " +
      "says it serves an older (or unknown) table; not_served: such a report says it serves nothing for " +
      "the pool (or its director is unreachable); unknown: no report, or the last is late (reportAgeMs), " +
      "so nobody knows; no_table: the pool has no version yet (no usable proxy), nothing to serve",
  );
export type DirectorPoolSyncState = z.infer<typeof DirectorPoolSyncState>;

const poolSyncFields = {
  state: DirectorPoolSyncState,
  desired: SyncVersionRef.nullable().describe("The pool's current version, or null if it has none"),
  served: SyncVersionRef.nullable().describe(
    "What the director's last report said it serves, or null (serves nothing, or no report)",
  ),
  since: Iso.nullable().describe(
    "in_sync: served since (its first report of this table, not before the version was written); " +
      "propagating, behind, not_served: since the change it has not caught up with (the version was " +
      "written, or the first report without it); unknown: the last report; otherwise null",
  ),
  expectedBy: Iso.nullable().describe(
    "propagating, behind, not_served: when the change should have been served and reported (since + " +
      "propagationExpectedMs); otherwise null",
  ),
  lastReportAt: Iso.nullable().describe(
    "When the console received the director's last report of what it serves (console clock), or null",
  ),
  reportAgeMs: z
    .int()
    .nullable()
    .describe("Age of that report when this was computed, ms ('no report for Xs'), or null"),
};

export const DirectorPoolSync = z
  .object({
    poolId: PoolId,
    poolName: z.string().describe("Pool name (what the director calls the table)"),
    ...poolSyncFields,
  })
  .describe("One pool on one director: wanted, and what its last report said");
export type DirectorPoolSync = z.infer<typeof DirectorPoolSync>;

export const DirectorSyncState = z
  .enum(["in_sync", "propagating", "unknown", "out_of_sync", "silent", "no_agent", "idle"])
  .describe(
    "in_sync: every pool served at its current version; propagating: a change is on its way, within its " +
      "expected time; unknown: its reports are late, so what it serves is not known (its agent is still in " +
      "contact); out_of_sync: at least one pool behind or not served past the expected time (fleet alarm); " +
      "silent: its agent stopped contacting the console (fleet alarm); no_agent: no agent with this host " +
      "name ever reported; idle: no pools",
  );
export type DirectorSyncState = z.infer<typeof DirectorSyncState>;

/** Director states that raise the fleet-wide alarm; every other state is shown where it applies. */
export const DIRECTOR_ALARM_STATES: readonly DirectorSyncState[] = ["out_of_sync", "silent"];

export const DirectorSync = z
  .object({
    directorId: DirectorId,
    hostname: z.string().describe("Director host name (= its agent's host name)"),
    state: DirectorSyncState,
    since: Iso.nullable().describe(
      "Since when it has been propagating, unknown (its last report), out of sync, or silent (its " +
        "agent's last contact); null when in sync",
    ),
    lastCheckIn: Iso.nullable().describe(
      "Last contact from its agent: a report, a desired-state poll or a hello (console clock)",
    ),
    lastReportAt: Iso.nullable().describe(
      "Last report of what its director serves (console clock), or null when none is kept",
    ),
    reachable: z
      .boolean()
      .nullable()
      .describe("Whether the agent reached tide-director's control socket (null: no report)"),
    error: z.string().nullable().describe("Why the director is unreachable, from the agent"),
    pools: z.array(DirectorPoolSync).describe("Assigned pools, by name"),
    extraPools: z
      .array(z.string())
      .describe(
        "Pools it serves that are not assigned to it (kept serving until an assigned set replaces them)",
      ),
  })
  .describe("A director's sync status");
export type DirectorSync = z.infer<typeof DirectorSync>;

export const FleetSync = z
  .object({
    directors: z.array(DirectorSync),
    outOfSync: z.int().describe("Directors out of sync past the expected propagation time (fleet alarm)"),
    silent: z.int().describe("Directors whose agents are silent or never reported"),
    propagating: z.int().describe("Directors a change is still on its way to, within its expected time"),
    unknown: z.int().describe("Directors whose reports are late (their agents are still in contact)"),
    thresholds: SyncThresholds,
    checkedAt: Iso.describe("When the console computed this (console clock)"),
  })
  .describe("Every director's sync status, with the fleet-level alarm counts");
export type FleetSync = z.infer<typeof FleetSync>;

export const PoolSyncState = z
  .enum(["in_sync", "propagating", "out_of_sync", "unknown", "no_table", "no_directors"])
  .describe(
    "The pool as a whole, the worst of its directors: out_of_sync (one behind or not served past the " +
      "expected time), then unknown (one's reports are late or its agent is silent), then propagating, " +
      "then in_sync; no_table: no version yet; no_directors: no director is assigned",
  );
export type PoolSyncState = z.infer<typeof PoolSyncState>;

export const PoolSync = z
  .object({
    poolId: PoolId,
    state: PoolSyncState,
    version: z.int().nullable().describe("The pool's current table version, or null"),
    versionWrittenAt: Iso.nullable().describe("When the current version was written (console clock)"),
    servedBy: z.int().describe("Directors whose last report (not late) says they serve the current version"),
    directorCount: z.int().describe("Directors the pool is assigned to"),
    done: z.boolean().describe("Every assigned director serves the current version"),
    expectedBy: Iso.nullable().describe(
      "While propagating: the latest time a director still on its way should have it; otherwise null",
    ),
    directors: z
      .array(
        z.object({
          directorId: DirectorId,
          hostname: z.string(),
          directorState: DirectorSyncState.describe("The director's own state (silent, no_agent, …)"),
          ...poolSyncFields,
        }),
      )
      .describe("Per director"),
    thresholds: SyncThresholds,
    checkedAt: Iso.describe("When the console computed this (console clock)"),
  })
  .describe("Whether a pool's current version has reached every director that serves it");
export type PoolSync = z.infer<typeof PoolSync>;
