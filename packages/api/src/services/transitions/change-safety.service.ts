import {
  TideError,
  type BindsPreview,
  type DirectorRemovalPreview,
  type UnassignPreview,
} from "@tide/contracts";
import { bindSelect, type Db, type Prisma } from "@tide/db";
import {
  planBindChange,
  planDirectorRemoval,
  planUnassign,
  uncoveredBinds,
  type ProxyEstablished,
  type SafetyProxy,
} from "./change-safety.plan";
import { establishedFigures } from "./connection-impact.service";
import { poolTraffic } from "../telemetry/proxy-traffic.service";
import type { BindRange, HostTraffic } from "../telemetry/proxy-traffic.plan";

/**
 * Whether a bind change, or a director unassigned or removed, breaks established connections
 * (issue 26 item 1): the pool's state read through `q` (the caller's transaction, under its
 * locks, or the database for a preview), the proxies' reports through `db` (as a proxy
 * transition's prediction reads them: connection-impact.service.ts). change-safety.plan.ts decides.
 */

type Reader = Db | Prisma.TransactionClient;

const NOT_REPORTED = "its agent does not report established connections";

/**
 * Each of the pool's proxies' ESTABLISHED sockets per local address:port, from its host's latest
 * reading when that is fresh (establishedFigures: a late or stale reading is unknown, with why).
 */
export async function establishedByProxy(
  db: Reader,
  poolId: string,
  now = new Date(),
): Promise<Map<string, ProxyEstablished>> {
  const traffic = await poolTraffic(db, poolId, now);
  const figures = establishedFigures(traffic, now);
  const fresh = traffic.proxies.filter((t) => figures.get(t.proxyId)?.count !== null);
  const hosts = await db.host.findMany({
    where: { name: { in: [...new Set(fresh.map((t) => t.hostname))] } },
    select: { name: true, traffic: true },
  });
  const byName = new Map(hosts.map((h) => [h.name, (h.traffic ?? null) as HostTraffic | null]));
  const out = new Map<string, ProxyEstablished>();
  for (const t of traffic.proxies) {
    const figure = figures.get(t.proxyId);
    if (figure && figure.count === null) {
      out.set(t.proxyId, { entries: null, reason: figure.reason });
      continue;
    }
    const entries = byName.get(t.hostname)?.established ?? null;
    out.set(t.proxyId, entries === null ? { entries: null, reason: NOT_REPORTED } : { entries });
  }
  return out;
}

/** A director serves the pool and it has a table: only then does anything forward its VIPs. */
async function servedWithTable(q: Reader, poolId: string): Promise<boolean> {
  // One after the other: `q` may be an interactive transaction (one connection).
  const directors = await q.director.count({ where: { pools: { some: { id: poolId } } } });
  return directors > 0 && (await q.tableVersion.count({ where: { poolId } })) > 0;
}

function proxiesOf(q: Reader, poolId: string): Promise<SafetyProxy[]> {
  return q.proxy.findMany({
    where: { poolId },
    select: { id: true, hostname: true, state: true },
    orderBy: { slot: "asc" },
  });
}

/**
 * Replacing the binds of pool `poolId` (now `before`) with `after` (validated, canonical). The
 * proxies' reports are read only when the change stops forwarding some TCP address:port.
 */
export async function predictBindChange(
  db: Reader,
  q: Reader,
  input: { poolId: string; before: readonly BindRange[]; after: readonly BindRange[] },
  now = new Date(),
): Promise<Omit<BindsPreview, "poolId">> {
  const served = await servedWithTable(q, input.poolId);
  const cuts = served && uncoveredBinds(input.before, input.after).some((l) => l.startsWith("tcp/"));
  return planBindChange({
    served,
    before: input.before,
    after: input.after,
    proxies: await proxiesOf(q, input.poolId),
    established: cuts ? await establishedByProxy(db, input.poolId, now) : new Map(),
  });
}

/** Unassigning director `directorId` from pool `poolId`; not_found when it does not serve it. */
export async function predictUnassign(
  db: Reader,
  q: Reader,
  input: { directorId: string; poolId: string },
  now = new Date(),
): Promise<UnassignPreview> {
  const director = await q.director.findUnique({
    where: { id: input.directorId },
    select: { id: true, hostname: true, pools: { where: { id: input.poolId }, select: { id: true } } },
  });
  if (!director) throw new TideError("not_found", `Director ${input.directorId} does not exist.`);
  if (director.pools.length === 0)
    throw new TideError("not_found", `Director ${input.directorId} does not serve pool ${input.poolId}.`);
  const pool = await q.pool.findUniqueOrThrow({
    where: { id: input.poolId },
    select: {
      id: true,
      name: true,
      binds: { select: bindSelect },
      directors: {
        where: { id: { not: input.directorId } },
        select: { id: true, hostname: true },
        orderBy: { hostname: "asc" },
      },
    },
  });
  const hasTable = (await q.tableVersion.count({ where: { poolId: pool.id } })) > 0;
  const cuts = pool.directors.length === 0 && hasTable;
  return planUnassign({
    director,
    pool: { id: pool.id, name: pool.name, binds: pool.binds, hasTable },
    others: pool.directors,
    proxies: await proxiesOf(q, pool.id),
    established: cuts ? await establishedByProxy(db, pool.id, now) : new Map(),
  });
}

/** Removing director `directorId`: unassigning it from each pool it serves. */
export async function predictDirectorRemoval(
  db: Reader,
  q: Reader,
  input: { directorId: string },
  now = new Date(),
): Promise<DirectorRemovalPreview> {
  const director = await q.director.findUnique({
    where: { id: input.directorId },
    select: { id: true, hostname: true, pools: { select: { id: true }, orderBy: { name: "asc" } } },
  });
  if (!director) throw new TideError("not_found", `Director ${input.directorId} does not exist.`);
  const pools: UnassignPreview[] = [];
  // One after another: `q` may be an interactive transaction (one connection).
  for (const p of director.pools)
    pools.push(await predictUnassign(db, q, { directorId: director.id, poolId: p.id }, now));
  return planDirectorRemoval(director, pools);
}

/** GET /directors/{directorId}/pools/{poolId}/unassign/preview */
export function previewUnassign(db: Db, input: { directorId: string; poolId: string }) {
  return predictUnassign(db, db, input);
}

/** GET /directors/{directorId}/remove/preview */
export function previewDirectorRemoval(db: Db, input: { directorId: string }) {
  return predictDirectorRemoval(db, db, input);
}
