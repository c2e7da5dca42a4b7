import {
  TideError,
  type Proxy,
  type ProxyAction,
  type ProxyState,
  type TableVersionSummary,
} from "@tide/contracts";
import { proxySelect, type Db } from "@tide/db";
import { actorRef, type Actor } from "../auth/actor";
import { recordAudit } from "./audit.service";
import { toProxy, toVersionSummary } from "./fleet.service";
import { planTransition } from "./proxy-transition.plan";
import {
  buildPoolTable,
  currentTableOf,
  diffPoolTables,
  insertTableVersion,
  type PoolTableDiff,
} from "./table.service";
import { lockPool, TRANSACTION_OPTIONS } from "./pool-lock";

export interface TransitionPreview {
  allowed: boolean;
  refusal: { code: string; message: string } | null;
  proxy: Proxy;
  from: ProxyState;
  to: ProxyState | null;
  diff: PoolTableDiff | null;
}

async function proxyOrThrow(db: Db, proxyId: string) {
  const proxy = await db.proxy.findUnique({ where: { id: proxyId }, select: proxySelect });
  if (!proxy) throw new TideError("not_found", `Proxy ${proxyId} does not exist.`);
  return proxy;
}

/**
 * What an action would do, without doing it: the state change, or why it is refused, and the
 * exact table diff against the version the directors serve now.
 */
export async function previewTransition(
  db: Db,
  input: { proxyId: string; action: ProxyAction },
): Promise<TransitionPreview> {
  const proxy = await proxyOrThrow(db, input.proxyId);
  const proxies = await db.proxy.findMany({
    where: { poolId: proxy.poolId },
    select: proxySelect,
    orderBy: { slot: "asc" },
  });
  const plan = planTransition(proxies, proxy.id, input.action);
  if (!plan.ok) {
    return {
      allowed: false,
      refusal: { code: plan.error.code, message: plan.error.message },
      proxy: toProxy(proxy),
      from: proxy.state,
      to: null,
      diff: null,
    };
  }
  const current = await currentTableOf(db, proxy.poolId);
  const next = await buildPoolTable(db, proxy.poolId, plan.next);
  return {
    allowed: true,
    refusal: null,
    proxy: toProxy(proxy),
    from: plan.from,
    to: plan.to,
    diff: current ? diffPoolTables(current, next) : null,
  };
}

/**
 * Apply an action in one transaction: lock the pool row (so concurrent requests on the same pool
 * are serialised and the loser sees the winner's result), re-check the state machine and the
 * invariants, update the proxy, write a new immutable table version and an audit event.
 */
export async function transitionProxy(
  db: Db,
  actor: Actor,
  input: { proxyId: string; action: ProxyAction; reason?: string | undefined },
): Promise<{ proxy: Proxy; tableVersion: TableVersionSummary }> {
  const { poolId } = await proxyOrThrow(db, input.proxyId);
  return db.$transaction(async (tx) => {
    await lockPool(tx, poolId);
    const proxies = await tx.proxy.findMany({
      where: { poolId },
      select: proxySelect,
      orderBy: { slot: "asc" },
    });
    const plan = planTransition(proxies, input.proxyId, input.action);
    if (!plan.ok) throw plan.error;
    const before = proxies.find((p) => p.id === input.proxyId)!;
    const updated = await tx.proxy.update({
      where: { id: input.proxyId },
      data: { state: plan.to, stateChangedAt: new Date() },
      select: proxySelect,
    });
    const version = await insertTableVersion(tx, {
      poolId,
      proxies: plan.next,
      cause: `${input.action} ${updated.hostname}: ${plan.from} -> ${plan.to}`,
      reason: input.reason ?? "",
      actor: actorRef(actor),
    });
    await recordAudit(tx, {
      ...actorRef(actor),
      action: `proxy.${input.action}`,
      targetType: "proxy",
      targetId: updated.id,
      poolId,
      before: { state: before.state },
      after: { state: updated.state, tableVersion: version.version, contentHash: version.contentHash },
      reason: input.reason ?? "",
      tableVersionId: version.id,
    });
    return { proxy: toProxy(updated), tableVersion: toVersionSummary(version) };
  }, TRANSACTION_OPTIONS);
}
