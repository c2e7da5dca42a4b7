import { isIP } from "node:net";
import {
  HOSTNAME_PATTERN,
  newId,
  TideError,
  type Proxy,
  type ProxyCreated,
  type TableVersionSummary,
} from "@tide/contracts";
import { proxySelect, type Db, type Prisma } from "@tide/db";
import { MAX_BACKENDS } from "@tide/forwarding";
import { actorRef, type Actor } from "../../auth/actor";
import { recordAudit } from "../audit/audit.service";
import { toProxy, toVersionSummary } from "../fleet/fleet.service";
import { checkPoolInvariants } from "./proxy-transition.plan";
import { lockPool, TRANSACTION_OPTIONS } from "../fleet/pool-lock";
import { insertTableVersion, isBuildable } from "../tables/table.service";

/**
 * Whether a pool carries traffic: a director serves it and it has a table version (directors load
 * only a pool's versions). A pool that carries none has no connections to protect.
 */
async function carriesTraffic(tx: Prisma.TransactionClient, poolId: string): Promise<boolean> {
  const pool = await tx.pool.findUniqueOrThrow({
    where: { id: poolId },
    select: { _count: { select: { directors: true, tableVersions: true } } },
  });
  return pool._count.directors > 0 && pool._count.tableVersions > 0;
}

/**
 * Add a proxy to a pool.
 *
 * Bring-up rule: a proxy joins *active* while the pool carries no traffic (no director serves it,
 * or it has no table version yet), and a new version is written at once, so a pool created empty
 * is brought up by adding its proxies and then assigning a director; its first proxy writes
 * version 1. A proxy added to a pool that carries traffic joins *inactive* (out of every row, so
 * no new version) and is filled and activated like any other: established connections are safe.
 */
export async function createProxy(
  db: Db,
  actor: Actor,
  input: { poolId: string; address: string; hostname: string },
): Promise<ProxyCreated> {
  if (isIP(input.address) !== 4) {
    const message = `Proxy address must be an IPv4 address (outer GUE header), got "${input.address}".`;
    throw new TideError("bad_request", message, { fields: { address: message } });
  }
  if (!HOSTNAME_PATTERN.test(input.hostname)) {
    const message = `"${input.hostname}" is not a valid host name.`;
    throw new TideError("bad_request", message, { fields: { hostname: message } });
  }
  return db.$transaction(async (tx) => {
    await lockPool(tx, input.poolId);
    const proxies = await tx.proxy.findMany({
      where: { poolId: input.poolId },
      select: proxySelect,
      orderBy: { slot: "asc" },
    });
    if (proxies.some((p) => p.address === input.address)) {
      const message = `Pool ${input.poolId} already has a proxy at ${input.address}.`;
      throw new TideError("conflict", message, { fields: { address: message } });
    }
    if (proxies.length >= MAX_BACKENDS) {
      throw new TideError(
        "unprocessable",
        `A pool holds at most ${MAX_BACKENDS} proxies (the GLBD table format's limit).`,
      );
    }
    const state = (await carriesTraffic(tx, input.poolId)) ? ("inactive" as const) : ("active" as const);
    const id = newId("proxy");
    const candidate = { id, address: input.address, hostname: input.hostname, state };
    const violation = checkPoolInvariants(proxies, [...proxies, candidate], id);
    if (violation) throw violation;
    const slot = proxies.reduce((m, p) => Math.max(m, p.slot + 1), 0);
    const created = await tx.proxy.create({
      data: { id, poolId: input.poolId, address: input.address, hostname: input.hostname, state, slot },
      select: proxySelect,
    });
    const version =
      state === "active"
        ? await insertTableVersion(tx, {
            poolId: input.poolId,
            proxies: [...proxies, created],
            cause: `add ${created.hostname}: active (pool carries no traffic)`,
            reason: "",
            actor: actorRef(actor),
          })
        : null;
    await recordAudit(tx, {
      ...actorRef(actor),
      action: "proxy.create",
      targetType: "proxy",
      targetId: id,
      poolId: input.poolId,
      after: {
        address: created.address,
        hostname: created.hostname,
        state: created.state,
        tableVersion: version?.version ?? null,
      },
      tableVersionId: version?.id ?? null,
    });
    return { ...toProxy(created), tableVersion: version ? toVersionSummary(version) : null };
  }, TRANSACTION_OPTIONS);
}

/** Remove a proxy; only an inactive proxy (already out of every row) can be removed. */
export async function removeProxy(
  db: Db,
  actor: Actor,
  input: { proxyId: string; reason?: string | undefined },
): Promise<{ removed: Proxy; tableVersion: TableVersionSummary | null }> {
  const found = await db.proxy.findUnique({ where: { id: input.proxyId }, select: proxySelect });
  if (!found) throw new TideError("not_found", `Proxy ${input.proxyId} does not exist.`);
  return db.$transaction(async (tx) => {
    await lockPool(tx, found.poolId);
    const proxy = await tx.proxy.findUnique({ where: { id: input.proxyId }, select: proxySelect });
    if (!proxy) throw new TideError("not_found", `Proxy ${input.proxyId} does not exist.`);
    if (proxy.state !== "inactive") {
      throw new TideError(
        "invalid_transition",
        `Only an inactive proxy can be removed; ${proxy.id} (${proxy.hostname}) is ${proxy.state}. Drain it and set it inactive first.`,
        { state: proxy.state },
      );
    }
    await tx.proxy.delete({ where: { id: proxy.id } });
    // The proxy left the backend list, so the table's bytes change (rows do not: it was inactive).
    // With no proxy left in rotation there is nothing to build and the last version stays.
    const rest = await tx.proxy.findMany({
      where: { poolId: proxy.poolId },
      select: proxySelect,
      orderBy: { slot: "asc" },
    });
    const version = isBuildable(rest)
      ? await insertTableVersion(tx, {
          poolId: proxy.poolId,
          proxies: rest,
          cause: `remove ${proxy.hostname}`,
          reason: input.reason ?? "",
          actor: actorRef(actor),
        })
      : null;
    await recordAudit(tx, {
      ...actorRef(actor),
      action: "proxy.remove",
      targetType: "proxy",
      targetId: proxy.id,
      poolId: proxy.poolId,
      before: { address: proxy.address, hostname: proxy.hostname, state: proxy.state },
      after: { tableVersion: version?.version ?? null },
      reason: input.reason ?? "",
      tableVersionId: version?.id ?? null,
    });
    return { removed: toProxy(proxy), tableVersion: version ? toVersionSummary(version) : null };
  }, TRANSACTION_OPTIONS);
}

/**
 * Record a health change (from health checks, or an operator). An unhealthy proxy is soft-drained:
 * the new table swaps it to secondary wherever it was primary.
 */
export async function setProxyHealth(
  db: Db,
  actor: Actor,
  input: { proxyId: string; healthy: boolean; reason: string },
) {
  const found = await db.proxy.findUnique({ where: { id: input.proxyId }, select: proxySelect });
  if (!found) throw new TideError("not_found", `Proxy ${input.proxyId} does not exist.`);
  return db.$transaction(async (tx) => {
    await lockPool(tx, found.poolId);
    const proxies = await tx.proxy.findMany({
      where: { poolId: found.poolId },
      select: proxySelect,
      orderBy: { slot: "asc" },
    });
    const before = proxies.find((p) => p.id === input.proxyId);
    if (!before) throw new TideError("not_found", `Proxy ${input.proxyId} does not exist.`);
    if (before.healthy === input.healthy) {
      throw new TideError(
        "conflict",
        `Proxy ${before.id} is already ${input.healthy ? "healthy" : "unhealthy"}.`,
      );
    }
    const updated = await tx.proxy.update({
      where: { id: before.id },
      data: { healthy: input.healthy, healthReason: input.reason, healthChangedAt: new Date() },
      select: proxySelect,
    });
    const version = await insertTableVersion(tx, {
      poolId: found.poolId,
      proxies: proxies.map((p) => (p.id === updated.id ? updated : p)),
      cause: `health ${updated.hostname}: ${input.healthy ? "up" : "down"}`,
      reason: input.reason,
      actor: actorRef(actor),
    });
    await recordAudit(tx, {
      ...actorRef(actor),
      action: "proxy.health",
      targetType: "proxy",
      targetId: updated.id,
      poolId: updated.poolId,
      before: { healthy: before.healthy, reason: before.healthReason },
      after: { healthy: updated.healthy, reason: updated.healthReason, tableVersion: version.version },
      reason: input.reason,
      tableVersionId: version.id,
    });
    return { proxy: toProxy(updated), tableVersion: toVersionSummary(version) };
  }, TRANSACTION_OPTIONS);
}
