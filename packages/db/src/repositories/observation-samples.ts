import type { Prisma } from "@prisma/client";
import type { Db } from "../client";

/**
 * Observation samples: one row per (host, sampledAt), payload = the agent's Observation verbatim.
 * Every query here walks the unique (host_id, sampled_at DESC) index.
 */

type Tx = Prisma.TransactionClient | Db;

export interface SampleInsert {
  id: string;
  sampledAt: Date;
  payload: Prisma.InputJsonValue;
}

/** Insert a batch in one statement; samples already stored for that instant are skipped. */
export async function insertSamples(
  tx: Tx,
  hostId: string,
  samples: readonly SampleInsert[],
): Promise<number> {
  if (samples.length === 0) return 0;
  const { count } = await tx.observationSample.createMany({
    data: samples.map((s) => ({ id: s.id, hostId, sampledAt: s.sampledAt, payload: s.payload })),
    skipDuplicates: true,
  });
  return count;
}

/** Time of the host's newest stored sample, or null. */
export async function newestSampleAt(tx: Tx, hostId: string): Promise<Date | null> {
  const row = await tx.observationSample.findFirst({
    where: { hostId },
    orderBy: { sampledAt: "desc" },
    select: { sampledAt: true },
  });
  return row?.sampledAt ?? null;
}

/** Delete the host's samples older than `before`, in one statement; returns how many went. */
export async function pruneSamples(tx: Tx, hostId: string, before: Date): Promise<number> {
  const { count } = await tx.observationSample.deleteMany({ where: { hostId, sampledAt: { lt: before } } });
  return count;
}

/** The host's samples at or after `from` (and before `to`, if given), oldest first. */
export async function samplesBetween(
  tx: Tx,
  hostId: string,
  from: Date,
  to?: Date,
): Promise<{ sampledAt: Date; payload: Prisma.JsonValue }[]> {
  return tx.observationSample.findMany({
    where: { hostId, sampledAt: to ? { gte: from, lte: to } : { gte: from } },
    orderBy: { sampledAt: "asc" },
    select: { sampledAt: true, payload: true },
  });
}

/** The host's newest sample, or null. */
export async function latestSample(tx: Tx, hostId: string) {
  return tx.observationSample.findFirst({
    where: { hostId },
    orderBy: { sampledAt: "desc" },
    select: { sampledAt: true, payload: true },
  });
}

export async function countSamples(tx: Tx, hostId: string): Promise<number> {
  return tx.observationSample.count({ where: { hostId } });
}

/** What the agent's batch says about its host (written with the samples). */
export interface HostSeen {
  dataPlane: Prisma.InputJsonValue;
  agentVersion: string;
  kernelRelease: string | null;
  /** The agent's drop totals; absent (older agents) keeps what is stored. */
  samplesDropped?: Prisma.InputJsonValue;
}

/**
 * The clock ingest stores a batch against (the console's, never the agent's): samples before
 * `now - retentionMs` or after `now + maxFutureMs` are neither stored nor kept.
 */
export interface StoreClock {
  now: Date;
  maxFutureMs: number;
}

/**
 * Store one agent batch in a single statement (one round trip, atomic without an interactive
 * transaction, so ingest never waits for a transaction slot): insert the samples inside the window
 * (duplicates by time skipped), delete the host's samples outside it, and mark the host seen. All
 * parts of the statement see one snapshot, so the DELETE never sees (or removes) the rows the INSERT
 * adds.
 *
 * With `clock` (ingest.service.ts always passes the console's clock) the window is
 * [now - retentionMs, now + maxFutureMs]: a sample dated years ahead can neither prune the host's
 * current samples nor hide them, and one stored before this rule existed is deleted. Without it the
 * window ends at the batch's newest sample (callers storing fixture samples at fixed dates); the
 * host's stored samples never move it.
 *
 * Returns how many were stored, the ids of those stored, and how many were pruned.
 */
export async function storeBatch(
  tx: Tx,
  hostId: string,
  samples: readonly SampleInsert[],
  retentionMs: number,
  seen: HostSeen,
  clock?: StoreClock,
): Promise<{ accepted: number; storedIds: string[]; pruned: number }> {
  const rows = JSON.stringify(
    samples.map((s) => ({ id: s.id, sampled_at: s.sampledAt.toISOString(), payload: s.payload })),
  );
  const batchNewest = samples.reduce((m, s) => Math.max(m, s.sampledAt.getTime()), 0);
  const now = clock?.now.getTime() ?? batchNewest;
  const from = new Date(now - retentionMs).toISOString();
  // Without a clock nothing stored is "in the future": the upper bound is far enough to never bite.
  const to = clock ? new Date(now + clock.maxFutureMs).toISOString() : "infinity";
  const [r] = await tx.$queryRaw<{ stored: string[] | null; pruned: number }[]>`
    WITH ins AS (
      INSERT INTO observation_samples (id, host_id, sampled_at, payload)
      SELECT x.id, ${hostId}, x.sampled_at, x.payload
        FROM jsonb_to_recordset(${rows}::jsonb) AS x(id text, sampled_at timestamptz, payload jsonb)
       WHERE x.sampled_at >= ${from}::timestamptz AND x.sampled_at <= ${to}::timestamptz
      ON CONFLICT DO NOTHING
      RETURNING id
    ), del AS (
      DELETE FROM observation_samples
       WHERE host_id = ${hostId}
         AND (sampled_at < ${from}::timestamptz OR sampled_at > ${to}::timestamptz)
      RETURNING 1
    ), upd AS (
      UPDATE hosts
         SET last_seen_at = now() AT TIME ZONE 'UTC',
             data_plane = ${JSON.stringify(seen.dataPlane)}::jsonb,
             agent_version = ${seen.agentVersion},
             kernel_release = ${seen.kernelRelease},
             samples_dropped = COALESCE(${seen.samplesDropped === undefined ? null : JSON.stringify(seen.samplesDropped)}::jsonb, samples_dropped)
       WHERE id = ${hostId}
      RETURNING 1
    )
    SELECT (SELECT array_agg(id) FROM ins) AS stored,
           (SELECT count(*) FROM del)::int AS pruned,
           (SELECT count(*) FROM upd)::int AS hosts`;
  const storedIds = r?.stored ?? [];
  return { accepted: storedIds.length, storedIds, pruned: r?.pruned ?? 0 };
}

/**
 * The host's samples of the last `seconds` before its newest one, oldest first, in one query (the
 * newest is found by the same index walk). Empty when the host has none.
 */
export async function evaluationWindow(
  tx: Tx,
  hostId: string,
  seconds: number,
): Promise<{ sampledAt: Date; payload: Prisma.JsonValue }[]> {
  const rows = await tx.$queryRaw<{ sampled_at: Date; payload: Prisma.JsonValue }[]>`
    SELECT sampled_at, payload FROM observation_samples
     WHERE host_id = ${hostId}
       AND sampled_at >= (SELECT max(sampled_at) FROM observation_samples WHERE host_id = ${hostId})
                         - make_interval(secs => ${seconds}::float8)
     ORDER BY sampled_at`;
  return rows.map((r) => ({ sampledAt: new Date(r.sampled_at), payload: r.payload }));
}
