import {
  TideError,
  type ConnectionImpact,
  type Proxy,
  type ProxyAction,
  type TableVersionSummary,
  type TransitionPreview,
} from "@tide/contracts";
import { type Prisma, proxySelect, type Db } from "@tide/db";
import { actorRef, type Actor } from "../../auth/actor";
import { recordAudit } from "../audit/audit.service";
import { type ImpactProxy } from "./connection-impact.plan";
import { predictConnectionImpact } from "./connection-impact.service";
import { toProxy, toVersionSummary } from "../fleet/fleet.service";
import { planTransition } from "./proxy-transition.plan";
import {
  buildPoolTable,
  currentTableOf,
  diffPoolTables,
  insertTableVersion,
  isBuildable,
} from "../tables/table.service";
import { lockPool, TRANSACTION_OPTIONS } from "../fleet/pool-lock";

/** The pool's proxies with their state before and after a planned change. */
function impactProxies(
  before: readonly { id: string; hostname: string; address: string; state: Proxy["state"] }[],
  after: readonly { id: string; state: Proxy["state"] }[],
): ImpactProxy[] {
  const next = new Map(after.map((p) => [p.id, p.state]));
  return before.map((p) => ({
    id: p.id,
    hostname: p.hostname,
    address: p.address,
    before: p.state,
    after: next.get(p.id) ?? p.state,
  }));
}

/**
 * Whether any director serves the pool: the pool invariants apply only then, and only then does a
 * hash-field change migrate (pool.service.ts).
 */
export async function servingOf(db: Db | Prisma.TransactionClient, poolId: string) {
  const n = await db.director.count({ where: { pools: { some: { id: poolId } } } });
  return { served: n > 0 };
}

async function proxyOrThrow(db: Db, proxyId: string) {
  const proxy = await db.proxy.findUnique({ where: { id: proxyId }, select: proxySelect });
  if (!proxy) throw new TideError("not_found", `Proxy ${proxyId} does not exist.`);
  return proxy;
}

/**
 * What an action would do, without doing it: the state change, or why it is refused, the exact
 * table diff against the version the directors serve now, and what it does to the established
 * connections the proxies report (connection-impact.plan.ts).
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
      impact: null,
    };
  }
  // No proxy left in rotation (a pool no director serves, drained to zero): no table to diff.
  const next = isBuildable(plan.next) ? await buildPoolTable(db, proxy.poolId, plan.next) : null;
  const diff = current && next ? diffPoolTables(current, next) : null;
  return {
    allowed: true,
    refusal: null,
    proxy: toProxy(proxy),
    from: plan.from,
    to: plan.to,
    diff,
    basedOnVersion,
    impact: await predictConnectionImpact(db, proxy.poolId, impactProxies(proxies, plan.next), diff),
  };
}

/**
 * A change predicted (from the proxies' fresh reports) to break established connections needs a
 * reason: the operator says why it is worth it, and the audit event keeps it. Which connections
 * break does not depend on the table diff (a proxy leaving the table loses all of its), so none is
 * built here. An unknown count does not refuse: only a prediction that says so does.
 */
function refuseUnannouncedBreak(proxies: ImpactProxy[], impact: ConnectionImpact): void {
  if (!proxies.some((p) => p.before !== "inactive" && p.after === "inactive")) return;
  const broken = impact.broken.count;
  if (broken === null || broken === 0) return;
  const where = impact.proxies
    .filter((p) => (p.broken ?? 0) > 0)
    .map((p) => `${p.broken} on ${p.hostname}`)
    .join(", ");
  throw new TideError(
    "unprocessable",
    `This change would break ${broken} established connection${broken === 1 ? "" : "s"} (${where}), ` +
      `as the proxies last reported. Give a reason to apply it anyway, or wait for them to end.`,
    { broken },
  );
}

/**
 * Apply an action in one transaction: lock the pool row (so concurrent requests on the same pool
 * are serialised and the loser sees the winner's result), re-check the state machine and the
 * invariants (and, when given, that the pool is still at the version a preview was computed
 * against), update the proxy, write a new immutable table version and an audit event. The audit
 * action and the version's cause use the action's one name (`abort`, also for its older spellings).
 * A change predicted to break established connections is refused without a reason.
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
    // Kept in the version's change report, to set beside what happened.
    const impactOf = impactProxies(proxies, plan.next);
    // In the transaction: a second connection while holding the pool lock starves under contention.
    const impact = await predictConnectionImpact(tx, poolId, impactOf, null);
    if (!input.reason?.trim()) refuseUnannouncedBreak(impactOf, impact);
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
          predicted: impact,
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
