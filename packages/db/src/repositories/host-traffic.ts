import type { Prisma } from "@prisma/client";
import { rawRows, type Db } from "../client";
import type { bindSelect } from "../selects";

type Client = Db | Prisma.TransactionClient;

/** A bind as the traffic of a proxy host is attributed to it (selects.ts bindSelect's fields). */
export type TrafficBind = Prisma.BindGetPayload<{ select: typeof bindSelect }>;

/** What the next step of a proxy host's live traffic starts from. */
export interface HostTrafficContext {
  /** hosts.traffic as stored (null: none yet). */
  traffic: Prisma.JsonValue | null;
  /** Pools the host is a proxy of (a proxy's host name is the host's name). */
  poolIds: string[];
  /** Their binds, once per proxy of the host in that pool. */
  binds: TrafficBind[];
}

/**
 * The host's stored traffic and the pools (with binds) it is a proxy of, in one statement. Ingest
 * asks for it with every batch of a host that reports traffic (1,000 agents: ~100 a second), so it
 * runs on the pool's node-postgres (client.ts rawRows), not as three Prisma queries.
 */
export async function hostTrafficContext(
  db: Client,
  hostId: string,
  hostname: string,
): Promise<HostTrafficContext> {
  const [r] = await rawRows<{ traffic: Prisma.JsonValue | null; pool_ids: string[]; binds: TrafficBind[] }>(
    db,
    `SELECT (SELECT traffic FROM hosts WHERE id = $1) AS traffic,
            ARRAY(SELECT DISTINCT pool_id FROM proxies WHERE hostname = $2) AS pool_ids,
            (SELECT coalesce(json_agg(json_build_object(
                      'id', b.id, 'address', b.address, 'prefixBits', b.prefix_bits,
                      'proto', b.proto, 'portStart', b.port_start, 'portEnd', b.port_end)
                      ORDER BY b.pool_id, b.created_at, b.id), '[]'::json)
               FROM proxies p JOIN binds b ON b.pool_id = p.pool_id
              WHERE p.hostname = $2) AS binds`,
    [hostId, hostname],
  );
  return { traffic: r?.traffic ?? null, poolIds: r?.pool_ids ?? [], binds: r?.binds ?? [] };
}

/**
 * Store the host's traffic and notify `channel` with one payload per entry of `payloads` (the pool
 * pages), in one statement: the NOTIFYs are delivered when it commits.
 */
export async function storeHostTraffic(
  db: Client,
  hostId: string,
  traffic: Prisma.InputJsonValue,
  channel: string,
  payloads: readonly string[],
): Promise<void> {
  await rawRows(
    db,
    `WITH u AS (UPDATE hosts SET traffic = $2::jsonb WHERE id = $1 RETURNING 1)
     SELECT (SELECT count(*) FROM u)::int AS updated,
            (SELECT count(pg_notify($3::text, p)) FROM unnest($4::text[]) AS p)::int AS notified`,
    [hostId, JSON.stringify(traffic), channel, payloads],
  );
}
