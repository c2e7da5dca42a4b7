import type { Prisma } from "@prisma/client";
import { rawRows, type Db } from "../client";

/** An enrollment token as redeeming needs it: what it grants and who is accountable for it. */
export interface EnrollmentTokenGrant {
  id: string;
  hostname: string;
  roles: string[];
  createdById: string;
  createdByEmail: string;
  usedAt: Date;
}

/** An enrollment token's state as stored, with the database's clock, to say why it was refused. */
export interface EnrollmentTokenStatus {
  id: string;
  hostname: string;
  roles: string[];
  expiresAt: Date;
  usedAt: Date | null;
  revokedAt: Date | null;
  /** Name of the host it enrolled (null before use, or when that host was removed since). */
  usedByHostName: string | null;
  /** now() of the database, the clock the claim compared expires_at with. */
  now: Date;
}

/** pg gives Date for timestamptz, Prisma's raw queries may give an ISO string: accept both. */
const instant = (v: Date | string) => new Date(v);

/**
 * Spend the token whose sha256 is `tokenHash`: one UPDATE sets used_at only while it is unused,
 * unrevoked and unexpired (by the database's clock), so of two hosts racing with one token exactly
 * one gets the row (the other's UPDATE waits for the row lock, then finds used_at set and matches
 * nothing). Null: unknown, spent, revoked or expired (enrollmentTokenStatus says which). Run it in
 * the transaction that issues the host token: if that fails, the token is not spent.
 * Timestamps are stored as UTC without a zone (Prisma's DateTime), hence AT TIME ZONE 'UTC'.
 */
export async function claimEnrollmentToken(
  tx: Db | Prisma.TransactionClient,
  tokenHash: string,
): Promise<EnrollmentTokenGrant | null> {
  const sql = `UPDATE enrollment_tokens t
                  SET used_at = now() AT TIME ZONE 'UTC'
                WHERE t.token_hash = $1
                  AND t.used_at IS NULL
                  AND t.revoked_at IS NULL
                  AND t.expires_at > now() AT TIME ZONE 'UTC'
            RETURNING t.id, t.hostname, t.roles, t.created_by_id,
                      (SELECT u.email FROM users u WHERE u.id = t.created_by_id) AS created_by_email,
                      t.used_at AT TIME ZONE 'UTC' AS used_at`;
  type Row = {
    id: string;
    hostname: string;
    roles: string[];
    created_by_id: string;
    created_by_email: string;
    used_at: Date | string;
  };
  const [r] = await rawRows<Row>(tx, sql, [tokenHash]);
  if (!r) return null;
  return {
    id: r.id,
    hostname: r.hostname,
    roles: r.roles,
    createdById: r.created_by_id,
    createdByEmail: r.created_by_email,
    usedAt: instant(r.used_at),
  };
}

/** Why a token could not be claimed: its stored state and the database's clock, or null if unknown. */
export async function enrollmentTokenStatus(
  db: Db | Prisma.TransactionClient,
  tokenHash: string,
): Promise<EnrollmentTokenStatus | null> {
  const sql = `SELECT t.id, t.hostname, t.roles,
                      t.expires_at AT TIME ZONE 'UTC' AS expires_at,
                      t.used_at AT TIME ZONE 'UTC' AS used_at,
                      t.revoked_at AT TIME ZONE 'UTC' AS revoked_at,
                      h.name AS used_by_host_name,
                      now() AS now
                 FROM enrollment_tokens t LEFT JOIN hosts h ON h.id = t.used_by_host_id
                WHERE t.token_hash = $1`;
  type Row = {
    id: string;
    hostname: string;
    roles: string[];
    expires_at: Date | string;
    used_at: Date | string | null;
    revoked_at: Date | string | null;
    used_by_host_name: string | null;
    now: Date | string;
  };
  const [r] = await rawRows<Row>(db, sql, [tokenHash]);
  if (!r) return null;
  return {
    id: r.id,
    hostname: r.hostname,
    roles: r.roles,
    expiresAt: instant(r.expires_at),
    usedAt: r.used_at === null ? null : instant(r.used_at),
    revokedAt: r.revoked_at === null ? null : instant(r.revoked_at),
    usedByHostName: r.used_by_host_name,
    now: instant(r.now),
  };
}
