import {
  DIRECTOR_SILENT_AFTER_MS,
  TideError,
  type DataPlaneState,
  type DirectorPoolSync,
  type DirectorSync,
  type FleetSync,
  type PoolSync,
} from "@tide/contracts";
import type { Db } from "@tide/db";

/**
 * Do the directors serve what the console wants? Each director's agent reports, with every batch, the
 * content hash the director serves per pool name (DataPlaneState.tableHashes). recordDirectorSync
 * keeps one row per (director, pool) with the served hash and since when it has not matched the
 * pool's current version; the views below compare the rows with the current versions at read time,
 * so a change the directors have not picked up yet shows as "behind" at once, not at the next report.
 */

/** Newest version per pool: id, number, hash, when it was written. */
async function currentVersions(db: Db, poolIds: readonly string[]) {
  if (poolIds.length === 0)
    return new Map<string, { version: number; contentHash: string; createdAt: Date }>();
  const rows = await db.tableVersion.findMany({
    where: { poolId: { in: [...poolIds] } },
    orderBy: [{ poolId: "asc" }, { version: "desc" }],
    distinct: ["poolId"],
    select: { poolId: true, version: true, contentHash: true, createdAt: true },
  });
  return new Map(rows.map((r) => [r.poolId, r]));
}

/** The served director component of a report, or null when the host runs none. */
function directorComponent(dataPlane: readonly DataPlaneState[]): DataPlaneState | null {
  return dataPlane.find((d) => d.component === "director") ?? null;
}

/**
 * Record what a director host reported (called after each accepted batch). Writes only when the
 * served hash or the in-sync state of a pool changed, so a steady fleet costs two reads per batch.
 * An unreachable director serves nothing as far as anyone can tell.
 */
export async function recordDirectorSync(
  db: Db,
  hostname: string,
  dataPlane: readonly DataPlaneState[],
  now = new Date(),
): Promise<void> {
  const director = await db.director.findUnique({
    where: { hostname },
    select: {
      id: true,
      pools: { select: { id: true, name: true } },
      sync: { select: { poolId: true, servedHash: true, outOfSyncSince: true } },
    },
  });
  if (!director) return;
  const component = directorComponent(dataPlane);
  const served = component?.reachable ? component.tableHashes : {};
  const versions = await currentVersions(
    db,
    director.pools.map((p) => p.id),
  );
  const rows = new Map(director.sync.map((r) => [r.poolId, r]));
  const writes = [];
  for (const pool of director.pools) {
    const servedHash = served[pool.name] ?? null;
    const desired = versions.get(pool.id);
    const inSync = desired === undefined ? servedHash === null : servedHash === desired.contentHash;
    const row = rows.get(pool.id);
    if (row && row.servedHash === servedHash && (row.outOfSyncSince === null) === inSync) continue;
    const data = {
      servedHash,
      servedChangedAt: row && row.servedHash === servedHash ? undefined : now,
      outOfSyncSince: inSync ? null : (row?.outOfSyncSince ?? now),
      checkedAt: now,
    };
    writes.push(
      db.directorPoolSync.upsert({
        where: { directorId_poolId: { directorId: director.id, poolId: pool.id } },
        create: { directorId: director.id, poolId: pool.id, ...data, servedChangedAt: now },
        update: data,
      }),
    );
  }
  const assigned = director.pools.map((p) => p.id);
  if (director.sync.some((r) => !assigned.includes(r.poolId))) {
    writes.push(
      db.directorPoolSync.deleteMany({ where: { directorId: director.id, poolId: { notIn: assigned } } }),
    );
  }
  if (writes.length > 0) await db.$transaction(writes);
}

interface DirectorRow {
  id: string;
  hostname: string;
  pools: { id: string; name: string }[];
  sync: { poolId: string; servedHash: string | null; outOfSyncSince: Date | null }[];
}

const directorSelect = {
  id: true,
  hostname: true,
  pools: { select: { id: true, name: true }, orderBy: { name: "asc" as const } },
  sync: { select: { poolId: true, servedHash: true, outOfSyncSince: true } },
};

/** Version numbers of the served hashes (a hash the pool never had stays unnamed). */
async function servedVersionNumbers(db: Db, pairs: { poolId: string; contentHash: string }[]) {
  const out = new Map<string, number>();
  if (pairs.length === 0) return out;
  const rows = await db.tableVersion.findMany({
    where: { OR: pairs.map((p) => ({ poolId: p.poolId, contentHash: p.contentHash })) },
    select: { poolId: true, contentHash: true, version: true },
    orderBy: { version: "asc" },
  });
  // Identical bytes can recur (drain then undo): the newest version with the hash names it.
  for (const r of rows) out.set(`${r.poolId}:${r.contentHash}`, r.version);
  return out;
}

async function syncOf(db: Db, directors: DirectorRow[], now: Date): Promise<DirectorSync[]> {
  const hosts = await db.host.findMany({
    where: { name: { in: directors.map((d) => d.hostname) } },
    select: { name: true, lastSeenAt: true, dataPlane: true },
  });
  const hostByName = new Map(hosts.map((h) => [h.name, h]));
  const versions = await currentVersions(db, [
    ...new Set(directors.flatMap((d) => d.pools.map((p) => p.id))),
  ]);
  const pairs = directors.flatMap((d) =>
    d.sync.flatMap((s) => (s.servedHash ? [{ poolId: s.poolId, contentHash: s.servedHash }] : [])),
  );
  const numbers = await servedVersionNumbers(db, pairs);

  return directors.map((d) => {
    const host = hostByName.get(d.hostname);
    const lastSeen = host?.lastSeenAt ?? null;
    const silent = lastSeen === null || now.getTime() - lastSeen.getTime() > DIRECTOR_SILENT_AFTER_MS;
    const component = host ? directorComponent(host.dataPlane as unknown as DataPlaneState[]) : null;
    const rows = new Map(d.sync.map((s) => [s.poolId, s]));
    const pools: DirectorPoolSync[] = d.pools.map((p) => {
      const v = versions.get(p.id);
      const row = rows.get(p.id);
      const servedHash = row?.servedHash ?? null;
      const desired = v ? { version: v.version, contentHash: v.contentHash } : null;
      const served = servedHash
        ? { version: numbers.get(`${p.id}:${servedHash}`) ?? null, contentHash: servedHash }
        : null;
      let state: DirectorPoolSync["state"];
      if (silent) state = "silent";
      else if (!v) state = "no_table";
      else if (servedHash === v.contentHash) state = "in_sync";
      else state = servedHash === null ? "not_served" : "behind";
      // Out of sync since the stored moment, or, when the change is newer than the last report,
      // since the version the director has not picked up yet was written.
      const since =
        state === "in_sync" || state === "no_table"
          ? null
          : (row?.outOfSyncSince ?? v?.createdAt ?? lastSeen ?? null);
      return { poolId: p.id, poolName: p.name, state, desired, served, since: since?.toISOString() ?? null };
    });
    const assignedNames = new Set(d.pools.map((p) => p.name));
    const extraPools =
      component?.reachable && !silent
        ? Object.keys(component.tableHashes).filter((n) => !assignedNames.has(n))
        : [];
    let state: DirectorSync["state"];
    let since: string | null = null;
    if (lastSeen === null) state = "no_agent";
    else if (silent) {
      state = "silent";
      since = lastSeen.toISOString();
    } else if (pools.length === 0) state = "idle";
    else if (pools.every((p) => p.state === "in_sync" || p.state === "no_table")) state = "in_sync";
    else {
      state = "out_of_sync";
      since = pools
        .map((p) => p.since)
        .filter((s): s is string => s !== null)
        .sort()[0]!;
    }
    return {
      directorId: d.id,
      hostname: d.hostname,
      state,
      since,
      lastCheckIn: lastSeen?.toISOString() ?? null,
      reachable: component ? component.reachable : null,
      error: component?.error ?? null,
      pools,
      extraPools,
    };
  });
}

/** Every director's sync status and the fleet-level alarm counts. */
export async function fleetSync(db: Db, now = new Date()): Promise<FleetSync> {
  const directors = await db.director.findMany({ select: directorSelect, orderBy: { hostname: "asc" } });
  const sync = await syncOf(db, directors, now);
  return {
    directors: sync,
    outOfSync: sync.filter((d) => d.state === "out_of_sync").length,
    silent: sync.filter((d) => d.state === "silent" || d.state === "no_agent").length,
    checkedAt: now.toISOString(),
  };
}

/** Whether a pool's current version is served by every director assigned to it ("served by 2/2"). */
export async function poolSync(db: Db, poolId: string, now = new Date()): Promise<PoolSync> {
  const pool = await db.pool.findUnique({
    where: { id: poolId },
    select: { id: true, directors: { select: directorSelect, orderBy: { hostname: "asc" } } },
  });
  if (!pool) throw new TideError("not_found", `Pool ${poolId} does not exist.`);
  const sync = await syncOf(db, pool.directors, now);
  const version = (await currentVersions(db, [poolId])).get(poolId)?.version ?? null;
  const directors = sync.map((d) => {
    const p = d.pools.find((x) => x.poolId === poolId)!;
    return {
      directorId: d.directorId,
      hostname: d.hostname,
      state: p.state,
      desired: p.desired,
      served: p.served,
      since: p.since,
    };
  });
  const servedBy = directors.filter((d) => d.state === "in_sync").length;
  return {
    poolId,
    version,
    servedBy,
    directorCount: directors.length,
    done: version !== null && servedBy === directors.length,
    directors,
  };
}
