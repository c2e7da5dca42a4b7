import {
  TideError,
  type DataPlaneState,
  type DirectorPoolSync,
  type DirectorSync,
  type FleetSync,
  type PoolSync,
  type SyncThresholds,
} from "@tide/contracts";
import { touchUnchangedDirectorSync, type Db } from "@tide/db";
import { decideDirectorSync, decidePoolSummary, decidePoolSync, syncThresholds } from "./director-sync.plan";
import { ACTIVE_AGENT_MS, batchIntervalFor } from "./ingest-pacing";

/**
 * Do the directors serve what the console wants? Each director's agent reports, with every batch, the
 * content hash the director serves per pool name (DataPlaneState.tableHashes). recordDirectorSync
 * keeps one row per (director, pool): the served hash and since when, since when it has not matched
 * the pool's current version, and when the last report arrived. The views below hand those facts, the
 * current versions and the agents' last contact to director-sync.plan.ts, which says only what the
 * reports say: a change the directors have not reported yet is "propagating" for its expected time,
 * a director whose reports are late is "unknown", and "behind" needs a report made after that time.
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
 * Record what a director host reported (called after each accepted batch). Every report moves the
 * rows' checkedAt (the view's "last report"): when nothing else changed, that is the one statement
 * of touchUnchangedDirectorSync; the served hash, since when, and since when out of sync are written
 * only when they change. An unreachable director serves nothing as far as anyone can tell.
 */
export async function recordDirectorSync(
  db: Db,
  hostname: string,
  dataPlane: readonly DataPlaneState[],
  now = new Date(),
): Promise<void> {
  const component = directorComponent(dataPlane);
  const served = component?.reachable ? component.tableHashes : {};
  // Nearly every report changes nothing but checkedAt: one statement, no Prisma (the repository).
  if ((await touchUnchangedDirectorSync(db, hostname, served, now)) !== "changed") return;
  const director = await db.director.findUnique({
    where: { hostname },
    select: {
      id: true,
      pools: { select: { id: true, name: true } },
      sync: { select: { poolId: true, servedHash: true, outOfSyncSince: true } },
    },
  });
  if (!director) return;
  const versions = await currentVersions(
    db,
    director.pools.map((p) => p.id),
  );
  const rows = new Map(director.sync.map((r) => [r.poolId, r]));
  const writes = [];
  const unchanged: string[] = [];
  for (const pool of director.pools) {
    // Own keys only: a pool named like an Object.prototype member ("constructor") is not served.
    const servedHash = Object.hasOwn(served, pool.name) ? (served[pool.name] ?? null) : null;
    const desired = versions.get(pool.id);
    const inSync = desired === undefined ? servedHash === null : servedHash === desired.contentHash;
    const row = rows.get(pool.id);
    if (row && row.servedHash === servedHash && (row.outOfSyncSince === null) === inSync) {
      unchanged.push(pool.id);
      continue;
    }
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
  if (unchanged.length > 0) {
    writes.push(
      db.directorPoolSync.updateMany({
        where: { directorId: director.id, poolId: { in: unchanged } },
        data: { checkedAt: now },
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
  sync: {
    poolId: string;
    servedHash: string | null;
    servedChangedAt: Date;
    outOfSyncSince: Date | null;
    checkedAt: Date;
  }[];
}

const directorSelect = {
  id: true,
  hostname: true,
  pools: { select: { id: true, name: true }, orderBy: { name: "asc" as const } },
  sync: {
    select: { poolId: true, servedHash: true, servedChangedAt: true, outOfSyncSince: true, checkedAt: true },
  },
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

/**
 * The thresholds for the batch interval the console asks of its agents now: what ingest-pacing.ts
 * would ask for the agents in contact within its activity window. Counted over every host, not per
 * process, so with several console processes it errs long (later "unknown", never earlier).
 */
export async function currentSyncThresholds(db: Db, now = new Date()): Promise<SyncThresholds> {
  const active = await db.host.count({
    where: { lastSeenAt: { gte: new Date(now.getTime() - ACTIVE_AGENT_MS) } },
  });
  return syncThresholds(batchIntervalFor(active));
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

async function syncOf(
  db: Db,
  directors: DirectorRow[],
  now: Date,
  t: SyncThresholds,
): Promise<DirectorSync[]> {
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
    const rows = new Map(d.sync.map((s) => [s.poolId, s]));
    const lastReport = d.sync.reduce<Date | null>((a, s) => (a && a >= s.checkedAt ? a : s.checkedAt), null);
    // A report is contact too (the host's lastSeenAt moves with it; this covers a row written later).
    const seen = host?.lastSeenAt ?? null;
    const lastContact = seen && lastReport ? (seen >= lastReport ? seen : lastReport) : (seen ?? null);
    const component = host ? directorComponent(host.dataPlane as unknown as DataPlaneState[]) : null;
    const decisions = d.pools.map((p) => {
      const v = versions.get(p.id) ?? null;
      const row = rows.get(p.id) ?? null;
      const decision = decidePoolSync(
        v && { contentHash: v.contentHash, writtenAt: v.createdAt },
        row && {
          at: row.checkedAt,
          servedHash: row.servedHash,
          // The host's data plane is the last batch's, the same report that moved checkedAt.
          reachable: component?.reachable ?? false,
          servedSince: row.servedChangedAt,
          outOfSyncSince: row.outOfSyncSince,
        },
        now,
        t,
      );
      const servedHash = row?.servedHash ?? null;
      const pool: DirectorPoolSync = {
        poolId: p.id,
        poolName: p.name,
        state: decision.state,
        desired: v ? { version: v.version, contentHash: v.contentHash } : null,
        served: servedHash
          ? { version: numbers.get(`${p.id}:${servedHash}`) ?? null, contentHash: servedHash }
          : null,
        since: iso(decision.since),
        expectedBy: iso(decision.expectedBy),
        lastReportAt: iso(row?.checkedAt ?? null),
        reportAgeMs: decision.reportAgeMs === null ? null : Math.round(decision.reportAgeMs),
      };
      return { pool, decision };
    });
    const director = decideDirectorSync(
      lastContact,
      decisions.map((x) => x.decision),
      now,
      t,
    );
    const assignedNames = new Set(d.pools.map((p) => p.name));
    const extraPools =
      component?.reachable && director.state !== "silent"
        ? Object.keys(component.tableHashes).filter((n) => !assignedNames.has(n))
        : [];
    return {
      directorId: d.id,
      hostname: d.hostname,
      state: director.state,
      since: iso(director.since),
      lastCheckIn: iso(lastContact),
      lastReportAt: iso(lastReport),
      reachable: component ? component.reachable : null,
      error: component?.error ?? null,
      pools: decisions.map((x) => x.pool),
      extraPools,
    };
  });
}

/** Every director's sync status and the fleet-level alarm counts. */
export async function fleetSync(db: Db, now = new Date()): Promise<FleetSync> {
  const directors = await db.director.findMany({ select: directorSelect, orderBy: { hostname: "asc" } });
  const thresholds = await currentSyncThresholds(db, now);
  const sync = await syncOf(db, directors, now, thresholds);
  const count = (...states: DirectorSync["state"][]) => sync.filter((d) => states.includes(d.state)).length;
  return {
    directors: sync,
    outOfSync: count("out_of_sync"),
    silent: count("silent", "no_agent"),
    propagating: count("propagating"),
    unknown: count("unknown"),
    thresholds,
    checkedAt: now.toISOString(),
  };
}

/**
 * Whether a pool's current version is served by every director assigned to it: "v8 served by 2/2",
 * "propagating (1/2)" within the change's expected time, and per director what its last report said.
 */
export async function poolSync(db: Db, poolId: string, now = new Date()): Promise<PoolSync> {
  const pool = await db.pool.findUnique({
    where: { id: poolId },
    select: { id: true, directors: { select: directorSelect, orderBy: { hostname: "asc" } } },
  });
  if (!pool) throw new TideError("not_found", `Pool ${poolId} does not exist.`);
  const thresholds = await currentSyncThresholds(db, now);
  const sync = await syncOf(db, pool.directors, now, thresholds);
  const current = (await currentVersions(db, [poolId])).get(poolId) ?? null;
  const directors = sync.map((d) => {
    const { poolId: _id, poolName: _name, ...p } = d.pools.find((x) => x.poolId === poolId)!;
    return { directorId: d.directorId, hostname: d.hostname, directorState: d.state, ...p };
  });
  const servedBy = directors.filter((d) => d.state === "in_sync").length;
  const expectedBy = directors
    .filter((d) => d.state === "propagating")
    .map((d) => d.expectedBy!)
    .sort()
    .at(-1);
  return {
    poolId,
    state: decidePoolSummary(current !== null, directors),
    version: current?.version ?? null,
    versionWrittenAt: iso(current?.createdAt ?? null),
    servedBy,
    directorCount: directors.length,
    done: current !== null && servedBy === directors.length,
    expectedBy: expectedBy ?? null,
    directors,
    thresholds,
    checkedAt: now.toISOString(),
  };
}
