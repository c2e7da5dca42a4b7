import type { Prisma } from "@prisma/client";
import { sqlTransaction, type Db } from "../client";
import {
  decodeChunk,
  encodeChunkAsync,
  minuteOf,
  type JsonValue,
  type TimedSample,
} from "./observation-codec";
import {
  decodeRollup,
  encodeRollupAsync,
  packRollups,
  rollupMinute,
  unpackRollups,
  type RollupAt,
} from "./observation-rollup";

/**
 * The compacted tiers of observation samples: observation_chunks (one row per host-minute, the 1 s
 * samples in observation-codec.ts's format) and observation_rollups (one row per host-minute,
 * observation-rollup.ts, packed into one per host-hour once the hour is past the 1 s retention).
 * The compactor (packages/api/src/services/telemetry/telemetry-compactor.ts) decides when; this file holds
 * the statements and one bounded run (runCompaction).
 *
 * Moving a minute out of observation_samples is one short transaction that reads the minute's raw
 * rows and its chunk (if a replay arrived after the minute was compacted), writes the union into the
 * chunk and the rollup, and deletes exactly the raw rows it read (by id): a sample ingest adds
 * meanwhile stays raw and is merged by the next run. Every reader of the 1 s tier reads raw rows
 * and chunks in one statement (one snapshot), so a minute being moved is seen once, never twice or
 * not at all.
 *
 * Ingest never waits for the compactor, with one exception: a replayed sample of the very instant
 * of a raw row the running transaction is deleting waits for its commit (the unique index) and is
 * then stored raw again, since its statement's snapshot predates the chunk. Ingest re-checks the
 * samples it stored that are older than MIN_HOT_WINDOW_MS in a second statement (a new snapshot)
 * and deletes those the chunk already holds, so the reply calls them duplicates; a copy that slips
 * through even so is dropped by the next run's union by sampledAt.
 */

type Tx = Prisma.TransactionClient | Db;

/**
 * Advisory lock key of the compactor: each compaction transaction takes it with
 * pg_try_advisory_xact_lock, so two console processes never compact at the same time (the one that
 * does not get it skips its run). ASCII "tidecomp".
 */
export const COMPACTOR_LOCK_KEY = 0x74696465636f6d70n;

const MINUTE_MS = 60_000;

/**
 * The compactor never moves a minute that ended less than this before its clock (runCompaction
 * raises a smaller hotWindowS to it), so ingest need only re-check older samples for a compacted
 * copy (storeBatch) and a batch of fresh samples costs one statement.
 */
export const MIN_HOT_WINDOW_MS = 60_000;
const HOUR_MS = 3_600_000;

/**
 * How far back before the 1 s retention the compactor looks for rollup minutes to pack into hours
 * (a console down for longer leaves older minutes unpacked: bigger, still pruned at 30 days).
 */
export const PACK_LOOKBACK_MS = 24 * HOUR_MS;

/** The samples of chunk rows (data + minute), oldest first. */
export function samplesOfChunks(rows: readonly { minute: Date; data: Uint8Array }[]): TimedSample[] {
  return rows.flatMap((r) => decodeChunk(new Date(r.minute), r.data));
}

/** One host-minute the compactor may move: the host's oldest raw sample falls in it. */
export interface CompactionCandidate {
  hostId: string;
  minute: Date;
}

/**
 * Hosts whose oldest raw sample is before `before` (a minute boundary), oldest first: one index probe
 * per host on observation_samples (host_id, sampled_at). The minute to move is that sample's.
 */
export async function compactionCandidates(
  tx: Tx,
  before: Date,
  limit: number,
): Promise<CompactionCandidate[]> {
  const rows = await tx.$queryRaw<{ host_id: string; oldest: Date }[]>`
    SELECT h.id AS host_id, o.oldest
      FROM hosts h
      CROSS JOIN LATERAL (
        SELECT sampled_at AS oldest FROM observation_samples s
         WHERE s.host_id = h.id ORDER BY sampled_at ASC LIMIT 1
      ) o
     WHERE o.oldest < ${before.toISOString()}::timestamptz
     ORDER BY o.oldest
     LIMIT ${limit}`;
  return rows.map((r) => ({ hostId: r.host_id, minute: minuteOf(new Date(r.oldest)) }));
}

export interface CompactedMinute {
  hostId: string;
  minute: Date;
  /** Raw rows moved into the chunk. */
  moved: number;
  /** Samples in the chunk afterwards. */
  samples: number;
  /** Bytes of the chunk's data. */
  bytes: number;
}

/**
 * Move the raw samples of each host-minute into its chunk (merged with what the chunk holds: union by
 * sampledAt, the chunk's copy kept) and rewrite its rollup, in one transaction holding
 * COMPACTOR_LOCK_KEY. Null when another process holds the lock (nothing done).
 */
export async function compactMinutes(
  db: Db,
  minutes: readonly CompactionCandidate[],
): Promise<CompactedMinute[] | null> {
  // On node-postgres, not Prisma (client.ts sqlTransaction): a transaction reads ~20 host-minutes of
  // raw payloads, megabytes that Prisma converted row by row on the console's event loop.
  return sqlTransaction(
    db,
    async (query) => {
      const [lock] = await query<{ locked: boolean }>(
        "SELECT pg_try_advisory_xact_lock($1::bigint) AS locked",
        [COMPACTOR_LOCK_KEY.toString()],
      );
      if (!lock?.locked) return null;
      // Every group's raw rows and chunk in one statement (round trips, not rows, are the cost).
      const rows = await query<{
        host_id: string;
        minute: Date;
        id: string | null;
        sampled_at: Date | null;
        payload: JsonValue;
        data: Uint8Array | null;
      }>(
        `WITH g AS (SELECT * FROM unnest($1::text[], $2::timestamptz[]) AS g(host_id, minute))
         SELECT g.host_id, g.minute, s.id, s.sampled_at, s.payload, NULL::bytea AS data
           FROM g JOIN observation_samples s
             ON s.host_id = g.host_id AND s.sampled_at >= g.minute AND s.sampled_at < g.minute + interval '1 minute'
         UNION ALL
         SELECT g.host_id, g.minute, NULL, NULL, NULL, c.data
           FROM g JOIN observation_chunks c ON c.host_id = g.host_id AND c.minute = g.minute`,
        [minutes.map((m) => m.hostId), minutes.map((m) => m.minute.toISOString())],
      );
      const groups = new Map<string, { raw: typeof rows; chunk: Uint8Array | null }>();
      for (const r of rows) {
        const key = `${r.host_id} ${new Date(r.minute).getTime()}`;
        const g = groups.get(key) ?? { raw: [], chunk: null };
        if (r.data) g.chunk = r.data;
        else g.raw.push(r);
        groups.set(key, g);
      }
      const done: CompactedMinute[] = [];
      const moved: string[] = [];
      for (const { hostId, minute } of minutes) {
        const g = groups.get(`${hostId} ${minute.getTime()}`);
        if (!g || g.raw.length === 0) continue;
        const byTime = new Map<number, TimedSample>();
        for (const s of g.chunk ? samplesOfChunks([{ minute, data: g.chunk }]) : []) {
          byTime.set(s.sampledAt.getTime(), s);
        }
        for (const r of g.raw) {
          const t = new Date(r.sampled_at!).getTime();
          if (!byTime.has(t)) byTime.set(t, { sampledAt: new Date(t), payload: r.payload });
        }
        const samples = [...byTime.values()].sort((a, b) => a.sampledAt.getTime() - b.sampledAt.getTime());
        // Compressed on libuv's thread pool (observation-codec.ts compressAsync).
        const [data, rollup] = await Promise.all([
          encodeChunkAsync(minute, samples),
          encodeRollupAsync(rollupMinute(samples)),
        ]);
        const offsets = samples.map((s) => s.sampledAt.getTime() - minute.getTime());
        const lastAt = samples[samples.length - 1]!.sampledAt.toISOString();
        await query(
          `WITH c AS (
             INSERT INTO observation_chunks (host_id, minute, offsets_ms, last_at, data)
             VALUES ($1, $2::timestamptz, $3::int[], $4::timestamptz, $5)
             ON CONFLICT (host_id, minute) DO UPDATE
               SET offsets_ms = excluded.offsets_ms, last_at = excluded.last_at, data = excluded.data
           )
           INSERT INTO observation_rollups (host_id, minute, samples, data)
           VALUES ($1, $2::timestamptz, $6, $7)
           ON CONFLICT (host_id, minute) DO UPDATE SET samples = excluded.samples, data = excluded.data`,
          [hostId, minute.toISOString(), offsets, lastAt, data, samples.length, rollup],
        );
        for (const r of g.raw) moved.push(r.id!);
        done.push({ hostId, minute, moved: g.raw.length, samples: samples.length, bytes: data.length });
      }
      if (moved.length > 0) {
        await query("DELETE FROM observation_samples WHERE id = ANY($1::text[])", [moved]);
      }
      return done;
    },
    // The transaction holds row locks only on the raw rows it deletes (which nothing else writes);
    // the bound is for a stuck database, not the work (a few ms per minute moved).
    { timeoutMs: 30_000 },
  );
}

/** Delete one host's raw samples before `before` (one index range); returns how many went. */
export async function pruneHostRawSamples(tx: Tx, hostId: string, before: Date): Promise<number> {
  return tx.$executeRaw`
    DELETE FROM observation_samples
     WHERE host_id = ${hostId} AND sampled_at < ${before.toISOString()}::timestamptz`;
}

/**
 * Delete up to `limit` chunks whose whole minute is before `before` (the 1 s tier's retention), in
 * one statement that walks the primary key host by host. Returns how many went.
 */
export async function pruneChunks(tx: Tx, before: Date, limit: number): Promise<number> {
  const lastMinute = new Date(before.getTime() - MINUTE_MS).toISOString();
  return tx.$executeRaw`
    DELETE FROM observation_chunks c
     USING (SELECT h.id, x.minute FROM hosts h
              CROSS JOIN LATERAL (
                SELECT minute FROM observation_chunks
                 WHERE host_id = h.id AND minute <= ${lastMinute}::timestamptz
                 ORDER BY minute LIMIT ${limit}
              ) x
             LIMIT ${limit}) d
     WHERE c.host_id = d.id AND c.minute = d.minute`;
}

/**
 * Delete up to `limit` rollup rows whose minutes all start before `before` (a packed hour goes
 * once its last minute does), host by host. Returns how many rows went.
 */
export async function pruneRollups(tx: Tx, before: Date, limit: number): Promise<number> {
  return tx.$executeRaw`
    DELETE FROM observation_rollups r
     USING (SELECT h.id, x.minute FROM hosts h
              CROSS JOIN LATERAL (
                SELECT minute FROM observation_rollups
                 WHERE host_id = h.id AND minute < ${before.toISOString()}::timestamptz
                   AND minute + make_interval(mins => span_minutes - 1) < ${before.toISOString()}::timestamptz
                 ORDER BY minute LIMIT ${limit}
              ) x
             LIMIT ${limit}) d
     WHERE r.host_id = d.id AND r.minute = d.minute`;
}

/** One host-hour of minute rollups to pack. */
export interface PackCandidate {
  hostId: string;
  hour: Date;
}

/**
 * Hosts with minute rollups in hours that start before `before` (an hour boundary) and no earlier
 * than PACK_LOOKBACK_MS before it, oldest first: the hour to pack is that minute's.
 */
export async function rollupPackCandidates(tx: Tx, before: Date, limit: number): Promise<PackCandidate[]> {
  const since = new Date(before.getTime() - PACK_LOOKBACK_MS).toISOString();
  const rows = await tx.$queryRaw<{ host_id: string; minute: Date }[]>`
    SELECT h.id AS host_id, x.minute
      FROM hosts h
      CROSS JOIN LATERAL (
        SELECT minute FROM observation_rollups
         WHERE host_id = h.id AND minute >= ${since}::timestamptz AND minute < ${before.toISOString()}::timestamptz
           AND span_minutes = 1
         ORDER BY minute LIMIT 1
      ) x
     ORDER BY x.minute
     LIMIT ${limit}`;
  return rows.map((r) => ({
    hostId: r.host_id,
    hour: new Date(Math.floor(new Date(r.minute).getTime() / HOUR_MS) * HOUR_MS),
  }));
}

/**
 * Pack each host-hour's rollups (minute rows, and a packed row if one is there) into one row
 * (packRollups), in one transaction holding COMPACTOR_LOCK_KEY. Null when another process holds it.
 * Returns how many minute rows were packed.
 */
export async function packRollupHours(db: Db, hours: readonly PackCandidate[]): Promise<number | null> {
  return db.$transaction(
    async (tx) => {
      const [lock] = await tx.$queryRaw<{ locked: boolean }[]>`
        SELECT pg_try_advisory_xact_lock(${COMPACTOR_LOCK_KEY}) AS locked`;
      if (!lock?.locked) return null;
      let packed = 0;
      for (const { hostId, hour } of hours) {
        const end = new Date(hour.getTime() + HOUR_MS).toISOString();
        const rows = await tx.$queryRaw<{ minute: Date; span_minutes: number; data: Uint8Array }[]>`
          DELETE FROM observation_rollups
           WHERE host_id = ${hostId} AND minute >= ${hour.toISOString()}::timestamptz AND minute < ${end}::timestamptz
          RETURNING minute, span_minutes, data`;
        const byMinute = new Map<number, RollupAt>();
        for (const r of rows.filter((x) => x.span_minutes > 1)) {
          for (const p of unpackRollups(new Date(r.minute), r.data)) byMinute.set(p.minute.getTime(), p);
        }
        for (const r of rows.filter((x) => x.span_minutes === 1)) {
          const minute = new Date(r.minute);
          byMinute.set(minute.getTime(), { minute, rollup: decodeRollup(r.data) });
          packed++;
        }
        const points = [...byMinute.values()];
        if (points.length === 0) continue;
        const samples = points.reduce((n, p) => n + p.rollup.samples, 0);
        await tx.$executeRaw`
          INSERT INTO observation_rollups (host_id, minute, span_minutes, samples, data)
          VALUES (${hostId}, ${hour.toISOString()}::timestamptz, 60, ${samples}, ${packRollups(hour, points)})`;
      }
      return packed;
    },
    { maxWait: 5_000, timeout: 30_000 },
  );
}

/** The host's rollups of minutes in [from, to], oldest first, packed hours unpacked. */
export async function rollupsOfRange(tx: Tx, hostId: string, from: Date, to: Date): Promise<RollupAt[]> {
  const first = minuteOf(from);
  // A packed hour that starts up to 59 min before `from` still holds minutes of the range.
  const rows = await tx.$queryRaw<{ minute: Date; span_minutes: number; data: Uint8Array }[]>`
    SELECT minute, span_minutes, data FROM observation_rollups
     WHERE host_id = ${hostId}
       AND minute >= ${new Date(first.getTime() - HOUR_MS + MINUTE_MS).toISOString()}::timestamptz
       AND minute <= ${to.toISOString()}::timestamptz
     ORDER BY minute`;
  return rows
    .flatMap((r) =>
      r.span_minutes > 1
        ? unpackRollups(new Date(r.minute), r.data)
        : [{ minute: new Date(r.minute), rollup: decodeRollup(r.data) }],
    )
    .filter((p) => p.minute >= first && p.minute <= to)
    .sort((a, b) => a.minute.getTime() - b.minute.getTime());
}

/** Limits of one compaction run (packages/api telemetry-compactor.ts gives the defaults and why). */
export interface CompactionLimits {
  /** Minutes of 1 s samples kept (raw and chunks). */
  retentionMinutes: number;
  /** Days of rollups kept. */
  rollupDays: number;
  /** Seconds before `now` whose samples stay raw (at least MIN_HOT_WINDOW_MS). */
  hotWindowS: number;
  maxMinutesPerRun: number;
  minutesPerTransaction: number;
  /** Rows each prune statement deletes at most. */
  pruneLimit: number;
  /** Host-hours of rollups packed at most. */
  maxHoursPerRun: number;
}

export interface CompactionRun {
  /** Another process held the compactor lock: this run moved nothing. */
  skipped: boolean;
  /** Host-minutes moved into chunks, and the raw rows they held. */
  minutes: number;
  rows: number;
  /** Bytes of the chunks written. */
  chunkBytes: number;
  /** Raw rows, chunks and rollups deleted by retention. */
  prunedRaw: number;
  prunedChunks: number;
  prunedRollups: number;
  /** Minute rollups packed into hours. */
  packedMinutes: number;
}

/**
 * One bounded compaction run at `now`: move complete host-minutes older than the hot window into
 * chunks and rollups (oldest first, minutesPerTransaction per transaction, maxMinutesPerRun in all),
 * delete raw rows of minutes wholly past the retention instead of compacting them (hosts whose
 * ingest stopped: ingest's own prune runs only when a batch comes), pack the rollups of hours wholly
 * past it into one row each (maxHoursPerRun), then prune chunks and rollups.
 */
export async function runCompaction(db: Db, now: Date, limits: CompactionLimits): Promise<CompactionRun> {
  const run: CompactionRun = {
    skipped: false,
    minutes: 0,
    rows: 0,
    chunkBytes: 0,
    prunedRaw: 0,
    prunedChunks: 0,
    prunedRollups: 0,
    packedMinutes: 0,
  };
  const retentionStart = new Date(now.getTime() - limits.retentionMinutes * 60_000);
  // Minutes that ended at least hotWindowS ago start before this boundary.
  const hotMs = Math.max(limits.hotWindowS * 1000, MIN_HOT_WINDOW_MS);
  const before = minuteOf(new Date(now.getTime() - hotMs));
  let attempts = 0;
  while (run.minutes < limits.maxMinutesPerRun && attempts++ < limits.maxMinutesPerRun) {
    const candidates = await compactionCandidates(
      db,
      before,
      Math.min(limits.minutesPerTransaction, limits.maxMinutesPerRun - run.minutes),
    );
    if (candidates.length === 0) break;
    const expired = candidates.filter((c) => c.minute.getTime() + MINUTE_MS <= retentionStart.getTime());
    for (const c of expired) run.prunedRaw += await pruneHostRawSamples(db, c.hostId, retentionStart);
    const live = candidates.filter((c) => !expired.includes(c));
    if (live.length === 0) continue;
    const done = await compactMinutes(db, live);
    if (done === null) {
      run.skipped = true;
      break;
    }
    for (const d of done) {
      run.minutes++;
      run.rows += d.moved;
      run.chunkBytes += d.bytes;
    }
  }
  // Hours wholly past the 1 s retention: no replay can change their minutes any more.
  const packBefore = new Date(Math.floor(retentionStart.getTime() / HOUR_MS) * HOUR_MS);
  let hours = 0;
  while (!run.skipped && hours < limits.maxHoursPerRun) {
    const candidates = await rollupPackCandidates(
      db,
      packBefore,
      Math.min(limits.minutesPerTransaction, limits.maxHoursPerRun - hours),
    );
    if (candidates.length === 0) break;
    const packed = await packRollupHours(db, candidates);
    if (packed === null) {
      run.skipped = true;
      break;
    }
    hours += candidates.length;
    run.packedMinutes += packed;
  }
  run.prunedChunks = await pruneChunks(db, retentionStart, limits.pruneLimit);
  const rollupStart = new Date(now.getTime() - limits.rollupDays * 86_400_000);
  run.prunedRollups = await pruneRollups(db, rollupStart, limits.pruneLimit);
  return run;
}
