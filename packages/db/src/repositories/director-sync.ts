import type { Prisma } from "@prisma/client";
import { rawRows, type Db } from "../client";

/** What touchUnchangedDirectorSync found. */
export type DirectorSyncTouch =
  /** No director has this host name: nothing to record. */
  | "no_director"
  /** Every row matched the report; their checked_at moved to `now`. */
  | "touched"
  /** Something differs (a served hash, in or out of sync, a row missing or no longer assigned): nothing written. */
  | "changed";

/**
 * The common case of a director's report, in one statement: when what it serves (`served`, content
 * hash by pool name; `{}` when its director is unreachable) changes nothing in its
 * director_pool_sync rows (same served hash, same in-sync against the pool's newest version, one
 * row per assigned pool and none other), move every row's checked_at to `now` and say "touched";
 * otherwise write nothing and say "changed" (the caller records the change). Each director reports
 * every second: this replaced a Prisma read of three relations, a version query and a transaction
 * per report, most of a quiet console's database work.
 *
 * In sync means what recordDirectorSync means: the served hash equals the newest version's, or
 * nothing is served when the pool has no version. `_DirectorToPool` is Prisma's implicit
 * many-to-many table (A = director id, B = pool id). Timestamps are stored as UTC without a zone.
 */
export async function touchUnchangedDirectorSync(
  db: Db | Prisma.TransactionClient,
  hostname: string,
  served: Readonly<Record<string, string>>,
  now: Date,
): Promise<DirectorSyncTouch> {
  const sql = `
    WITH d AS (SELECT id FROM directors WHERE hostname = $1),
    assigned AS (
      SELECT p.id AS pool_id, $2::jsonb ->> p.name AS served,
             (SELECT v.content_hash FROM table_versions v
               WHERE v.pool_id = p.id ORDER BY v.version DESC LIMIT 1) AS desired
        FROM d JOIN "_DirectorToPool" dp ON dp."A" = d.id JOIN pools p ON p.id = dp."B"
    ),
    differs AS (
      SELECT 1 FROM assigned a
        LEFT JOIN director_pool_sync s ON s.director_id = (SELECT id FROM d) AND s.pool_id = a.pool_id
       WHERE s.director_id IS NULL
          OR s.served_hash IS DISTINCT FROM a.served
          OR (s.out_of_sync_since IS NULL) <> (a.served IS NOT DISTINCT FROM a.desired)
      UNION ALL
      SELECT 1 FROM director_pool_sync s
       WHERE s.director_id = (SELECT id FROM d)
         AND s.pool_id NOT IN (SELECT pool_id FROM assigned)
    ),
    verdict AS (
      SELECT EXISTS (SELECT 1 FROM d) AS known, NOT EXISTS (SELECT 1 FROM differs) AS unchanged
    ),
    touched AS (
      UPDATE director_pool_sync SET checked_at = $3::timestamptz AT TIME ZONE 'UTC'
       WHERE director_id = (SELECT id FROM d) AND (SELECT unchanged FROM verdict)
      RETURNING 1
    )
    SELECT known, unchanged, (SELECT count(*) FROM touched)::int AS touched FROM verdict`;
  const [r] = await rawRows<{ known: boolean; unchanged: boolean }>(db, sql, [
    hostname,
    JSON.stringify(served),
    now.toISOString(),
  ]);
  if (!r?.known) return "no_director";
  return r.unchanged ? "touched" : "changed";
}
