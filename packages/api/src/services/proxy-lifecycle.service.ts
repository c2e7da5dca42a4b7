import { newId, TideError, type Proxy } from "@tide/contracts";
import { proxySelect, type Db } from "@tide/db";
import { actorRef, type Actor } from "../auth/actor";
import { recordAudit } from "./audit.service";
import { toProxy, toVersionSummary } from "./fleet.service";
import { checkPoolInvariants } from "./proxy-transition.plan";
import { lockPool, TRANSACTION_OPTIONS } from "./pool-lock";
import { insertTableVersion } from "./table.service";

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const HOSTNAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** Add a proxy to a pool. It starts inactive (out of every row), so no new table version is needed. */
export async function createProxy(
  db: Db,
  actor: Actor,
  input: { poolId: string; address: string; hostname: string },
): Promise<Proxy> {
  if (!IPV4.test(input.address)) {
    throw new TideError(
      "bad_request",
      `Proxy address must be an IPv4 address (outer GUE header), got "${input.address}".`,
    );
  }
  if (!HOSTNAME.test(input.hostname)) {
    throw new TideError("bad_request", `"${input.hostname}" is not a valid host name.`);
  }
  return db.$transaction(async (tx) => {
    await lockPool(tx, input.poolId);
    const proxies = await tx.proxy.findMany({ where: { poolId: input.poolId }, select: proxySelect });
    if (proxies.some((p) => p.address === input.address)) {
      throw new TideError("conflict", `Pool ${input.poolId} already has a proxy at ${input.address}.`);
    }
    if (proxies.length >= 256) {
      throw new TideError(
        "unprocessable",
        "A pool holds at most 256 proxies (the GLBD table format's limit).",
      );
    }
    const id = newId("proxy");
    const candidate = { id, address: input.address, hostname: input.hostname, state: "inactive" as const };
    const violation = checkPoolInvariants(proxies, [...proxies, candidate], id);
    if (violation) throw violation;
    const slot = proxies.reduce((m, p) => Math.max(m, p.slot + 1), 0);
    const created = await tx.proxy.create({
      data: {
        id,
        poolId: input.poolId,
        address: input.address,
        hostname: input.hostname,
        state: "inactive",
        slot,
      },
      select: proxySelect,
    });
    await recordAudit(tx, {
      ...actorRef(actor),
      action: "proxy.create",
      targetType: "proxy",
      targetId: id,
      poolId: input.poolId,
      after: { address: created.address, hostname: created.hostname, state: created.state },
    });
    return toProxy(created);
  }, TRANSACTION_OPTIONS);
}

/** Remove a proxy; only an inactive proxy (already out of every row) can be removed. */
export async function removeProxy(
  db: Db,
  actor: Actor,
  input: { proxyId: string; reason?: string | undefined },
): Promise<{ removed: Proxy }> {
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
    await recordAudit(tx, {
      ...actorRef(actor),
      action: "proxy.remove",
      targetType: "proxy",
      targetId: proxy.id,
      poolId: proxy.poolId,
      before: { address: proxy.address, hostname: proxy.hostname, state: proxy.state },
      reason: input.reason ?? "",
    });
    return { removed: toProxy(proxy) };
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
