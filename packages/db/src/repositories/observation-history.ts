import type { Prisma } from "@prisma/client";
import type { Db } from "../client";
import { rollupsOfRange } from "./observation-chunks";
import type { MinuteRollup } from "./observation-rollup";
import { samplesBetween, type StoredSample } from "./observation-samples";

/**
 * A host's history over any range, from the tier that holds it: the 1 s samples (raw and chunks)
 * while the range lies within their retention, the one-minute rollups beyond it. For the history
 * charts (issue 16): a 24 h range is 1,440 rollups per host, not 86,400 samples.
 */

type Tx = Prisma.TransactionClient | Db;

export interface RollupPoint {
  minute: Date;
  samples: number;
  rollup: MinuteRollup;
}

export type ObservationHistory =
  | { tier: "samples"; from: Date; to: Date; samples: StoredSample[] }
  | { tier: "rollups"; from: Date; to: Date; rollups: RollupPoint[] };

export interface HistoryTiers {
  /** The console's clock. */
  now: Date;
  /** How far back the 1 s tier reaches (TIDE_OBSERVATION_RETENTION_MINUTES), ms. */
  samplesRetentionMs: number;
  /**
   * Longest range served as 1 s samples even when they are all retained (default 1 h: 3,600 samples
   * of a few kB each is what a chart can take; longer ranges get rollups).
   */
  maxSamplesRangeMs?: number;
}

/** The host's one-minute rollups of minutes in [from, to], oldest first. */
export async function rollupsBetween(tx: Tx, hostId: string, from: Date, to: Date): Promise<RollupPoint[]> {
  const points = await rollupsOfRange(tx, hostId, from, to);
  return points.map((p) => ({ minute: p.minute, samples: p.rollup.samples, rollup: p.rollup }));
}

/** The host's history in [from, to] from the tier that serves it (see the header). */
export async function observationHistory(
  tx: Tx,
  hostId: string,
  from: Date,
  to: Date,
  tiers: HistoryTiers,
): Promise<ObservationHistory> {
  const maxRange = tiers.maxSamplesRangeMs ?? 3_600_000;
  const retained = from.getTime() >= tiers.now.getTime() - tiers.samplesRetentionMs;
  if (retained && to.getTime() - from.getTime() <= maxRange) {
    return { tier: "samples", from, to, samples: await samplesBetween(tx, hostId, from, to) };
  }
  return { tier: "rollups", from, to, rollups: await rollupsBetween(tx, hostId, from, to) };
}
