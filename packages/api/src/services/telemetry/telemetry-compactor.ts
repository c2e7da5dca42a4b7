import { runCompaction, type CompactionRun, type Db } from "@tide/db";
import { ingestEnv } from "../../env";
import { EVALUATION_WINDOW_S } from "../findings/host-evaluation";

/**
 * The telemetry compactor: keeps observation storage small and bounded (issue 16), in the
 * background of every console process.
 *
 * The statements and one bounded run are packages/db's (observation-chunks.ts runCompaction); this
 * file decides when and with which limits:
 *
 *  - moves each host's complete minutes older than COMPACT_HOT_WINDOW_S out of observation_samples
 *    (~3,000 bytes of jsonb a sample) into observation_chunks (tens of bytes a sample) and writes
 *    the minute's rollup (packages/db observation-chunks.ts, observation-codec.ts,
 *    observation-rollup.ts); a sample replayed into a compacted minute is merged on the next run;
 *  - packs the minute rollups of each hour wholly past the 1 s retention into one row;
 *  - prunes: raw rows of minutes wholly past the 1 s retention (hosts whose ingest stopped, so
 *    ingest's own prune never runs for them), chunks past the same retention, rollups past
 *    rollupDays;
 *  - one at a time across console processes: each compaction transaction takes a try-lock
 *    (COMPACTOR_LOCK_KEY) and a process that does not get it skips its run; two processes' prunes
 *    may overlap harmlessly;
 *  - never in ingest's way: runs are bounded (COMPACT_MAX_MINUTES_PER_RUN), each transaction moves
 *    at most COMPACT_MINUTES_PER_TRANSACTION host-minutes and locks only the raw rows it deletes,
 *    which ingest neither reads nor writes (they are minutes old); readers see a minute in exactly
 *    one tier (one statement over both).
 */

/**
 * Seconds of samples left raw at least: the finding evaluator's window (EVALUATION_WINDOW_S, back
 * from the host's newest sample) plus 30 s for how far that sample may trail the clock (agents
 * batch up to 10 s when a console serves many, ingest-pacing.ts; evaluation runs at most every 5 s
 * per host and may lag), so evaluation reads raw rows only (it reads chunks too, correctly but with
 * more CPU, for a host whose newest sample is older). The raw tier is ~3 kB a sample on disk
 * against ~150 bytes in a chunk, so these seconds are most of the 1 s tier's size: with whole
 * minutes and a run every 15 s, a host keeps hot + 0 to 75 s raw.
 */
export const COMPACT_HOT_WINDOW_S = EVALUATION_WINDOW_S + 30;

/** Pause between runs, ms: a host's minute is compacted hot to hot + 15 s after it ended. */
export const COMPACT_INTERVAL_MS = 15_000;

/**
 * Host-minutes moved per run at most: 1,000 hosts make 1,000 a minute, so 2,000 a run every 15 s
 * catches up a backlog (after a console restart) at 8x the arrival rate.
 */
export const COMPACT_MAX_MINUTES_PER_RUN = 2_000;

/** Host-minutes per compaction transaction (a few ms each: read, encode, three writes). */
export const COMPACT_MINUTES_PER_TRANSACTION = 20;

/** Days of one-minute rollups kept (43,200 rows a host). */
export const ROLLUP_RETENTION_DAYS = 30;

/** Rows each prune statement deletes at most per run (the next run takes the rest). */
export const PRUNE_LIMIT_PER_RUN = 20_000;

/** Host-hours of rollups packed per run at most (1,000 hosts make 1,000 an hour). */
export const PACK_MAX_HOURS_PER_RUN = 500;

export interface TelemetryCompactorOptions {
  /** Minutes of 1 s samples kept (TIDE_OBSERVATION_RETENTION_MINUTES). */
  retentionMinutes: number;
  rollupDays?: number;
  hotWindowS?: number;
  intervalMs?: number;
  maxMinutesPerRun?: number;
  minutesPerTransaction?: number;
  pruneLimit?: number;
  maxHoursPerRun?: number;
  log?: (message: string, error: unknown) => void;
}

export class TelemetryCompactor {
  private readonly o: Required<Omit<TelemetryCompactorOptions, "log">> &
    Pick<TelemetryCompactorOptions, "log">;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = true;

  constructor(
    private readonly db: Db,
    options: TelemetryCompactorOptions,
  ) {
    this.o = {
      rollupDays: ROLLUP_RETENTION_DAYS,
      hotWindowS: COMPACT_HOT_WINDOW_S,
      intervalMs: COMPACT_INTERVAL_MS,
      maxMinutesPerRun: COMPACT_MAX_MINUTES_PER_RUN,
      minutesPerTransaction: COMPACT_MINUTES_PER_TRANSACTION,
      pruneLimit: PRUNE_LIMIT_PER_RUN,
      maxHoursPerRun: PACK_MAX_HOURS_PER_RUN,
      ...options,
    };
  }

  /** One bounded run at `now` (the console's clock; tests and the bench pass their own). */
  runOnce(now = new Date()): Promise<CompactionRun> {
    return runCompaction(this.db, now, this.o);
  }

  /** Run every intervalMs from now on (never two runs at once in this process). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Stop the timer and wait for a run in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.runOnce()
        .catch((e: unknown) => (this.o.log ?? console.error)("telemetry compaction failed:", e))
        .finally(() => {
          this.running = null;
          if (!this.stopped) this.schedule(this.o.intervalMs);
        });
    }, delayMs);
    this.timer.unref();
  }
}

const compactors = new WeakMap<Db, TelemetryCompactor>();

/**
 * The compactor of this process for `db`, started on first use. Ingest calls it with every batch,
 * beside findingEvaluatorFor(db).schedule(), so every console process that receives samples runs
 * one (the lock lets one of them work at a time).
 */
export function telemetryCompactorFor(db: Db): TelemetryCompactor {
  let c = compactors.get(db);
  if (!c) {
    const env = ingestEnv();
    c = new TelemetryCompactor(db, {
      retentionMinutes: env.TIDE_OBSERVATION_RETENTION_MINUTES,
      rollupDays: env.TIDE_OBSERVATION_ROLLUP_DAYS,
    });
    compactors.set(db, c);
    c.start();
  }
  return c;
}
