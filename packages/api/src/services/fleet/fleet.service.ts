import {
  poolHealthCheck,
  TideError,
  type Director,
  type HashField,
  type PoolDetail,
  type PoolSummary,
  type Proxy,
  type TableVersionSummary,
} from "@tide/contracts";
import {
  bindSelect,
  poolPublicSelect,
  poolSummaries,
  proxySelect,
  tableVersionSummarySelect,
  type Db,
  type ProxyRow,
  type TableVersionSummaryRow,
} from "@tide/db";
import { poolListCacheFor } from "./pool-list-cache";
import { changeInProgress, planProxyActions } from "../transitions/proxy-transition.plan";

export function toProxy(p: ProxyRow): Proxy {
  return {
    id: p.id,
    poolId: p.poolId,
    address: p.address,
    hostname: p.hostname,
    state: p.state,
    stateChangedAt: p.stateChangedAt.toISOString(),
    health: {
      healthy: p.healthy,
      reason: p.healthReason,
      changedAt: p.healthChangedAt.toISOString(),
      pinned: p.healthPinned,
    },
    slot: p.slot,
  };
}

export function toVersionSummary(v: TableVersionSummaryRow): TableVersionSummary {
  return {
    id: v.id,
    poolId: v.poolId,
    version: v.version,
    contentHash: v.contentHash,
    cause: v.cause,
    reason: v.reason,
    actor: v.actorLabel,
    createdAt: v.createdAt.toISOString(),
  };
}

const poolSummaryInclude = {
  ...poolPublicSelect,
  binds: { select: bindSelect, orderBy: { createdAt: "asc" as const } },
  proxies: { select: proxySelect, orderBy: { slot: "asc" as const } },
  directors: { select: { id: true, hostname: true }, orderBy: { hostname: "asc" as const } },
  tableVersions: {
    select: tableVersionSummarySelect,
    orderBy: { version: "desc" as const },
    take: 1,
  },
};

type PoolWithRelations = {
  id: string;
  name: string;
  description: string;
  hashFields: string[];
  altHashFields: string[];
  hashMigrationStartedAt: Date | null;
  healthCheck: unknown;
  binds: {
    id: string;
    address: string;
    prefixBits: number;
    proto: "tcp" | "udp";
    portStart: number;
    portEnd: number;
  }[];
  proxies: ProxyRow[];
  directors: { id: string; hostname: string }[];
  tableVersions: TableVersionSummaryRow[];
};

function toPoolSummary(p: PoolWithRelations): PoolSummary {
  const counts = { active: 0, draining: 0, inactive: 0, filling: 0, unhealthy: 0 };
  for (const proxy of p.proxies) {
    counts[proxy.state] += 1;
    if (!proxy.healthy) counts.unhealthy += 1;
  }
  const current = p.tableVersions[0];
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    hashFields: p.hashFields as HashField[],
    hashMigration:
      p.altHashFields.length > 0 && p.hashMigrationStartedAt
        ? {
            from: p.altHashFields as HashField[],
            to: p.hashFields as HashField[],
            startedAt: p.hashMigrationStartedAt.toISOString(),
          }
        : null,
    healthCheck: poolHealthCheck(p.healthCheck),
    binds: p.binds,
    proxyCounts: counts,
    directorIds: p.directors.map((d) => d.id),
    currentVersion: current ? toVersionSummary(current) : null,
  };
}

/**
 * Every pool's summary: from this process's memory while the fleet's revision is unchanged
 * (pool-list-cache.ts), else in one statement (poolSummaries). The API's most read page.
 */
export async function listPools(db: Db): Promise<PoolSummary[]> {
  return poolListCacheFor(db, async () => (await poolSummaries(db)).map(toPoolSummary)).get();
}

export async function getPool(db: Db, poolId: string): Promise<PoolDetail> {
  const pool = await db.pool.findUnique({
    where: { id: poolId },
    select: {
      ...poolSummaryInclude,
      directors: {
        select: { id: true, hostname: true, pools: { select: { id: true } } },
        orderBy: { hostname: "asc" },
      },
    },
  });
  if (!pool) throw new TideError("not_found", `Pool ${poolId} does not exist.`);
  return {
    ...toPoolSummary(pool),
    proxies: pool.proxies.map(toProxy),
    directors: pool.directors.map((d) => ({
      id: d.id,
      hostname: d.hostname,
      poolIds: d.pools.map((x) => x.id),
    })),
    // The same checks the actions make, so the console disables what the API would refuse.
    actions: planProxyActions(pool.proxies, { served: pool.directors.length > 0 }),
    changeInProgress: changeInProgress(pool.proxies),
  };
}

export async function listDirectors(db: Db): Promise<Director[]> {
  const directors = await db.director.findMany({
    select: { id: true, hostname: true, pools: { select: { id: true } } },
    orderBy: { hostname: "asc" },
  });
  return directors.map((d) => ({ id: d.id, hostname: d.hostname, poolIds: d.pools.map((p) => p.id) }));
}

export async function listProxies(db: Db, poolId?: string): Promise<Proxy[]> {
  const rows = await db.proxy.findMany({
    where: poolId ? { poolId } : {},
    select: proxySelect,
    orderBy: [{ poolId: "asc" }, { slot: "asc" }],
  });
  return rows.map(toProxy);
}

export async function fleetOverview(db: Db): Promise<{ pools: PoolSummary[]; directors: Director[] }> {
  const [pools, directors] = await Promise.all([listPools(db), listDirectors(db)]);
  return { pools, directors };
}
