import {
  DIRECTOR_SILENT_AFTER_MS,
  SYNC_PROPAGATION_MARGIN_MS,
  SYNC_PROPAGATION_P99_MS,
  type DirectorPoolSyncState,
} from "@tide/contracts";
import { describe, expect, it } from "vitest";
import {
  decideDirectorSync,
  decidePoolSummary,
  decidePoolSync,
  syncThresholds,
  type DesiredFact,
  type PoolSyncDecision,
  type ReportFact,
} from "./director-sync.plan";

const NOW = new Date("2026-11-23T12:00:00.000Z");
const ago = (ms: number) => new Date(NOW.getTime() - ms);
const T = syncThresholds(1_000);
const W = T.propagationExpectedMs;

const V8 = "8".repeat(64);
const V7 = "7".repeat(64);
/** The current version v8, written `writtenAgoMs` ago. */
const desired = (writtenAgoMs: number): DesiredFact => ({ contentHash: V8, writtenAt: ago(writtenAgoMs) });
/** A report received `atAgoMs` ago saying `servedHash`. */
const report = (
  atAgoMs: number,
  servedHash: string | null,
  over: Partial<Omit<ReportFact, "at" | "servedHash">> = {},
): ReportFact => ({
  at: ago(atAgoMs),
  servedHash,
  reachable: true,
  servedSince: ago(60_000),
  outOfSyncSince: null,
  ...over,
});

describe("syncThresholds: measured p99 plus margin, late and silent after the report interval", () => {
  it.each([
    // interval, late after, silent after, expected propagation
    [1_000, 3_000, DIRECTOR_SILENT_AFTER_MS, SYNC_PROPAGATION_P99_MS + SYNC_PROPAGATION_MARGIN_MS],
    [500, 3_000, 5_000, SYNC_PROPAGATION_P99_MS + SYNC_PROPAGATION_MARGIN_MS],
    [10_000, 12_000, 14_000, SYNC_PROPAGATION_P99_MS + SYNC_PROPAGATION_MARGIN_MS + 9_000],
  ])("every %i ms: unknown after %i ms, silent after %i ms, behind after %i ms", (i, late, silent, w) => {
    expect(syncThresholds(i)).toEqual({
      reportIntervalMs: Math.max(1_000, i),
      reportLateAfterMs: late,
      silentAfterMs: silent,
      propagationExpectedMs: w,
    });
  });
});

describe("decidePoolSync: what the last report says, and no more", () => {
  const cases: [string, DesiredFact | null, ReportFact | null, DirectorPoolSyncState, Date | null][] = [
    ["no version: nothing to serve", null, report(500, null), "no_table", null],
    ["no report at all", desired(60_000), null, "unknown", null],
    [
      "served v8, reported 1 s ago: in sync since it first said so",
      desired(60_000),
      report(1_000, V8),
      "in_sync",
      ago(60_000),
    ],
    [
      "served v8 reported exactly at the late threshold",
      desired(60_000),
      report(T.reportLateAfterMs, V8),
      "in_sync",
      ago(60_000),
    ],
    [
      "served v8 but reported 1 ms past the threshold: unknown",
      desired(60_000),
      report(T.reportLateAfterMs + 1, V8),
      "unknown",
      ago(T.reportLateAfterMs + 1),
    ],
    // The case: both serve v8, but the reports are late; v7 was the last word.
    [
      "says v7, late, change long ago: unknown, never behind",
      desired(30_000),
      report(20_000, V7),
      "unknown",
      ago(20_000),
    ],
    [
      "says v7 from before the change, on time: propagating since the change",
      desired(500),
      report(800, V7),
      "propagating",
      ago(500),
    ],
    [
      "says v7 after the change, within its time",
      desired(W - 1_000),
      report(200, V7, { outOfSyncSince: ago(W - 1_200) }),
      "propagating",
      ago(W - 1_200),
    ],
    [
      "says v7 in a report made just before the window ended: still propagating",
      desired(W + 500),
      report(301, V7, { outOfSyncSince: ago(W + 300) }),
      "propagating",
      ago(W + 300),
    ],
    [
      "says v7 in a report made at the window's end: behind",
      desired(W + 500),
      report(300, V7, { outOfSyncSince: ago(W + 300) }),
      "behind",
      ago(W + 300),
    ],
    [
      "says nothing for the pool after the window: not served",
      desired(W + 5_000),
      report(300, null, { outOfSyncSince: ago(W + 4_000) }),
      "not_served",
      ago(W + 4_000),
    ],
    [
      "lost its table 2 s ago (restart), long after the change: propagating again",
      desired(600_000),
      report(300, null, { outOfSyncSince: ago(2_000) }),
      "propagating",
      ago(2_000),
    ],
    [
      "stuck since before an earlier change: the new change gets its own time",
      desired(1_000),
      report(300, V7, { outOfSyncSince: ago(60_000) }),
      "propagating",
      ago(1_000),
    ],
    [
      "director unreachable 1 s ago: not served at once, no window",
      desired(600_000),
      report(300, null, { reachable: false, outOfSyncSince: ago(1_000) }),
      "not_served",
      ago(1_000),
    ],
    [
      "director unreachable right after a change: not served, not propagating",
      desired(500),
      report(300, null, { reachable: false, outOfSyncSince: ago(300) }),
      "not_served",
      ago(300),
    ],
    [
      "identical bytes again (drain then undo): served since the version",
      desired(5_000),
      report(300, V8, { servedSince: ago(60_000) }),
      "in_sync",
      ago(5_000),
    ],
  ];
  it.each(cases)("%s", (_name, d, r, state, since) => {
    const decision = decidePoolSync(d, r, NOW, T);
    expect(decision.state).toBe(state);
    expect(decision.since).toEqual(since);
    expect(decision.reportAgeMs).toBe(r ? NOW.getTime() - r.at.getTime() : null);
    if (state === "propagating" || state === "behind" || (state === "not_served" && r!.reachable))
      expect(decision.expectedBy).toEqual(new Date(since!.getTime() + W));
    else expect(decision.expectedBy).toBeNull();
  });

  it("never says behind without a report made after the expected time", () => {
    // Every combination of change age, report age and what the report said, on a 250 ms grid.
    for (let changeAgo = 0; changeAgo <= 2 * W; changeAgo += 250)
      for (let reportAgo = 0; reportAgo <= 2 * W; reportAgo += 250)
        for (const served of [V7, null]) {
          const d = decidePoolSync(desired(changeAgo), report(reportAgo, served), NOW, T);
          const reportAfterWindow = NOW.getTime() - reportAgo >= NOW.getTime() - changeAgo + W;
          if (d.state === "behind" || d.state === "not_served") {
            expect(reportAfterWindow).toBe(true);
            expect(reportAgo).toBeLessThanOrEqual(T.reportLateAfterMs);
          }
        }
  });
});

const pool = (state: DirectorPoolSyncState, sinceAgoMs: number | null = null): PoolSyncDecision => ({
  state,
  since: sinceAgoMs === null ? null : ago(sinceAgoMs),
  expectedBy: null,
  reportAgeMs: 500,
});

describe("decideDirectorSync: the alarm only for silence or behind past the window", () => {
  it.each([
    ["never heard of", null, [pool("unknown")], "no_agent", null],
    [
      "no contact for longer than silentAfterMs",
      T.silentAfterMs + 1,
      [pool("in_sync")],
      "silent",
      T.silentAfterMs + 1,
    ],
    ["no contact for exactly silentAfterMs", T.silentAfterMs, [pool("in_sync")], "in_sync", null],
    ["no pools", 500, [], "idle", null],
    [
      "one behind, one propagating",
      500,
      [pool("propagating", 1_000), pool("behind", 20_000)],
      "out_of_sync",
      20_000,
    ],
    ["one not served", 500, [pool("in_sync"), pool("not_served", 12_000)], "out_of_sync", 12_000],
    [
      "reports late, agent polling",
      500,
      [pool("unknown", 4_000), pool("propagating", 1_000)],
      "unknown",
      4_000,
    ],
    ["a change on its way", 500, [pool("in_sync"), pool("propagating", 1_000)], "propagating", 1_000],
    ["all served", 500, [pool("in_sync"), pool("no_table")], "in_sync", null],
  ] as const)("%s -> %s", (_name, contactAgo, pools, state, sinceAgo) => {
    const d = decideDirectorSync(contactAgo === null ? null : ago(contactAgo), pools, NOW, T);
    expect(d).toEqual({ state, since: sinceAgo === null ? null : ago(sinceAgo) });
  });
});

describe("decidePoolSummary: the worst director", () => {
  it.each([
    [true, [], "no_directors"],
    [false, ["no_table", "no_table"], "no_table"],
    [true, ["in_sync", "in_sync"], "in_sync"],
    [true, ["in_sync", "propagating"], "propagating"],
    [true, ["propagating", "unknown"], "unknown"],
    [true, ["unknown", "behind"], "out_of_sync"],
    [true, ["in_sync", "not_served"], "out_of_sync"],
  ] as const)("version %s, directors %j -> %s", (hasVersion, states, summary) => {
    expect(
      decidePoolSummary(
        hasVersion,
        states.map((state) => ({ state })),
      ),
    ).toBe(summary);
  });
});
