import {
  TideError,
  type Proxy,
  type ProxyAction,
  type ProxyState,
  type TableVersionSummary,
} from "@tide/contracts";
import { type Prisma, proxySelect, type Db } from "@tide/db";
import { actorRef, type Actor } from "../auth/actor";
import { recordAudit } from "./audit.service";
import { toProxy, toVersionSummary } from "./fleet.service";
import { planTransition } from "./proxy-transition.plan";
import {
  buildPoolTable,
  currentTableOf,
  diffPoolTables,
  insertTableVersion,
  isBuildable,
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
  basedOnVersion: number | null;
}

/** Whether any director serves the pool (the pool invariants apply only then). */
async function servingOf(db: Db | Prisma.TransactionClient, poolId: string) {
  const n = await db.director.count({ where: { pools: { some: { id: poolId } } } });
  return { served: n > 0 };
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
  const plan = planTransition(proxies, proxy.id, input.action, await servingOf(db, proxy.poolId));
  const current = await currentTableOf(db, proxy.poolId);
  const basedOnVersion = current?.summary.version ?? null;
  if (!plan.ok) {
    return {
      allowed: false,
      refusal: { code: plan.error.code, message: plan.error.message },
      proxy: toProxy(proxy),
      from: proxy.state,
      to: null,
      diff: null,
      basedOnVersion,
    };
  }
  // No proxy left in rotation (a pool no director serves, drained to zero): no table to diff.
  const next = isBuildable(plan.next) ? await buildPoolTable(db, proxy.poolId, plan.next) : null;
  return {
    allowed: true,
    refusal: null,
    proxy: toProxy(proxy),
    from: plan.from,
    to: plan.to,
    diff: current && next ? diffPoolTables(current, next) : null,
    basedOnVersion,
  };
}

/**
 * Apply an action in one transaction: lock the pool row (so concurrent requests on the same pool
 * are serialised and the loser sees the winner's result), re-check the state machine and the
 * invariants (and, when given, that the pool is still at the version a preview was computed
 * against), update the proxy, write a new immutable table version and an audit event. The audit
 * action and the version's cause use the action's one name (`abort`, also for its older spellings).
 */
export async function transitionProxy(
  db: Db,
  actor: Actor,
  input: {
    proxyId: string;
    action: ProxyAction;
    reason?: string | undefined;
    expectedVersion?: number | null | undefined;
  },
): Promise<{ proxy: Proxy; tableVersion: TableVersionSummary | null }> {
  const { poolId } = await proxyOrThrow(db, input.proxyId);
  return db.$transaction(async (tx) => {
    await lockPool(tx, poolId);
    if (input.expectedVersion !== undefined) {
      const current = await tx.tableVersion.findFirst({
        where: { poolId },
        orderBy: { version: "desc" },
        select: { version: true },
      });
      const now = current?.version ?? null;
      if (now !== input.expectedVersion)
        throw new TideError(
          "conflict",
          `The pool changed since the preview: it was computed against ` +
            `${input.expectedVersion === null ? "no table version" : `v${input.expectedVersion}`}, ` +
            `the current version is ${now === null ? "none" : `v${now}`}. Preview again, then confirm.`,
          { expectedVersion: input.expectedVersion, currentVersion: now },
        );
    }
    const proxies = await tx.proxy.findMany({
      where: { poolId },
      select: proxySelect,
      orderBy: { slot: "asc" },
    });
    const plan = planTransition(proxies, input.proxyId, input.action, await servingOf(tx, poolId));
    if (!plan.ok) throw plan.error;
    const before = proxies.find((p) => p.id === input.proxyId)!;
    const action = plan.transition.action;
    const updated = await tx.proxy.update({
      where: { id: input.proxyId },
      data: { state: plan.to, stateChangedAt: new Date() },
      select: proxySelect,
    });
    // The last proxy of a pool no director serves leaves the rotation: nothing to build, and the
    // last version stays (as when proxies are removed).
    const version = isBuildable(plan.next)
      ? await insertTableVersion(tx, {
          poolId,
          proxies: plan.next,
          cause: `${action} ${updated.hostname}: ${plan.from} -> ${plan.to}`,
          reason: input.reason ?? "",
          actor: actorRef(actor),
        })
      : null;
    await recordAudit(tx, {
      ...actorRef(actor),
      action: `proxy.${action}`,
      targetType: "proxy",
      targetId: updated.id,
      poolId,
      before: { state: before.state },
      after: {
        state: updated.state,
        tableVersion: version?.version ?? null,
        contentHash: version?.contentHash ?? null,
      },
      reason: input.reason ?? "",
      tableVersionId: version?.id ?? null,
    });
    return { proxy: toProxy(updated), tableVersion: version ? toVersionSummary(version) : null };
  }, TRANSACTION_OPTIONS);
}
