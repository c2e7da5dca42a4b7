import type { Prisma } from "@prisma/client";
import { rawRows, type Db } from "../client";

/** A host token as authentication needs it (host_tokens joined with its host). */
export interface HostTokenRow {
  id: string;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  hostId: string;
  hostName: string;
}

/**
 * The token whose sha256 is `tokenHash`, with its host, or null. Every agent request authenticates
 * (cached for seconds per console process): at 1,000 agents a few hundred lookups a second, so it
 * runs on the pool's node-postgres directly (client.ts pgPoolOf) when the client has one.
 * Timestamps are stored as UTC without a zone (Prisma's DateTime) and read back as instants.
 */
export async function hostTokenByHash(
  db: Db | Prisma.TransactionClient,
  tokenHash: string,
): Promise<HostTokenRow | null> {
  const sql = `SELECT t.id, t.revoked_at AT TIME ZONE 'UTC' AS revoked_at,
                      t.last_used_at AT TIME ZONE 'UTC' AS last_used_at,
                      h.id AS host_id, h.name AS host_name
                 FROM host_tokens t JOIN hosts h ON h.id = t.host_id
                WHERE t.token_hash = $1`;
  type Row = {
    id: string;
    revoked_at: Date | null;
    last_used_at: Date | null;
    host_id: string;
    host_name: string;
  };
  const [r] = await rawRows<Row>(db, sql, [tokenHash]);
  if (!r) return null;
  return {
    id: r.id,
    revokedAt: r.revoked_at ? new Date(r.revoked_at) : null,
    lastUsedAt: r.last_used_at ? new Date(r.last_used_at) : null,
    hostId: r.host_id,
    hostName: r.host_name,
  };
}

/**
 * Record that the token was used at `at` (agents' requests, at most once a minute per token): on
 * the pool's node-postgres like the lookup, not a Prisma update per agent a minute.
 */
export async function touchHostToken(
  db: Db | Prisma.TransactionClient,
  tokenId: string,
  at: Date,
): Promise<void> {
  await rawRows(
    db,
    "UPDATE host_tokens SET last_used_at = $2::timestamptz AT TIME ZONE 'UTC' WHERE id = $1",
    [tokenId, at.toISOString()],
  );
}
