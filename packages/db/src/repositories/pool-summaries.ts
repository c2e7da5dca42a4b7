import type { Prisma } from "@prisma/client";
import { rawRows, type Db } from "../client";
import type { BindRow, ProxyRow, TableVersionSummaryRow } from "../selects";

/** A pool with what its summary shows: binds, proxies, directors and its current table version. */
export interface PoolSummaryRow {
  id: string;
  name: string;
  description: string;
  hashFields: string[];
  altHashFields: string[];
  hashMigrationStartedAt: Date | null;
  healthCheck: unknown;
  createdAt: Date;
  binds: BindRow[];
  proxies: ProxyRow[];
  directors: { id: string; hostname: string }[];
  /** The newest version first; at most one (empty before the first table is built). */
  tableVersions: TableVersionSummaryRow[];
}

/**
 * A timestamp column (stored as UTC without a zone, Prisma's DateTime(3)) as JSON text in the form
 * Date.prototype.toISOString writes, so the rows read back into the same instants.
 */
const iso = (column: string) => `to_char(${column}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Every pool (or one, `poolId`) with its binds, proxies, directors and newest table version, in
 * one statement. GET /api/v1/pools is the API's most read page; Prisma answered it with a query
 * per relation, and one more per pool for the newest version (a nested `take`), each compiled in
 * WebAssembly on the event loop: a third of a read's CPU (issue 28). Here PostgreSQL builds each
 * pool's lists as JSON, on the pool's node-postgres directly (client.ts pgPoolOf). Ordered as the
 * Prisma query was: pools by name, binds by creation, proxies by slot, directors by hostname.
 */
export async function poolSummaries(
  db: Db | Prisma.TransactionClient,
  poolId?: string,
): Promise<PoolSummaryRow[]> {
  const sql = `
    SELECT p.id, p.name, p.description, p.hash_fields, p.alt_hash_fields,
           p.hash_migration_started_at AT TIME ZONE 'UTC' AS hash_migration_started_at,
           p.health_check, p.created_at AT TIME ZONE 'UTC' AS created_at,
           COALESCE((SELECT json_agg(json_build_object(
                        'id', b.id, 'address', b.address, 'prefixBits', b.prefix_bits,
                        'proto', b.proto, 'portStart', b.port_start, 'portEnd', b.port_end)
                      ORDER BY b.created_at, b.id)
                       FROM binds b WHERE b.pool_id = p.id), '[]') AS binds,
           COALESCE((SELECT json_agg(json_build_object(
                        'id', x.id, 'poolId', x.pool_id, 'address', x.address,
                        'hostname', x.hostname, 'state', x.state,
                        'stateChangedAt', ${iso("x.state_changed_at")}, 'healthy', x.healthy,
                        'healthReason', x.health_reason,
                        'healthChangedAt', ${iso("x.health_changed_at")},
                        'healthPinned', x.health_pinned, 'slot', x.slot)
                      ORDER BY x.slot)
                       FROM proxies x WHERE x.pool_id = p.id), '[]') AS proxies,
           COALESCE((SELECT json_agg(json_build_object('id', d.id, 'hostname', d.hostname)
                      ORDER BY d.hostname)
                       FROM "_DirectorToPool" dp JOIN directors d ON d.id = dp."A"
                      WHERE dp."B" = p.id), '[]') AS directors,
           (SELECT json_build_object(
                     'id', v.id, 'poolId', v.pool_id, 'version', v.version,
                     'contentHash', v.content_hash, 'cause', v.cause, 'reason', v.reason,
                     'actorLabel', v.actor_label, 'createdAt', ${iso("v.created_at")})
              FROM table_versions v WHERE v.pool_id = p.id
             ORDER BY v.version DESC LIMIT 1) AS current_version
      FROM pools p
     ${poolId === undefined ? "" : "WHERE p.id = $1"}
     ORDER BY p.name`;
  type Json<T> = Omit<T, "stateChangedAt" | "healthChangedAt" | "createdAt"> & {
    stateChangedAt?: string;
    healthChangedAt?: string;
    createdAt?: string;
  };
  type Row = {
    id: string;
    name: string;
    description: string;
    hash_fields: string[];
    alt_hash_fields: string[];
    hash_migration_started_at: Date | null;
    health_check: unknown;
    created_at: Date;
    binds: BindRow[];
    proxies: Json<ProxyRow>[];
    directors: { id: string; hostname: string }[];
    current_version: Json<TableVersionSummaryRow> | null;
  };
  const rows = await rawRows<Row>(db, sql, poolId === undefined ? [] : [poolId]);
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    description: r.description,
    hashFields: r.hash_fields,
    altHashFields: r.alt_hash_fields,
    hashMigrationStartedAt: r.hash_migration_started_at ? new Date(r.hash_migration_started_at) : null,
    healthCheck: r.health_check,
    createdAt: new Date(r.created_at),
    binds: r.binds,
    proxies: r.proxies.map((x) => ({
      ...x,
      stateChangedAt: new Date(x.stateChangedAt!),
      healthChangedAt: new Date(x.healthChangedAt!),
    })),
    directors: r.directors,
    tableVersions: r.current_version
      ? [{ ...r.current_version, createdAt: new Date(r.current_version.createdAt!) }]
      : [],
  }));
}

/**
 * The fleet's revision (fleet_revision, raised by the triggers of migration fleet_revision with
 * every committed change to what the pools list shows), or null if its row is missing. On the
 * pool's node-postgres directly: it is read on every pools list read.
 */
export async function fleetRevision(db: Db | Prisma.TransactionClient): Promise<bigint | null> {
  const [row] = await rawRows<{ revision: string }>(
    db,
    "SELECT revision::text AS revision FROM fleet_revision WHERE id = 1",
    [],
  );
  return row ? BigInt(row.revision) : null;
}
