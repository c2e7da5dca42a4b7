import type { NetnsRef, Observation } from "@tide/contracts";
import {
  columnsOfRollups,
  latestSample,
  rollupColumnsOfRange,
  rollupMinute,
  samplesBetween,
  type Db,
  type JsonValue,
} from "@tide/db";
import { ingestEnv } from "../../env";
import { LIVE_COUNTERS } from "../../live/host-live";
import type { HostHistory } from "../../schemas/history.schema";
import {
  chartedRateSeries,
  concatColumns,
  historyGrid,
  historyLabel,
  historyTier,
  planHistoryWindow,
  RATE_BASE_MS,
  seriesOfRollups,
  seriesOfSamples,
  unrolledMinutes,
  type NamespaceHistory,
} from "./host-history.plan";
import { findHost } from "../fleet/host.service";
import { COMPACT_HOT_WINDOW_S, COMPACT_INTERVAL_MS } from "./telemetry-compactor";

/**
 * A host's history over a range (issue 16): the plan decides the window, tier and grid; this reads
 * the tier (packages/db: samplesBetween over raw rows and chunks, rollupColumnsOfRange) and returns the
 * chart series. Nothing is written.
 */

/**
 * Look-back of the raw samples whose minutes may not be rolled up yet, ms: the compactor leaves the
 * hot window raw and runs every COMPACT_INTERVAL_MS, plus the minute in progress and a few to spare
 * (a compactor behind after a restart). At most ~10 minutes of samples are read for this.
 */
const UNROLLED_MS = COMPACT_HOT_WINDOW_S * 1000 + COMPACT_INTERVAL_MS + 8 * 60_000;

export interface HistoryClock {
  /** The console's clock, ms. */
  now: number;
  /** Minutes of 1 s samples kept (TIDE_OBSERVATION_RETENTION_MINUTES). */
  retentionMinutes: number;
  /** Days of one-minute rollups kept (TIDE_OBSERVATION_ROLLUP_DAYS). */
  rollupDays: number;
}

/**
 * Days of history the console keeps (TIDE_OBSERVATION_ROLLUP_DAYS): pages that compute a range
 * themselves (a finding's evidence) keep inside it instead of being refused.
 */
export function historyRetentionDays(): number {
  return ingestEnv().TIDE_OBSERVATION_ROLLUP_DAYS;
}

function clockNow(): HistoryClock {
  const env = ingestEnv();
  return {
    now: Date.now(),
    retentionMinutes: env.TIDE_OBSERVATION_RETENTION_MINUTES,
    rollupDays: env.TIDE_OBSERVATION_ROLLUP_DAYS,
  };
}

export async function hostHistory(
  db: Db,
  input: { hostId: string; range?: string | undefined; from?: string | undefined; to?: string | undefined },
  clock: HistoryClock = clockNow(),
): Promise<HostHistory> {
  // Input first: a bad range is refused the same for known and unknown hosts.
  const window = planHistoryWindow(input, clock.now, { rollupRetentionMs: clock.rollupDays * 86_400_000 });
  const host = await findHost(db, input.hostId);
  const tier = historyTier(window, clock.now, clock.retentionMinutes * 60_000);
  const grid = historyGrid(window, tier);
  const from = new Date(window.from);
  const to = new Date(window.to);
  let namespaces: NamespaceHistory[];
  let sourcePoints: number;
  if (tier === "samples") {
    const rows = await samplesBetween(db, host.id, new Date(window.from - RATE_BASE_MS), to);
    const samples = rows.map((r) => ({
      at: r.sampledAt.getTime(),
      obs: r.payload as unknown as Observation,
    }));
    sourcePoints = samples.filter((s) => s.at >= window.from).length;
    namespaces = seriesOfSamples(samples, grid, LIVE_COUNTERS);
  } else {
    const wanted = chartedRateSeries(LIVE_COUNTERS);
    const [stored, latest] = await Promise.all([
      rollupColumnsOfRange(db, host.id, from, to, wanted),
      latestSample(db, host.id),
    ]);
    // The newest minutes are still raw: roll them up here as the compactor will, so a day's chart
    // reaches now. Only whole minutes after the newest stored rollup, within UNROLLED_MS of now.
    const newestRolled =
      stored.minutes.length > 0 ? stored.minutes[stored.minutes.length - 1]! + 60_000 : -Infinity;
    const recentFrom = Math.max(
      window.from,
      newestRolled,
      Math.ceil((clock.now - UNROLLED_MS) / 60_000) * 60_000,
    );
    const recent = recentFrom < window.to ? await samplesBetween(db, host.id, new Date(recentFrom), to) : [];
    const fresh = [...unrolledMinutes(recent, new Set(stored.minutes))].map(([minute, samples]) => ({
      minute: new Date(minute),
      rollup: rollupMinute(samples.map((s) => ({ sampledAt: s.sampledAt, payload: s.payload as JsonValue }))),
    }));
    const cols = concatColumns(stored, columnsOfRollups(fresh, wanted));
    // Rollups name namespaces by inode; the newest sample gives the names the live view shows.
    const known = new Map<number, NetnsRef>();
    for (const ns of (latest?.payload as unknown as Observation | undefined)?.namespaces ?? []) {
      known.set(ns.netns.inode, ns.netns);
    }
    sourcePoints = cols.minutes.length;
    namespaces = seriesOfRollups(cols, grid, LIVE_COUNTERS, known);
  }
  return {
    hostId: host.id,
    hostName: host.name,
    range: window.range,
    from: from.toISOString(),
    to: to.toISOString(),
    tier,
    resolutionS: tier === "samples" ? 1 : 60,
    stepS: grid.stepS,
    label: historyLabel(tier, grid.stepS),
    start: new Date(grid.start).toISOString(),
    points: grid.points,
    sourcePoints,
    counters: [...LIVE_COUNTERS],
    namespaces,
  };
}
