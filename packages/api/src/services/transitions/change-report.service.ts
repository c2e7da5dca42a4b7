import {
  TideError,
  type ChangeReport,
  type ChangeReportBody,
  type ConnectionImpact,
  type DataPlaneState,
} from "@tide/contracts";
import {
  bindSelect,
  flowsInWindow,
  pruneRedirectFlows,
  anyChangeReportPending,
  storeRedirectFlows,
  Prisma,
  type Db,
} from "@tide/db";
import { POOLS_CHANNEL } from "../../live/channels";
import {
  buildReport,
  CATCH_UP_MS,
  caughtUp,
  planWindowEnd,
  readingOf,
  type Baseline,
  type ProxyAtClose,
  type WindowDirector,
} from "./change-report.plan";
import type { HostTraffic } from "../telemetry/proxy-traffic.plan";

/**
 * Change reports (issue 26 item 2): every table version opens one (insertTableVersion calls
 * openChangeReport in its transaction, with the counters of the pool's proxies at that moment);
 * a timer started by ingest ends the windows and writes the reports (change-report.plan.ts); the
 * proxies' agents feed it tide-redirect's flows (recordRedirectFlows). Read by the versions page,
 * the audit log (an event's tableVersionId) and GET /tables/{versionId}/report.
 */

type Tx = Prisma.TransactionClient | Db;

/** Flows are kept this long after their last packet, ms: reports read them within minutes. */
const FLOWS_KEEP_MS = 60 * 60_000;
/** How often this process advances the reports, ms. */
const CHECK_INTERVAL_MS = 2_000;

async function poolProxyHosts(tx: Tx, poolId: string) {
  const pool = await tx.pool.findUniqueOrThrow({
    where: { id: poolId },
    select: { binds: { select: bindSelect }, proxies: { select: { id: true, hostname: true } } },
  });
  return pool;
}

/** Open the change report of a version just written (in its transaction). */
export async function openChangeReport(
  tx: Tx,
  input: { tableVersionId: string; poolId: string; predicted?: ConnectionImpact | null },
): Promise<void> {
  const pool = await poolProxyHosts(tx, input.poolId);
  const names = [...new Set(pool.proxies.map((p) => p.hostname))];
  const hosts = await tx.host.findMany({
    where: { name: { in: names } },
    select: { name: true, traffic: true },
  });
  const traffic = new Map(hosts.map((h) => [h.name, (h.traffic ?? null) as HostTraffic | null]));
  const baseline: Baseline = {};
  for (const name of names) baseline[name] = readingOf(traffic.get(name) ?? null, pool.binds);
  await tx.changeReport.create({
    data: {
      tableVersionId: input.tableVersionId,
      poolId: input.poolId,
      baseline: baseline as unknown as Prisma.InputJsonValue,
      ...(input.predicted ? { predicted: input.predicted as unknown as Prisma.InputJsonValue } : {}),
    },
  });
}

/**
 * How long an empty flows reading may go unstored after the last stored one, ms: most readings
 * list nothing (no change under way), and each stored one is a statement per proxy batch. A
 * report waits for its proxies' readings to pass its end, so this delays a report by at most as
 * much; a reading that lists flows is always stored.
 */
const EMPTY_FLOWS_EVERY_MS = 5_000;
const emptyStoredAt = new Map<string, number>();

/** After a batch is stored: the host's tide-redirect flows, when its agent read them; best effort. */
export async function recordRedirectFlows(
  db: Db,
  hostId: string,
  dataPlane: readonly DataPlaneState[],
): Promise<void> {
  const state = dataPlane.find((d) => d.component === "redirect" && d.reachable);
  const flows = state?.redirectFlows;
  if (!state || flows === null || flows === undefined) return;
  const readAt = state.countersReadAt ? new Date(state.countersReadAt) : new Date();
  if (flows.length === 0) {
    // By the readings' clock: a buffered delivery of old readings is spaced as it was read.
    const last = emptyStoredAt.get(hostId);
    if (last !== undefined && Math.abs(readAt.getTime() - last) < EMPTY_FLOWS_EVERY_MS) return;
    emptyStoredAt.set(hostId, readAt.getTime());
  }
  try {
    const truncated = (state.redirectFlowsMatched ?? flows.length) > flows.length;
    await storeRedirectFlows(db, hostId, readAt, flows, truncated);
  } catch (e) {
    console.error("redirect flows: not recorded", e);
  }
}

/** The directors of a pool and when each began serving `contentHash` (at the earliest `openedAt`). */
async function windowDirectors(db: Db, poolId: string, contentHash: string, openedAt: Date) {
  const directors = await db.director.findMany({
    where: { pools: { some: { id: poolId } } },
    select: {
      id: true,
      hostname: true,
      sync: { where: { poolId }, select: { servedHash: true, servedChangedAt: true } },
    },
    orderBy: { hostname: "asc" },
  });
  return directors.map((d): WindowDirector => {
    const s = d.sync[0];
    const serves = s !== undefined && s.servedHash === contentHash;
    return {
      directorId: d.id,
      hostname: d.hostname,
      servedAt: serves ? new Date(Math.max(s.servedChangedAt.getTime(), openedAt.getTime())) : null,
    };
  });
}

async function notifyPool(db: Db, poolId: string): Promise<void> {
  await db.$executeRaw`SELECT pg_notify(${POOLS_CHANNEL}, ${poolId})`;
}

/** End the windows that ended by `now`; returns how many. */
async function endWindows(db: Db, now: Date): Promise<number> {
  const open = await db.changeReport.findMany({
    where: { closedAt: null },
    select: {
      tableVersionId: true,
      poolId: true,
      openedAt: true,
      tableVersion: { select: { version: true, contentHash: true } },
    },
  });
  let ended = 0;
  for (const r of open) {
    const newer = await db.tableVersion.findFirst({
      where: { poolId: r.poolId, version: { gt: r.tableVersion.version } },
      orderBy: { version: "asc" },
      select: { version: true, createdAt: true },
    });
    const plan = planWindowEnd({
      openedAt: r.openedAt,
      now,
      replacedAt: newer ? { at: newer.createdAt, version: newer.version } : null,
      directors: await windowDirectors(db, r.poolId, r.tableVersion.contentHash, r.openedAt),
    });
    if (!plan.end) continue;
    // Only the process that ends it writes it (another console process may run the same check).
    const { count } = await db.changeReport.updateMany({
      where: { tableVersionId: r.tableVersionId, closedAt: null },
      data: { closedAt: plan.at, endedWhy: plan.why },
    });
    ended += count;
  }
  return ended;
}

/** Write the reports of ended windows whose readings caught up (or waited long enough). */
async function writeReports(db: Db, now: Date): Promise<number> {
  const closing = await db.changeReport.findMany({
    where: { closedAt: { not: null }, report: { equals: Prisma.DbNull } },
    select: {
      tableVersionId: true,
      poolId: true,
      openedAt: true,
      closedAt: true,
      endedWhy: true,
      baseline: true,
      tableVersion: { select: { contentHash: true } },
    },
  });
  let written = 0;
  for (const r of closing) {
    const closedAt = r.closedAt!;
    const pool = await db.pool.findUnique({
      where: { id: r.poolId },
      select: { binds: { select: bindSelect }, proxies: { select: { id: true, hostname: true } } },
    });
    if (!pool) continue; // deleted: its versions and reports go with it
    const baseline = r.baseline as unknown as Baseline;
    const names = [...new Set([...Object.keys(baseline), ...pool.proxies.map((p) => p.hostname)])].sort();
    const hosts = await db.host.findMany({
      where: { name: { in: names } },
      select: { name: true, traffic: true, flowsReadAt: true, flowsTruncatedAt: true },
    });
    const byName = new Map(hosts.map((h) => [h.name, h]));
    const proxies = names.map((hostname): ProxyAtClose => {
      const h = byName.get(hostname);
      return {
        proxyId: pool.proxies.find((p) => p.hostname === hostname)?.id ?? null,
        hostname,
        reading: readingOf((h?.traffic ?? null) as HostTraffic | null, pool.binds),
        flowsReadAt: h?.flowsReadAt ?? null,
        flowsTruncatedAt: h?.flowsTruncatedAt ?? null,
      };
    });
    if (!caughtUp(proxies, closedAt) && now.getTime() < closedAt.getTime() + CATCH_UP_MS) continue;
    const report = buildReport({
      openedAt: r.openedAt,
      closedAt,
      why: r.endedWhy,
      baseline,
      proxies,
      directors: await windowDirectors(db, r.poolId, r.tableVersion.contentHash, r.openedAt),
      binds: pool.binds,
      flows: await flowsInWindow(db, names, r.openedAt, closedAt),
    });
    const { count } = await db.changeReport.updateMany({
      where: { tableVersionId: r.tableVersionId, report: { equals: Prisma.DbNull } },
      data: { report: report as unknown as Prisma.InputJsonValue },
    });
    if (count > 0) {
      written++;
      await notifyPool(db, r.poolId);
    }
  }
  return written;
}

/** One step of the reporter: end windows, write reports. Exported for tests. */
export async function advanceChangeReports(
  db: Db,
  now = new Date(),
): Promise<{ ended: number; written: number }> {
  const ended = await endWindows(db, now);
  const written = await writeReports(db, now);
  return { ended, written };
}

function status(r: { closedAt: Date | null; report: unknown }): ChangeReport["status"] {
  return r.closedAt === null ? "measuring" : r.report === null ? "closing" : "done";
}

const reportSelect = {
  tableVersionId: true,
  poolId: true,
  openedAt: true,
  closedAt: true,
  predicted: true,
  report: true,
  tableVersion: { select: { version: true } },
} satisfies Prisma.ChangeReportSelect;

function toChangeReport(r: Prisma.ChangeReportGetPayload<{ select: typeof reportSelect }>): ChangeReport {
  return {
    tableVersionId: r.tableVersionId,
    poolId: r.poolId,
    version: r.tableVersion.version,
    status: status(r),
    openedAt: r.openedAt.toISOString(),
    closedAt: r.closedAt?.toISOString() ?? null,
    predicted: (r.predicted ?? null) as ConnectionImpact | null,
    report: (r.report ?? null) as ChangeReportBody | null,
  };
}

/** A version's change report; not_found for an unknown version or one written before reports. */
export async function getChangeReport(db: Db, tableVersionId: string): Promise<ChangeReport> {
  const r = await db.changeReport.findUnique({ where: { tableVersionId }, select: reportSelect });
  if (!r) {
    const v = await db.tableVersion.findUnique({ where: { id: tableVersionId }, select: { id: true } });
    throw new TideError(
      "not_found",
      v
        ? `Table version ${tableVersionId} has no change report (written before change reports existed).`
        : `Table version ${tableVersionId} does not exist.`,
    );
  }
  return toChangeReport(r);
}

/** The change reports of the given versions (those that have one), for a list of versions. */
export async function listChangeReports(db: Db, tableVersionIds: readonly string[]): Promise<ChangeReport[]> {
  const rows = await db.changeReport.findMany({
    where: { tableVersionId: { in: [...tableVersionIds] } },
    select: reportSelect,
  });
  return rows.map(toChangeReport);
}

class ChangeReporter {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private lastPrune = 0;

  constructor(private readonly db: Db) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), CHECK_INTERVAL_MS);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.running) return; // a slow database: never two steps at once
    this.running = true;
    try {
      // Most of the time no report is open: one cheap statement instead of the reads below.
      if (await anyChangeReportPending(this.db)) await advanceChangeReports(this.db);
      if (Date.now() - this.lastPrune > 60_000) {
        this.lastPrune = Date.now();
        await pruneRedirectFlows(this.db, new Date(Date.now() - FLOWS_KEEP_MS));
      }
    } catch (e) {
      console.error("change reports: step failed:", e instanceof Error ? e.message : e);
    } finally {
      this.running = false;
    }
  }
}

const reporters = new WeakMap<Db, ChangeReporter>();

/** The reporter of this process for `db`, started on first use (ingest calls it with every batch). */
export function changeReporterFor(db: Db): ChangeReporter {
  let r = reporters.get(db);
  if (!r) {
    r = new ChangeReporter(db);
    reporters.set(db, r);
    r.start();
  }
  return r;
}
