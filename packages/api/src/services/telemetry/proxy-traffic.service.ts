import {
  PROXY_TRAFFIC_STALE_AFTER_MS,
  TideError,
  type DataPlaneState,
  type FindingCounts,
  type FleetLive,
  type Observation,
  type PoolTraffic,
} from "@tide/contracts";
import { bindSelect, hostTrafficContext, storeHostTraffic, type Db, type Prisma } from "@tide/db";
import { POOLS_CHANNEL } from "../../live/channels";
import { DESIRED_SAMPLE_INTERVAL_MS } from "../fleet/desired-state.service";
import { batchIntervalFor, ingestPacer } from "./ingest-pacing";
import {
  alternateHashRate,
  establishedToBinds,
  fallRate,
  lateAfterMs,
  nextTraffic,
  trafficForBinds,
  trafficLateness,
  type HostTraffic,
  type TrafficSample,
} from "./proxy-traffic.plan";

/**
 * Live traffic of proxies (issue 12 item 3, issue 26 item 5). Ingest hands each proxy host's newest
 * sample here: its traffic (hosts.traffic) moves one step (proxy-traffic.plan.ts) and the pages of
 * the pools it is a proxy of are told (tide_pools "<pool id> traffic"). A host is a pool's proxy
 * when its name is the proxy's host name, as directors are found by theirs. Each pool gets the
 * figures of its own VIPs (trafficForBinds); figures of a late reading are null and say so.
 */

type Established = NonNullable<HostTraffic["established"]>;

/** ESTABLISHED sockets per local address:port over the sample's namespaces; null = not reported. */
function establishedOf(o: Observation): Established | null {
  let seen = false;
  const sum = new Map<string, Established[number]>();
  for (const ns of o.namespaces) {
    if (ns.established === undefined) continue;
    seen = true;
    for (const e of ns.established) {
      const k = `${e.address}|${e.port}`;
      const s = sum.get(k);
      if (s) s.count += e.count;
      else sum.set(k, { ...e });
    }
  }
  return seen ? [...sum.values()] : null;
}

/**
 * How often this process expects a host's readings, ms: the batch interval it asks of its agents
 * (ingest-pacing.ts), at least the sample interval. Readings further apart than lateAfterMs of it
 * are late.
 */
export function expectedReadingIntervalMs(): number {
  return Math.max(DESIRED_SAMPLE_INTERVAL_MS, batchIntervalFor(ingestPacer().activeHosts));
}

/** After a batch is stored: the host's traffic, if it is a proxy host; best effort (never fails ingest). */
export async function recordTraffic(
  db: Db,
  host: { hostId: string; hostname: string },
  newest: Observation,
  dataPlane: readonly DataPlaneState[],
  expectedIntervalMs = expectedReadingIntervalMs(),
): Promise<void> {
  const state = dataPlane.find((d) => d.component === "redirect" && d.reachable);
  const redirect = state?.redirectCounters ?? null;
  const established = establishedOf(newest);
  if (redirect === null && established === null) return;
  try {
    // One statement to read and one to write (with the pools' notifies), on node-postgres: ingest
    // calls this for every batch of a proxy host (@tide/db host-traffic.ts).
    const context = await hostTrafficContext(db, host.hostId, host.hostname);
    const sample: TrafficSample = {
      at: newest.sampledAt,
      redirect,
      vips: redirect === null ? null : (state?.redirectVips ?? null),
      ...(redirect !== null && state?.countersReadAt !== undefined ? { readAt: state.countersReadAt } : {}),
      expectedIntervalMs,
      established,
      vipEstablished: establishedToBinds(established, context.binds),
    };
    const next = nextTraffic((context.traffic ?? null) as HostTraffic | null, sample);
    await storeHostTraffic(
      db,
      host.hostId,
      next as unknown as Prisma.InputJsonValue,
      POOLS_CHANNEL,
      context.poolIds.map((poolId) => `${poolId} traffic`),
    );
  } catch (e) {
    console.error(`traffic of host ${host.hostname}: not recorded`, e);
  }
}

const noFindings = (): FindingCounts => ({ critical: 0, warn: 0, info: 0 });

/** A pool's proxies' live traffic, and totals. */
/** Reads one query at a time: `db` may be an interactive transaction (one connection). */
export async function poolTraffic(
  db: Db | Prisma.TransactionClient,
  poolId: string,
  now = new Date(),
): Promise<PoolTraffic> {
  const pool = await db.pool.findUnique({
    where: { id: poolId },
    select: {
      id: true,
      binds: { select: bindSelect },
      proxies: { select: { id: true, hostname: true }, orderBy: { slot: "asc" } },
    },
  });
  if (!pool) throw new TideError("not_found", `Pool ${poolId} does not exist.`);
  const names = [...new Set(pool.proxies.map((p) => p.hostname))];
  const hosts = await db.host.findMany({
    where: { name: { in: names } },
    select: { id: true, name: true, traffic: true },
  });
  const findings = await db.finding.groupBy({
    by: ["hostId", "severity"],
    where: { hostId: { in: hosts.map((h) => h.id) }, status: { in: ["open", "acknowledged"] } },
    _count: { _all: true },
  });
  const byName = new Map(hosts.map((h) => [h.name, h]));
  const totals = {
    newConnectionsPerS: null as number | null,
    established: null as number | null,
    findings: noFindings(),
  };
  const proxies = pool.proxies.map((p) => {
    const host = byName.get(p.hostname) ?? null;
    const t = (host?.traffic ?? null) as HostTraffic | null;
    const counts = noFindings();
    for (const f of findings) if (f.hostId === host?.id) counts[f.severity] += f._count._all;
    const stale = t === null || now.getTime() - Date.parse(t.at) > PROXY_TRAFFIC_STALE_AFTER_MS;
    const lateReason = t === null ? null : trafficLateness(t, now);
    const late = lateReason !== null;
    const figures = t === null ? null : trafficForBinds(t, pool.binds);
    // Late or stale: unknown, never a zero (a zero would be followed by a double).
    const fresh = (v: number | null | undefined) =>
      stale || late || v === null || v === undefined ? null : v;
    const established = stale ? null : establishedToBinds(t?.established, pool.binds);
    const row = {
      proxyId: p.id,
      hostname: p.hostname,
      hostId: host?.id ?? null,
      at: t?.at ?? null,
      stale,
      late,
      lateReason,
      scope: figures?.scope ?? "pool",
      newConnectionsPerS: fresh(figures?.newConnectionsPerS),
      forwardedToAlternatePerS: fresh(figures?.forwardedToAlternatePerS),
      acceptedEstablishedPerS: fresh(figures?.acceptedEstablishedPerS),
      acceptedSecondChancePerS: fresh(figures?.acceptedSecondChancePerS),
      acceptedAlternateHashPerS: fresh(figures?.acceptedAlternateHashPerS),
      acceptedLastResortPerS: fresh(figures?.acceptedLastResortPerS),
      secondChancePerS: fresh(figures?.secondChancePerS),
      established,
      establishedFallingPerS: stale || !t ? null : fallRate(t.history),
      findings: counts,
    };
    if (row.newConnectionsPerS !== null)
      totals.newConnectionsPerS = (totals.newConnectionsPerS ?? 0) + row.newConnectionsPerS;
    if (row.established !== null) totals.established = (totals.established ?? 0) + row.established;
    for (const s of ["critical", "warn", "info"] as const) totals.findings[s] += counts[s];
    return row;
  });
  return { poolId: pool.id, proxies, totals };
}

/**
 * Whether established flows still reach a pool's proxies through the alternate hash of a
 * hash-field migration (alt_hash_fields): tide-redirect's accepted_alternate_hash on the pool's
 * VIPs, per second over the last `windowMs` before `now`, for the pool service to finish a
 * migration once no flow takes the old hash fields any more (hash-migration.service.ts).
 *
 * - proxies: the pool's proxies that can hold flows (every state but inactive: a draining proxy's
 *   flows are exactly the ones a migration must keep).
 * - reportingProxies: of those, the ones whose host sent per-VIP counters over the whole window
 *   (a reading at most lateAfterMs of its interval after the window starts and before `now`).
 *   An older agent or tide-redirect, or a silent host, does not report.
 * - acceptedAlternateHashPerS: packets per second summed over the reporting proxies; null when
 *   none reported. 0 with every proxy reporting is the only "no flow takes the alternate" answer.
 *
 * Reads the hosts' stored traffic (hosts.traffic, ALTERNATE_HASH_KEEP_MS of readings): windows up
 * to 2 minutes. Throws not_found for an unknown pool.
 */
export async function alternateHashActivity(
  db: Db,
  poolId: string,
  windowMs: number,
  now = new Date(),
): Promise<{ acceptedAlternateHashPerS: number | null; reportingProxies: number; proxies: number }> {
  const pool = await db.pool.findUnique({
    where: { id: poolId },
    select: { binds: { select: bindSelect }, proxies: { select: { hostname: true, state: true } } },
  });
  if (!pool) throw new TideError("not_found", `Pool ${poolId} does not exist.`);
  const holding = pool.proxies.filter((p) => p.state !== "inactive");
  const hosts = await db.host.findMany({
    where: { name: { in: [...new Set(holding.map((p) => p.hostname))] } },
    select: { name: true, traffic: true },
  });
  const byName = new Map(hosts.map((h) => [h.name, (h.traffic ?? null) as HostTraffic | null]));
  const from = new Date(now.getTime() - windowMs);
  let reporting = 0;
  let sum: number | null = null;
  for (const p of holding) {
    const t = byName.get(p.hostname) ?? null;
    if (t === null) continue;
    const slack = lateAfterMs(t.expectedIntervalMs ?? DESIRED_SAMPLE_INTERVAL_MS);
    const r = alternateHashRate(t.alternateHash, pool.binds, from, now, slack);
    if (r === null) continue;
    reporting++;
    sum = (sum ?? 0) + r;
  }
  return { acceptedAlternateHashPerS: sum, reportingProxies: reporting, proxies: holding.length };
}

/**
 * Per pool live totals and the fleet's open findings: the fleet page and the nav's count. One
 * poolTraffic per pool (a handful of queries each): fine for tens of pools; issue 16 scales it.
 */
export async function fleetLive(db: Db, now = new Date()): Promise<FleetLive> {
  const pools = await db.pool.findMany({ select: { id: true }, orderBy: { name: "asc" } });
  const traffic = await Promise.all(pools.map((p) => poolTraffic(db, p.id, now)));
  const open = await db.finding.groupBy({
    by: ["severity"],
    where: { status: { in: ["open", "acknowledged"] } },
    _count: { _all: true },
  });
  const findings = noFindings();
  for (const f of open) findings[f.severity] += f._count._all;
  return {
    pools: traffic.map((t) => ({ poolId: t.poolId, ...t.totals })),
    findings,
  };
}
