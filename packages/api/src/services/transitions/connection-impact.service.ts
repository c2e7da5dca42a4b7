import type { ConnectionImpact, PoolTraffic } from "@tide/contracts";
import type { Db, Prisma } from "@tide/db";
import { planConnectionImpact, type EstablishedFigure, type ImpactProxy } from "./connection-impact.plan";
import { poolTraffic } from "../telemetry/proxy-traffic.service";
import type { PoolTableDiff } from "../tables/table.service";

/**
 * Each proxy's fresh established count from the pool's live traffic, or why there is none: a late
 * reading is not fresh either (its count is from before the gap, and may have changed since).
 */
export function establishedFigures(traffic: PoolTraffic, now: Date): Map<string, EstablishedFigure> {
  const out = new Map<string, EstablishedFigure>();
  for (const t of traffic.proxies) {
    if (t.established !== null && !t.late && !t.stale) {
      out.set(t.proxyId, { count: t.established });
      continue;
    }
    const reason =
      t.hostId === null
        ? "no agent reports for its host"
        : t.at === null
          ? "no report from its host"
          : t.late && t.lateReason
            ? t.lateReason
            : t.established === null && !t.stale
              ? "its agent does not report established connections"
              : `no report for ${Math.max(0, Math.round((now.getTime() - Date.parse(t.at)) / 1000))} s`;
    out.set(t.proxyId, { count: null, reason });
  }
  return out;
}

/** The impact of a change on the pool's established connections, from its proxies' latest reports. */
export async function predictConnectionImpact(
  db: Db | Prisma.TransactionClient,
  poolId: string,
  proxies: readonly ImpactProxy[],
  diff: PoolTableDiff | null,
  now = new Date(),
): Promise<ConnectionImpact> {
  const traffic = await poolTraffic(db, poolId, now);
  return planConnectionImpact(proxies, diff, establishedFigures(traffic, now));
}
