import {
  HEALTH_VIEW_STALE_AFTER_MS,
  HealthCheckOutcome,
  poolHealthCheck,
  TideError,
  type AgentHealthReport,
  type PoolHealth,
  type Proxy,
} from "@tide/contracts";
import { proxySelect, type Db } from "@tide/db";
import { z } from "zod";
import { actorRef, type Actor } from "../../auth/actor";
import type { HostCaller } from "../../auth/actor";
import { recordAudit } from "../audit/audit.service";
import { toProxy } from "../fleet/fleet.service";
import { lockPool, TRANSACTION_OPTIONS } from "../fleet/pool-lock";
import { syncHealthFindings } from "./health-findings";
import {
  FLAP_WINDOW_MS,
  freshViews,
  isDecision,
  isHold,
  planProxyHealth,
  type DirectorView,
  type HealthDecision,
  type ProxyHealthInput,
} from "./proxy-health.plan";
import { failsOpen, insertTableVersion, isBuildable } from "../tables/table.service";
import { POOLS_CHANNEL } from "../../live/channels";

/**
 * Proxy health from the directors' checks (issue 12): director hosts' agents report their views
 * (POST /agent/health), this stores them and sets each proxy's table health by
 * proxy-health.plan.ts, writing one table version (cause "health: …") and an audit event per
 * proxy that names the failing checks. Operators can pin a proxy's health (audited).
 */

/** Who health changes are written as (table versions and audit events). */
export const HEALTH_ACTOR = { actorKind: "system", actorId: null, actorLabel: "health checks" } as const;
export const HEALTH_ACTION = "proxy.health";

const StoredChecks = z.array(HealthCheckOutcome);

export interface HealthReportResult {
  /** Views stored. */
  accepted: number;
  /** Views of proxies this director does not serve (another pool, removed): not stored. */
  ignored: { proxyId: string; reason: string }[];
  /** Health changes this report caused. */
  changed: { proxyId: string; healthy: boolean; reason: string }[];
}

/** Store a director host's views and apply what they change. */
export async function recordHealthReport(
  db: Db,
  host: HostCaller,
  report: AgentHealthReport,
  now = new Date(),
): Promise<HealthReportResult> {
  const director = await db.director.findUnique({
    where: { hostname: host.hostname },
    select: { id: true, pools: { select: { id: true } } },
  });
  if (!director) {
    throw new TideError(
      "forbidden",
      `Host ${host.hostname} is not a registered director: only directors' agents report proxy health.`,
    );
  }
  const served = new Set(director.pools.map((p) => p.id));
  const proxies = await db.proxy.findMany({
    where: { id: { in: report.views.map((v) => v.proxyId) } },
    select: { id: true, poolId: true },
  });
  const poolOf = new Map(proxies.map((p) => [p.id, p.poolId]));
  const previous = await db.proxyHealthView.findMany({
    where: { directorId: director.id, proxyId: { in: proxies.map((p) => p.id) } },
    select: { proxyId: true, up: true, checks: true },
  });
  const verdict = (up: boolean | null, checks: unknown) =>
    `${up}|${(StoredChecks.safeParse(checks).data ?? []).map((c) => `${c.kind}:${c.ok}`).join(",")}`;
  const before = new Map(previous.map((v) => [v.proxyId, verdict(v.up, v.checks)]));
  const ignored: HealthReportResult["ignored"] = [];
  const pools = new Set<string>();
  const moved = new Set<string>();
  let accepted = 0;
  // The views to store, one per proxy (a report naming a proxy twice keeps the last, as before).
  const stored = new Map<string, AgentHealthReport["views"][number]>();
  for (const v of report.views) {
    const poolId = poolOf.get(v.proxyId);
    if (poolId === undefined || poolId !== v.poolId) {
      ignored.push({ proxyId: v.proxyId, reason: `no proxy ${v.proxyId} in pool ${v.poolId}` });
      continue;
    }
    if (!served.has(poolId)) {
      ignored.push({ proxyId: v.proxyId, reason: `this director does not serve pool ${poolId}` });
      continue;
    }
    stored.set(v.proxyId, v);
    accepted++;
    pools.add(poolId);
    if (before.get(v.proxyId) !== verdict(v.up, v.checks)) moved.add(poolId);
  }
  await storeHealthViews(db, director.id, [...stored.values()], now);
  // Pool pages re-read when a director's verdict or a check's outcome changed (not on heartbeats).
  for (const poolId of moved) await notifyPool(db, poolId);
  const changed: HealthReportResult["changed"] = [];
  for (const poolId of pools) changed.push(...(await reconcilePoolHealth(db, poolId, now)));
  return { accepted, ignored, changed };
}

/**
 * Store a director's views in one statement (issue 27 item 8: 4,096 views, one upsert each, took
 * 54 s on the bench and 41 s in proxy-health-report.integration-test.ts; this statement takes
 * 0.4-1 s of that test's 2-5 s report). At most one view per proxy: ON CONFLICT cannot update a
 * row twice in one statement. Times are sent as ISO text (UTC) and cast to timestamp(3), the
 * columns' type, as Prisma stores them.
 */
async function storeHealthViews(
  db: Db,
  directorId: string,
  views: readonly AgentHealthReport["views"][number][],
  now: Date,
): Promise<void> {
  if (views.length === 0) return;
  await db.$executeRawUnsafe(
    `INSERT INTO proxy_health_views (director_id, proxy_id, up, since, checks, reported_at)
     SELECT $1, v.proxy_id, v.up, v.since::timestamp(3), v.checks::jsonb, $2::timestamp(3)
       FROM unnest($3::text[], $4::boolean[], $5::text[], $6::text[]) AS v(proxy_id, up, since, checks)
     ON CONFLICT (director_id, proxy_id) DO UPDATE SET
       up = EXCLUDED.up, since = EXCLUDED.since, checks = EXCLUDED.checks, reported_at = EXCLUDED.reported_at`,
    directorId,
    now.toISOString(),
    views.map((v) => v.proxyId),
    views.map((v) => v.up),
    views.map((v) => (v.since === null ? null : new Date(v.since).toISOString())),
    views.map((v) => JSON.stringify(v.checks)),
  );
}

/**
 * Apply the directors' views (and pins) to a pool's proxies: one table version for all changes,
 * one audit event per changed proxy. Returns the changes (none: nothing written).
 */
export async function reconcilePoolHealth(
  db: Db,
  poolId: string,
  now = new Date(),
): Promise<HealthReportResult["changed"]> {
  let holdUntil: Date | null = null;
  const changed = await db.$transaction(async (tx) => {
    await lockPool(tx, poolId);
    const pool = await tx.pool.findUniqueOrThrow({
      where: { id: poolId },
      select: { name: true, healthCheck: true, directors: { select: { id: true, hostname: true } } },
    });
    const proxies = await tx.proxy.findMany({
      where: { poolId },
      select: proxySelect,
      orderBy: { slot: "asc" },
    });
    const directorName = new Map(pool.directors.map((d) => [d.id, d.hostname]));
    const views = await tx.proxyHealthView.findMany({
      where: { proxyId: { in: proxies.map((p) => p.id) }, directorId: { in: [...directorName.keys()] } },
    });
    const flipCount = await recentFlipCounts(tx, poolId, now);
    const decisions: HealthDecision[] = [];
    const viewsOf = (proxyId: string): DirectorView[] => planViews(views, proxyId, directorName);
    for (const p of proxies) {
      const input: ProxyHealthInput = {
        proxyId: p.id,
        hostname: p.hostname,
        healthy: p.healthy,
        pinned: p.healthPinned,
        changedAt: p.healthChangedAt,
        recentFlips: flipCount.get(p.id) ?? 0,
        views: viewsOf(p.id),
      };
      const d = planProxyHealth(input, now);
      if (isDecision(d)) decisions.push(d);
      else if (isHold(d) && (holdUntil === null || d.until < holdUntil)) holdUntil = d.until;
    }
    if (decisions.length === 0) return [];
    const decided = new Map(decisions.map((d) => [d.proxyId, d]));
    const after = proxies.map((p) => {
      const d = decided.get(p.id);
      return d ? { ...p, healthy: d.healthy, healthReason: d.reason.slice(0, 500), healthChangedAt: now } : p;
    });
    for (const p of after) {
      if (!decided.has(p.id)) continue;
      await tx.proxy.update({
        where: { id: p.id },
        data: { healthy: p.healthy, healthReason: p.healthReason, healthChangedAt: now },
      });
    }
    // "www-proxy-1 up (hold released)": the version list says a recovery waited out a flap hold.
    const names = (d: HealthDecision) =>
      `${proxies.find((p) => p.id === d.proxyId)!.hostname} ${d.healthy ? "up" : "down"}` +
      (d.releasedFromHold !== null ? " (hold released)" : "");
    const version = isBuildable(after)
      ? await insertTableVersion(tx, {
          poolId,
          proxies: after,
          cause: `health: ${decisions.map(names).join(", ")}`,
          reason: decisions
            .map((d) => d.reason)
            .join(" | ")
            .slice(0, 2000),
          actor: HEALTH_ACTOR,
        })
      : null;
    for (const d of decisions) {
      const before = proxies.find((p) => p.id === d.proxyId)!;
      await recordAudit(tx, {
        ...HEALTH_ACTOR,
        action: HEALTH_ACTION,
        targetType: "proxy",
        targetId: d.proxyId,
        poolId,
        before: { healthy: before.healthy, reason: before.healthReason },
        after: {
          healthy: d.healthy,
          reason: d.reason,
          failing: d.failing,
          pinned: d.pinned,
          releasedFromHold: d.releasedFromHold?.toISOString() ?? null,
          tableVersion: version?.version ?? null,
        },
        reason: d.reason.slice(0, 500),
        tableVersionId: version?.id ?? null,
      });
    }
    await syncHealthFindings(tx, {
      pool: { id: poolId, name: pool.name, check: poolHealthCheck(pool.healthCheck) },
      proxies: after
        .filter((p) => p.state !== "inactive")
        .map((p) => ({
          id: p.id,
          address: p.address,
          hostname: p.hostname,
          healthy: p.healthy,
          pinned: p.healthPinned,
          views: freshViews(viewsOf(p.id), now),
        })),
      directors: pool.directors.map((d) => d.hostname),
      failOpen: failsOpen(after),
      now,
    });
    return decisions.map((d) => ({ proxyId: d.proxyId, healthy: d.healthy, reason: d.reason }));
  }, TRANSACTION_OPTIONS);
  if (holdUntil !== null) recheckAt(db, poolId, holdUntil);
  return changed;
}

/**
 * Health changes per proxy of a pool in the last FLAP_WINDOW_MS (each doubles the recovery hold):
 * the audit events HEALTH_ACTOR wrote, which include the change a pin makes (operators' pin events
 * themselves, proxy.health_pin, do not count).
 */
async function recentFlipCounts(
  db: Pick<Db, "auditEvent">,
  poolId: string,
  now: Date,
): Promise<Map<string | null, number>> {
  const flips = await db.auditEvent.groupBy({
    by: ["targetId"],
    where: {
      action: HEALTH_ACTION,
      actorKind: "system",
      targetType: "proxy",
      poolId,
      createdAt: { gt: new Date(now.getTime() - FLAP_WINDOW_MS) },
    },
    _count: { _all: true },
  });
  return new Map(flips.map((f) => [f.targetId, f._count._all]));
}

/** One proxy's stored views as the plan reads them, each named by its director. */
function planViews(
  views: readonly {
    proxyId: string;
    directorId: string;
    up: boolean | null;
    since: Date | null;
    reportedAt: Date;
    checks: unknown;
  }[],
  proxyId: string,
  directorName: ReadonlyMap<string, string>,
): DirectorView[] {
  return views
    .filter((v) => v.proxyId === proxyId)
    .map((v) => ({
      director: directorName.get(v.directorId) ?? v.directorId,
      up: v.up,
      since: v.since,
      reportedAt: v.reportedAt,
      checks: StoredChecks.safeParse(v.checks).data ?? [],
    }));
}

/** Pools with a re-check pending in this process: its time and timer. */
const rechecks = new Map<string, { at: number; timer: NodeJS.Timeout }>();

/**
 * A proxy that would recover but is held: re-check the pool when the hold ends, so it returns then
 * and not at the next director report (up to HEALTH_REPORT_EVERY_MS later). In-process and best
 * effort: with several console processes each may re-check, which the pool lock makes harmless; a
 * restarted console re-checks at the next report.
 */
function recheckAt(db: Db, poolId: string, until: Date): void {
  const at = until.getTime() + 50;
  const pending = rechecks.get(poolId);
  if (pending !== undefined && pending.at <= at) return;
  if (pending !== undefined) clearTimeout(pending.timer);
  const timer = setTimeout(
    () => {
      rechecks.delete(poolId);
      reconcilePoolHealth(db, poolId).catch((e: unknown) =>
        console.error(`health re-check of pool ${poolId} failed`, e),
      );
    },
    Math.max(0, at - Date.now()),
  );
  timer.unref();
  rechecks.set(poolId, { at, timer });
}

/**
 * Pin a proxy's health (true/false) whatever the checks say, or unpin it (null: the checks decide
 * again). Audited; the pin takes effect at once (a table version when health changes).
 */
export async function setHealthPin(
  db: Db,
  actor: Actor,
  input: { proxyId: string; pinned: boolean | null; reason: string },
): Promise<{ proxy: Proxy; changed: HealthReportResult["changed"] }> {
  const before = await db.proxy.findUnique({ where: { id: input.proxyId }, select: proxySelect });
  if (!before) throw new TideError("not_found", `Proxy ${input.proxyId} does not exist.`);
  if (before.healthPinned === input.pinned) {
    throw new TideError(
      "conflict",
      input.pinned === null
        ? `Proxy ${before.hostname} is not pinned.`
        : `Proxy ${before.hostname} is already pinned ${input.pinned ? "healthy" : "unhealthy"}.`,
    );
  }
  await db.$transaction(async (tx) => {
    await lockPool(tx, before.poolId);
    await tx.proxy.update({ where: { id: before.id }, data: { healthPinned: input.pinned } });
    await recordAudit(tx, {
      ...actorRef(actor),
      action: "proxy.health_pin",
      targetType: "proxy",
      targetId: before.id,
      poolId: before.poolId,
      before: { pinned: before.healthPinned },
      after: { pinned: input.pinned },
      reason: input.reason,
    });
  }, TRANSACTION_OPTIONS);
  // Unpinned, a proxy keeps the health it had until the directors' views say otherwise.
  const changed = await reconcilePoolHealth(db, before.poolId);
  const proxy = await db.proxy.findUniqueOrThrow({ where: { id: before.id }, select: proxySelect });
  return { proxy: toProxy(proxy), changed };
}

/** Best effort: a failed notify never fails a report (pages catch up on their next read). */
async function notifyPool(db: Db, poolId: string): Promise<void> {
  try {
    await db.$executeRaw`SELECT pg_notify(${POOLS_CHANNEL}, ${poolId})`;
  } catch (e) {
    console.error(`pg_notify ${POOLS_CHANNEL} failed:`, e);
  }
}

/** A pool's health: settings, each proxy's health and every serving director's view of it. */
export async function poolHealth(db: Db, poolId: string, now = new Date()): Promise<PoolHealth> {
  const pool = await db.pool.findUnique({
    where: { id: poolId },
    select: {
      id: true,
      healthCheck: true,
      directors: { select: { id: true, hostname: true } },
      proxies: { select: proxySelect, orderBy: { slot: "asc" } },
    },
  });
  if (!pool) throw new TideError("not_found", `Pool ${poolId} does not exist.`);
  const directorName = new Map(pool.directors.map((d) => [d.id, d.hostname]));
  const views = await db.proxyHealthView.findMany({
    where: { proxyId: { in: pool.proxies.map((p) => p.id) }, directorId: { in: [...directorName.keys()] } },
  });
  const flipCount = await recentFlipCounts(db, pool.id, now);
  // The plan that reconcilePoolHealth runs, run here to see holds: a proxy whose checks pass but
  // that must wait is "held until …", not merely unhealthy beside passing checks.
  const holdOf = (p: (typeof pool.proxies)[number], recentFlips: number) => {
    const d = planProxyHealth(
      {
        proxyId: p.id,
        hostname: p.hostname,
        healthy: p.healthy,
        pinned: p.healthPinned,
        changedAt: p.healthChangedAt,
        recentFlips,
        views: planViews(views, p.id, directorName),
      },
      now,
    );
    return isHold(d) ? d : null;
  };
  return {
    poolId: pool.id,
    check: poolHealthCheck(pool.healthCheck),
    failOpen: failsOpen(pool.proxies),
    proxies: pool.proxies.map((p) => {
      const recentFlips = flipCount.get(p.id) ?? 0;
      const hold = holdOf(p, recentFlips);
      return {
        proxyId: p.id,
        hostname: p.hostname,
        healthy: p.healthy,
        pinned: p.healthPinned,
        reason: p.healthReason,
        changedAt: p.healthChangedAt.toISOString(),
        recentFlips,
        held: hold !== null,
        heldUntil: hold?.until.toISOString() ?? null,
        holdReason: hold?.reason ?? null,
        views: views
          .filter((v) => v.proxyId === p.id)
          .map((v) => ({
            director: directorName.get(v.directorId) ?? v.directorId,
            up: v.up,
            since: v.since?.toISOString() ?? null,
            reportedAt: v.reportedAt.toISOString(),
            stale: now.getTime() - v.reportedAt.getTime() > HEALTH_VIEW_STALE_AFTER_MS,
            checks: StoredChecks.safeParse(v.checks).data ?? [],
          }))
          .sort((a, b) => a.director.localeCompare(b.director)),
      };
    }),
  };
}
