import type { Prisma } from "@prisma/client";
import { rawRows, type Db, type SqlClient } from "../client";
import { MIN_HOT_WINDOW_MS, samplesOfChunks } from "./observation-chunks";
import { minuteOf } from "./observation-codec";

/**
 * Observation samples at 1 s: the raw tier, one row per (host, sampledAt) with the agent's
 * Observation verbatim, which ingest writes; and observation_chunks, where the compactor moves each
 * complete minute a few minutes after it ended (observation-chunks.ts). The readers below read both
 * in one statement, so callers see every stored sample once whichever tier holds it. Every query
 * walks an index whose key starts with host_id.
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

/** Time of each host's newest stored sample (null: none), in one statement; every host asked is in the result. */
export async function newestSamplesAt(
  tx: SqlClient,
  hostIds: readonly string[],
): Promise<Map<string, Date | null>> {
  const rows = await rawRows<{ host_id: string; newest: Date | null }>(
    tx,
    `SELECT h.id AS host_id,
            greatest((SELECT max(sampled_at) FROM observation_samples WHERE host_id = h.id),
                     (SELECT max(last_at) FROM observation_chunks WHERE host_id = h.id)) AS newest
       FROM unnest($1::text[]) AS h(id)`,
    [hostIds],
  );
  const newest = new Map<string, Date | null>(hostIds.map((id) => [id, null]));
  for (const r of rows) newest.set(r.host_id, r.newest ? new Date(r.newest) : null);
  return newest;
}

/**
 * Delete the host's raw samples older than `before`, and its chunks whose samples all are, in one
 * statement; returns how many raw rows went.
 */
export async function pruneSamples(tx: Tx, hostId: string, before: Date): Promise<number> {
  const [r] = await tx.$queryRaw<{ raw: number }[]>`
    WITH c AS (
      DELETE FROM observation_chunks WHERE host_id = ${hostId} AND last_at < ${before.toISOString()}::timestamptz
      RETURNING 1
    ), s AS (
      DELETE FROM observation_samples WHERE host_id = ${hostId} AND sampled_at < ${before.toISOString()}::timestamptz
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM s)::int AS raw, (SELECT count(*) FROM c)::int AS chunks`;
  return r?.raw ?? 0;
}

/** A stored sample: when, and the Observation. */
export interface StoredSample {
  sampledAt: Date;
  payload: Prisma.JsonValue;
}

/** Rows of a union query over both tiers: a raw sample, or a chunk to decode. */
interface TierRow {
  sampled_at: Date | null;
  payload: Prisma.JsonValue | null;
  minute: Date | null;
  data: Uint8Array | null;
}

/** The samples of union rows within [from, to], oldest first, one per instant. */
function samplesOfRows(rows: readonly TierRow[], from: number, to: number): StoredSample[] {
  const byTime = new Map<number, StoredSample>();
  const chunks: { minute: Date; data: Uint8Array }[] = [];
  for (const r of rows) {
    if (r.data && r.minute) chunks.push({ minute: r.minute, data: r.data });
    else if (r.sampled_at) {
      const sampledAt = new Date(r.sampled_at);
      byTime.set(sampledAt.getTime(), { sampledAt, payload: r.payload });
    }
  }
  for (const s of samplesOfChunks(chunks)) {
    const t = s.sampledAt.getTime();
    if (t >= from && t <= to && !byTime.has(t)) {
      byTime.set(t, { sampledAt: s.sampledAt, payload: s.payload as Prisma.JsonValue });
    }
  }
  return [...byTime.values()].sort((a, b) => a.sampledAt.getTime() - b.sampledAt.getTime());
}

/** The host's samples at or after `from` (and at or before `to`, if given), oldest first. */
export async function samplesBetween(tx: Tx, hostId: string, from: Date, to?: Date): Promise<StoredSample[]> {
  const upper = to ? to.toISOString() : "infinity";
  const rows = await tx.$queryRaw<TierRow[]>`
    SELECT sampled_at, payload, NULL::timestamptz AS minute, NULL::bytea AS data
      FROM observation_samples
     WHERE host_id = ${hostId}
       AND sampled_at >= ${from.toISOString()}::timestamptz AND sampled_at <= ${upper}::timestamptz
    UNION ALL
    SELECT NULL, NULL, minute, data
      FROM observation_chunks
     WHERE host_id = ${hostId}
       AND minute >= ${minuteOf(from).toISOString()}::timestamptz AND minute <= ${upper}::timestamptz`;
  return samplesOfRows(rows, from.getTime(), to ? to.getTime() : Infinity);
}

/** The host's newest sample, or null. */
export async function latestSample(tx: Tx, hostId: string): Promise<StoredSample | null> {
  const rows = await tx.$queryRaw<TierRow[]>`
    (SELECT sampled_at, payload, NULL::timestamptz AS minute, NULL::bytea AS data
       FROM observation_samples WHERE host_id = ${hostId} ORDER BY sampled_at DESC LIMIT 1)
    UNION ALL
    (SELECT last_at, NULL, minute, data
       FROM observation_chunks WHERE host_id = ${hostId} ORDER BY minute DESC LIMIT 1)`;
  const raw = rows.find((r) => r.data === null && r.sampled_at);
  const chunk = rows.find((r) => r.data !== null);
  if (chunk?.sampled_at && (!raw?.sampled_at || new Date(chunk.sampled_at) > new Date(raw.sampled_at))) {
    return samplesOfRows([chunk], -Infinity, Infinity).at(-1) ?? null;
  }
  return raw?.sampled_at ? { sampledAt: new Date(raw.sampled_at), payload: raw.payload } : null;
}

/** How many samples the host has in the 1 s tier (raw and compacted). */
export async function countSamples(tx: Tx, hostId: string): Promise<number> {
  const [r] = await tx.$queryRaw<{ n: number }[]>`
    SELECT ((SELECT count(*) FROM observation_samples WHERE host_id = ${hostId})
          + (SELECT coalesce(sum(cardinality(offsets_ms)), 0) FROM observation_chunks WHERE host_id = ${hostId}))::int AS n`;
  return r?.n ?? 0;
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

/** A NOTIFY the batch's statement sends when it stored anything (delivered at its commit). */
export interface StoreNotify {
  channel: string;
  payload: string;
}

/**
 * The JSON text the samples' payloads were parsed from (an agent's request body): an object whose
 * `observations` array holds them, `samples[i]`'s payload being `observations[at[i]]`. storeBatch
 * then hands PostgreSQL this text and stores each observation's own text, instead of serializing
 * every payload again: 4-5 % of the console's event loop at 1,000 agents. The caller vouches that
 * the text parses to the payloads (ingest validated exactly that object; the contract's objects are
 * strict and transform nothing, so the text holds nothing else).
 */
export interface SampleSource {
  json: string;
  at: readonly number[];
}

/**
 * Store one agent batch in a single statement (one round trip, atomic without an interactive
 * transaction, so ingest never waits for a transaction slot): insert the samples inside the window
 * (duplicates by time skipped, also those already compacted into a chunk: a replay stays idempotent
 * after its minute was compacted), delete the host's raw samples outside it, and mark the host seen. All
 * parts of the statement see one snapshot, so the DELETE never sees (or removes) the rows the INSERT
 * adds.
 *
 * With `clock` (ingest.service.ts always passes the console's clock) the window is
 * [now - retentionMs, now + maxFutureMs]: a sample dated years ahead can neither prune the host's
 * current samples nor hide them, and one stored before this rule existed is deleted. Without it the
 * window ends at the batch's newest sample (callers storing fixture samples at fixed dates); the
 * host's stored samples never move it.
 *
 * With `notify`, the same statement sends that notification when it stored a sample (live pages
 * learn of the batch without another round trip).
 *
 * Samples older than half of MIN_HOT_WINDOW_MS (replays) cost a second statement that drops any
 * stored while the compactor was moving their minute.
 *
 * With `source` the payloads are taken from that text (SampleSource); without, they are serialized.
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
  notify?: StoreNotify,
  source?: SampleSource,
): Promise<{ accepted: number; storedIds: string[]; pruned: number }> {
  if (source && source.at.length !== samples.length) {
    throw new Error(`storeBatch: ${samples.length} samples but ${source.at.length} source positions`);
  }
  const { json, at } = source ?? {
    json: JSON.stringify({ observations: samples.map((s) => s.payload) }),
    at: samples.map((_, i) => i),
  };
  const batchNewest = samples.reduce((m, s) => Math.max(m, s.sampledAt.getTime()), 0);
  const now = clock?.now.getTime() ?? batchNewest;
  const from = new Date(now - retentionMs).toISOString();
  // Without a clock nothing stored is "in the future": the upper bound is far enough to never bite.
  const to = clock ? new Date(now + clock.maxFutureMs).toISOString() : "infinity";
  const [r] = await rawRows<{ stored: string[] | null; pruned: number }>(
    tx,
    `WITH x AS (
       SELECT r.id, r.sampled_at, o.payload
         FROM unnest($2::text[], $11::timestamptz[], $12::int[]) AS r(id, sampled_at, n)
         JOIN json_array_elements($13::json -> 'observations') WITH ORDINALITY AS o(payload, n)
           ON o.n = r.n + 1
     ), ins AS (
       INSERT INTO observation_samples (id, host_id, sampled_at, payload)
       SELECT x.id, $1, x.sampled_at, x.payload
         FROM x
        WHERE x.sampled_at >= $3::timestamptz AND x.sampled_at <= $4::timestamptz
          AND NOT EXISTS (
                SELECT 1 FROM observation_chunks c
                 WHERE c.host_id = $1
                   AND c.minute = date_trunc('minute', x.sampled_at, 'UTC')
                   AND (extract(epoch FROM x.sampled_at - c.minute) * 1000)::int = ANY (c.offsets_ms))
       ON CONFLICT DO NOTHING
       RETURNING id
     ), del AS (
       DELETE FROM observation_samples
        WHERE host_id = $1
          AND (sampled_at < $3::timestamptz OR sampled_at > $4::timestamptz)
       RETURNING 1
     ), upd AS (
       UPDATE hosts
          SET last_seen_at = now() AT TIME ZONE 'UTC',
              data_plane = $5::jsonb,
              agent_version = $6,
              kernel_release = $7,
              samples_dropped = COALESCE($8::jsonb, samples_dropped)
        WHERE id = $1
       RETURNING 1
     )
     SELECT (SELECT array_agg(id) FROM ins) AS stored,
            (SELECT count(*) FROM del)::int AS pruned,
            (SELECT count(*) FROM upd)::int AS hosts,
            (SELECT count(pg_notify($9::text, $10::text))
               FROM (SELECT 1 FROM ins LIMIT 1) i
              WHERE $9::text IS NOT NULL)::int AS notified`,
    [
      hostId,
      samples.map((s) => s.id),
      from,
      to,
      JSON.stringify(seen.dataPlane),
      seen.agentVersion,
      seen.kernelRelease,
      seen.samplesDropped === undefined ? null : JSON.stringify(seen.samplesDropped),
      notify?.channel ?? null,
      notify?.payload ?? null,
      samples.map((s) => s.sampledAt.toISOString()),
      at,
      json,
    ],
  );
  let storedIds = r?.stored ?? [];
  // A sample old enough for its minute to be compacted may have been stored while the compactor was
  // moving that minute (observation-chunks.ts): the statement's snapshot predates the chunk. A second
  // statement sees the chunk; half the guarantee is the margin for another console's clock.
  const recheckBefore = now - MIN_HOT_WINDOW_MS / 2;
  const stored = new Set(storedIds);
  const old = samples
    .filter((s) => stored.has(s.id) && s.sampledAt.getTime() < recheckBefore)
    .map((s) => s.id);
  if (old.length > 0) {
    const copies = await rawRows<{ id: string }>(
      tx,
      `DELETE FROM observation_samples s
        USING observation_chunks c
        WHERE s.id = ANY($1::text[])
          AND c.host_id = s.host_id
          AND c.minute = date_trunc('minute', s.sampled_at, 'UTC')
          AND (extract(epoch FROM s.sampled_at - c.minute) * 1000)::int = ANY (c.offsets_ms)
       RETURNING s.id`,
      [old],
    );
    if (copies.length > 0) {
      const dropped = new Set(copies.map((c) => c.id));
      storedIds = storedIds.filter((id) => !dropped.has(id));
    }
  }
  return { accepted: storedIds.length, storedIds, pruned: r?.pruned ?? 0 };
}

/** What the evaluation window of a host holds, without reading it (evaluationWindowShape). */
export interface WindowShape {
  /** The host's newest raw sample, or null. */
  newest: Date | null;
  /** Raw samples in the `seconds` before it, inclusive (as evaluationWindow counts them). */
  count: number;
  /** Compacted samples reach into that window (a host that went quiet): read it instead. */
  chunked: boolean;
}

/**
 * The newest sample and sample count of the host's evaluation window, from the (host_id,
 * sampled_at) index alone: a console that holds the window's samples in memory (ingest gave them)
 * checks with this that they are all the database holds before it uses them instead of reading and
 * parsing a minute of payloads.
 */
export async function evaluationWindowShape(
  tx: SqlClient,
  hostId: string,
  seconds: number,
): Promise<WindowShape> {
  return (await evaluationWindowShapes(tx, [hostId], seconds)).get(hostId)!;
}

/**
 * evaluationWindowShape of many hosts in one statement (the evaluator checks the windows of a whole
 * batch of hosts at once); every host asked is in the result.
 */
export async function evaluationWindowShapes(
  tx: SqlClient,
  hostIds: readonly string[],
  seconds: number,
): Promise<Map<string, WindowShape>> {
  const rows = await rawRows<{ host_id: string; newest: Date | null; count: number; chunked: boolean }>(
    tx,
    `SELECT h.id AS host_id, n.newest,
            (SELECT count(*) FROM observation_samples s
              WHERE s.host_id = h.id
                AND s.sampled_at >= n.newest - make_interval(secs => $2::float8))::int AS count,
            coalesce(c.newest >= n.newest - make_interval(secs => $2::float8), c.newest IS NOT NULL) AS chunked
       FROM unnest($1::text[]) AS h(id)
      CROSS JOIN LATERAL (SELECT max(sampled_at) AS newest FROM observation_samples WHERE host_id = h.id) n
      CROSS JOIN LATERAL (SELECT max(last_at) AS newest FROM observation_chunks WHERE host_id = h.id) c`,
    [hostIds, seconds],
  );
  const shapes = new Map<string, WindowShape>(
    hostIds.map((id) => [id, { newest: null, count: 0, chunked: false }]),
  );
  for (const r of rows) {
    shapes.set(r.host_id, {
      newest: r.newest ? new Date(r.newest) : null,
      count: r.count,
      chunked: r.chunked ?? false,
    });
  }
  return shapes;
}

/**
 * The host's samples of the last `seconds` before its newest one, oldest first, in one query (the
 * newest is found by the same index walk). Empty when the host has none.
 */
export async function evaluationWindow(
  tx: SqlClient,
  hostId: string,
  seconds: number,
): Promise<StoredSample[]> {
  // The compactor leaves at least the last few minutes raw, so the chunk half is empty unless the
  // host went quiet long enough for its newest samples to be compacted.
  const rows = await rawRows<TierRow & { since: Date }>(
    tx,
    `WITH w AS (
       SELECT greatest((SELECT max(sampled_at) FROM observation_samples WHERE host_id = $1),
                       (SELECT max(last_at) FROM observation_chunks WHERE host_id = $1))
              - make_interval(secs => $2::float8) AS since
     )
     SELECT sampled_at, payload, NULL::timestamptz AS minute, NULL::bytea AS data, w.since
       FROM observation_samples, w
      WHERE host_id = $1 AND sampled_at >= w.since
     UNION ALL
     SELECT NULL, NULL, minute, data, w.since
       FROM observation_chunks, w
      WHERE host_id = $1 AND last_at >= w.since`,
    [hostId, seconds],
  );
  const since = rows[0]?.since;
  return since ? samplesOfRows(rows, new Date(since).getTime(), Infinity) : [];
}
