import { HOSTNAME_PATTERN, newId, TideError, type DirectorDetail } from "@tide/contracts";
import { bindSelect, Prisma, type Db } from "@tide/db";
import { actorRef, type Actor } from "../../auth/actor";
import { recordAudit } from "../audit/audit.service";
import { bindLabel, describeOverlap, findBindOverlaps, type PlacedBind } from "../tables/bind-overlap.plan";
import { removalRefusal, unassignRefusal } from "../transitions/change-safety.plan";
import { predictDirectorRemoval, predictUnassign } from "../transitions/change-safety.service";
import { lockPool, TRANSACTION_OPTIONS } from "./pool-lock";

type Tx = Prisma.TransactionClient;

/**
 * Directors are registered by the host name their tide-agent reports (the host token's host); the
 * desired state of that host lists the current table of every pool the director serves.
 *
 * Lock order, everywhere: the pool row first (pool-lock.ts), then director rows in id order. Assign
 * and PUT binds both take both, so an overlap check always sees the other's committed binds.
 */

const directorDetailSelect = {
  id: true,
  hostname: true,
  createdAt: true,
  pools: { select: { id: true, name: true }, orderBy: { name: "asc" as const } },
} satisfies Prisma.DirectorSelect;

type DirectorRow = Prisma.DirectorGetPayload<{ select: typeof directorDetailSelect }>;

function toDetail(d: DirectorRow): DirectorDetail {
  return {
    id: d.id,
    hostname: d.hostname,
    poolIds: d.pools.map((p) => p.id),
    pools: d.pools,
    createdAt: d.createdAt.toISOString(),
  };
}

export async function getDirector(db: Db | Tx, directorId: string): Promise<DirectorDetail> {
  const d = await db.director.findUnique({ where: { id: directorId }, select: directorDetailSelect });
  if (!d) throw new TideError("not_found", `Director ${directorId} does not exist.`);
  return toDetail(d);
}

async function lockDirectors(tx: Tx, directorIds: readonly string[]): Promise<void> {
  const ids = [...directorIds].sort();
  if (ids.length === 0) return;
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM directors WHERE id = ANY(${ids}::text[]) ORDER BY id FOR UPDATE`;
  if (rows.length !== ids.length) {
    const missing = ids.find((id) => !rows.some((r) => r.id === id));
    throw new TideError("not_found", `Director ${missing} does not exist.`);
  }
}

/** Lock pool rows in id order (the lock order: pools before directors); a pool gone is skipped. */
async function lockPools(tx: Tx, poolIds: readonly string[]): Promise<void> {
  const ids = [...poolIds].sort();
  if (ids.length === 0) return;
  await tx.$queryRaw`SELECT id FROM pools WHERE id = ANY(${ids}::text[]) ORDER BY id FOR UPDATE`;
}

/**
 * Lock the directors and refuse (409) when `binds` (one pool's, all with the same poolId) overlap a
 * bind of another pool one of them serves: a director picks the table by bind, so a packet matching
 * two pools' binds would have two tables. The caller holds the pool's lock.
 */
export async function lockDirectorsAndCheckBinds(
  tx: Tx,
  directorIds: readonly string[],
  binds: readonly PlacedBind[],
): Promise<void> {
  await lockDirectors(tx, directorIds);
  const poolId = binds[0]?.poolId;
  for (const directorId of [...directorIds].sort()) {
    const director = await tx.director.findUniqueOrThrow({
      where: { id: directorId },
      select: {
        hostname: true,
        pools: {
          where: poolId ? { id: { not: poolId } } : {},
          select: { id: true, name: true, binds: { select: bindSelect } },
        },
      },
    });
    const others = director.pools.flatMap((p) =>
      p.binds.map((b): PlacedBind => ({ ...b, poolId: p.id, poolName: p.name })),
    );
    const overlap = findBindOverlaps(binds, others).find((o) => o.a.poolId !== o.b.poolId);
    if (overlap) {
      throw new TideError(
        "conflict",
        `${describeOverlap(overlap)} Director ${director.hostname} (${directorId}) serves both, ` +
          "and a packet matching both would have two tables.",
        {
          directorId,
          pools: [
            { poolId: overlap.a.poolId, poolName: overlap.a.poolName, bind: bindLabel(overlap.a) },
            { poolId: overlap.b.poolId, poolName: overlap.b.poolName, bind: bindLabel(overlap.b) },
          ],
          fields: { binds: describeOverlap(overlap) },
        },
      );
    }
  }
}

/** Register a director; 409 when the host name is taken, with the existing id in `details.directorId`. */
export async function registerDirector(
  db: Db,
  actor: Actor,
  input: { hostname: string },
): Promise<DirectorDetail> {
  const hostname = input.hostname.trim().toLowerCase();
  if (!HOSTNAME_PATTERN.test(hostname)) {
    const message = `"${input.hostname}" is not a valid host name.`;
    throw new TideError("bad_request", message, { fields: { hostname: message } });
  }
  const existing = await db.director.findUnique({ where: { hostname }, select: { id: true } });
  const taken = (id: string) =>
    new TideError("conflict", `Director ${hostname} is already registered as ${id}.`, {
      directorId: id,
      fields: { hostname: `Already registered as ${id}.` },
    });
  if (existing) throw taken(existing.id);
  const id = newId("director");
  try {
    return await db.$transaction(async (tx) => {
      const d = await tx.director.create({ data: { id, hostname }, select: directorDetailSelect });
      await recordAudit(tx, {
        ...actorRef(actor),
        action: "director.register",
        targetType: "director",
        targetId: id,
        after: { hostname },
      });
      return toDetail(d);
    });
  } catch (e) {
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002") {
      const winner = await db.director.findUnique({ where: { hostname }, select: { id: true } });
      if (winner) throw taken(winner.id);
    }
    throw e;
  }
}

/**
 * Make a director serve a pool (idempotent: assigning again changes and audits nothing). Breaks no
 * connection: it serves the same table as the pool's other directors, so a flow the routers move
 * to it reaches the same proxy.
 */
export async function assignPool(
  db: Db,
  actor: Actor,
  input: { directorId: string; poolId: string },
): Promise<DirectorDetail> {
  return db.$transaction(async (tx) => {
    await lockPool(tx, input.poolId);
    const pool = await tx.pool.findUniqueOrThrow({
      where: { id: input.poolId },
      select: { id: true, name: true, binds: { select: bindSelect }, directors: { select: { id: true } } },
    });
    if (pool.directors.some((d) => d.id === input.directorId)) {
      return getDirector(tx, input.directorId);
    }
    await lockDirectorsAndCheckBinds(
      tx,
      [input.directorId],
      pool.binds.map((b): PlacedBind => ({ ...b, poolId: pool.id, poolName: pool.name })),
    );
    await tx.director.update({
      where: { id: input.directorId },
      data: { pools: { connect: { id: pool.id } } },
    });
    await recordAudit(tx, {
      ...actorRef(actor),
      action: "director.assign_pool",
      targetType: "director",
      targetId: input.directorId,
      poolId: pool.id,
      after: { poolId: pool.id, poolName: pool.name },
    });
    return getDirector(tx, input.directorId);
  }, TRANSACTION_OPTIONS);
}

/**
 * Stop a director serving a pool; 404 when it does not serve it. Another director serving the
 * pool takes its flows (same table); as the pool's last director its VIPs stop, and when the
 * proxies report connections to them the change is refused (422) without a reason.
 */
export async function unassignPool(
  db: Db,
  actor: Actor,
  input: { directorId: string; poolId: string; reason?: string | undefined },
): Promise<DirectorDetail> {
  return db.$transaction(async (tx) => {
    await lockPool(tx, input.poolId);
    await lockDirectors(tx, [input.directorId]);
    // Under both locks: no director joins or leaves the pool until this commits.
    const safety = await predictUnassign(tx, tx, input);
    if (!input.reason?.trim()) {
      const director = await tx.director.findUniqueOrThrow({
        where: { id: input.directorId },
        select: { hostname: true },
      });
      const refusal = unassignRefusal(safety, director.hostname);
      if (refusal) throw refusal;
    }
    await tx.director.update({
      where: { id: input.directorId },
      data: { pools: { disconnect: { id: input.poolId } } },
    });
    await recordAudit(tx, {
      ...actorRef(actor),
      action: "director.unassign_pool",
      targetType: "director",
      targetId: input.directorId,
      poolId: input.poolId,
      before: { poolId: input.poolId },
      after: { last: safety.last, brokenPredicted: safety.breaks === null ? null : safety.broken },
      reason: input.reason ?? "",
    });
    return getDirector(tx, input.directorId);
  }, TRANSACTION_OPTIONS);
}

/**
 * Remove a director; it stops serving its pools (they and their tables stay). Refused (422) without
 * a reason when it is the last director of a pool whose proxies report connections to its VIPs.
 */
export async function removeDirector(
  db: Db,
  actor: Actor,
  input: { directorId: string; reason?: string | undefined },
): Promise<{ removed: DirectorDetail }> {
  // Its pools are locked first (the lock order), as they were a moment ago: a pool assigned in
  // between is predicted all the same, only without its lock.
  const served = await db.pool.findMany({
    where: { directors: { some: { id: input.directorId } } },
    select: { id: true },
  });
  return db.$transaction(async (tx) => {
    await lockPools(
      tx,
      served.map((p) => p.id),
    );
    await lockDirectors(tx, [input.directorId]);
    const before = await getDirector(tx, input.directorId);
    const safety = await predictDirectorRemoval(tx, tx, input);
    if (!input.reason?.trim()) {
      const refusal = removalRefusal(safety);
      if (refusal) throw refusal;
    }
    await tx.director.delete({ where: { id: input.directorId } });
    await recordAudit(tx, {
      ...actorRef(actor),
      action: "director.remove",
      targetType: "director",
      targetId: input.directorId,
      before: { hostname: before.hostname, pools: before.pools.map((p) => p.name) },
      after: {
        lastOf: safety.pools.filter((p) => p.last).map((p) => p.poolName),
        brokenPredicted: safety.breaks === null ? null : safety.broken,
      },
      reason: input.reason ?? "",
    });
    return { removed: before };
  }, TRANSACTION_OPTIONS);
}
