import { poolHealthCheck, REDIRECT_DEFAULT_GUE_PORT, type DesiredState } from "@tide/contracts";
import type { Db } from "@tide/db";
import { createHash } from "node:crypto";

/** Agent sampling defaults served in every desired state. */
export const DESIRED_SAMPLE_INTERVAL_MS = 1000;
/** One minute of samples per batch at the default interval. */
export const DESIRED_BATCH_MAX_OBSERVATIONS = 60;

/**
 * What the console wants a host to do. Director tables come from the Director row whose hostname
 * equals the host name (directors are registered by hostname): the current table version of each
 * of its pools. A host that is no director gets none. PMTU targets are the host's, set by operators
 * (services/fleet/pmtu-targets.service.ts). A director host also checks the proxies in rotation of each
 * of its pools whose health checks are on (services/health/proxy-health.service.ts).
 */
async function desiredBody(
  db: Db,
  hostname: string,
  pmtuTargets: DesiredState["pmtuTargets"],
): Promise<Omit<DesiredState, "revision">> {
  const director = await db.director.findUnique({
    where: { hostname },
    select: {
      pools: {
        select: {
          id: true,
          name: true,
          healthCheck: true,
          proxies: {
            where: { state: { not: "inactive" } },
            select: { id: true, address: true, hostname: true },
            orderBy: { slot: "asc" },
          },
        },
        orderBy: { name: "asc" },
      },
    },
  });
  const directorTables: DesiredState["directorTables"] = [];
  const healthChecks: DesiredState["healthChecks"] = [];
  for (const pool of director?.pools ?? []) {
    const check = poolHealthCheck(pool.healthCheck);
    if (check.enabled && pool.proxies.length > 0)
      healthChecks.push({
        poolId: pool.id,
        pool: pool.name,
        guePort: REDIRECT_DEFAULT_GUE_PORT,
        check,
        proxies: pool.proxies.map((p) => ({ proxyId: p.id, address: p.address, hostname: p.hostname })),
      });
    const v = await db.tableVersion.findFirst({
      where: { poolId: pool.id },
      orderBy: { version: "desc" },
      select: { id: true, version: true, contentHash: true },
    });
    if (!v) continue;
    directorTables.push({
      poolId: pool.id,
      poolName: pool.name,
      tableVersionId: v.id,
      contentHash: v.contentHash,
      downloadPath: `/api/v1/pools/${pool.id}/tables/${v.version}/glbd`,
    });
  }
  return {
    sampleIntervalMs: DESIRED_SAMPLE_INTERVAL_MS,
    batchMaxObservations: DESIRED_BATCH_MAX_OBSERVATIONS,
    pmtuTargets,
    directorTables,
    healthChecks,
  };
}

/**
 * The host's desired state with its revision. The revision is bumped (once, by a compare-and-set on
 * the stored hash) whenever the content differs from what was last served.
 */
export async function desiredStateFor(db: Db, hostId: string): Promise<DesiredState> {
  const host = await db.host.findUniqueOrThrow({
    where: { id: hostId },
    select: { name: true, desiredRevision: true, desiredHash: true, pmtuTargets: true },
  });
  const body = await desiredBody(db, host.name, host.pmtuTargets as DesiredState["pmtuTargets"]);
  const hash = createHash("sha256").update(JSON.stringify(body)).digest("hex");
  if (hash === host.desiredHash) return { revision: host.desiredRevision, ...body };
  await db.host.updateMany({
    where: { id: hostId, desiredHash: host.desiredHash },
    data: { desiredHash: hash, desiredRevision: { increment: 1 } },
  });
  const after = await db.host.findUniqueOrThrow({ where: { id: hostId }, select: { desiredRevision: true } });
  return { revision: after.desiredRevision, ...body };
}

/** Longest an agent may wait on /agent/desired for a change, ms (under common proxy idle timeouts). */
export const DESIRED_WAIT_MAX_MS = 25_000;

/** Long polls in flight: each function answers its agent now with what it has. */
const waiting = new Set<() => void>();
let shutdownHooked = false;
/** Set once the process is stopping: later long polls answer at once instead of waiting. */
let stopping = false;

/**
 * A stopping console answers every long poll at once: `next start` closes its server on SIGTERM /
 * SIGINT and waits for requests in flight, so a waiting agent would hold a restart up for the whole
 * wait. Hooked only beside the server's own handler (a listener of ours alone would keep the signal
 * from ending the process).
 */
function answerWaitersOnShutdown(): void {
  if (shutdownHooked) return;
  shutdownHooked = true;
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    if (process.listenerCount(signal) > 0)
      process.on(signal, () => {
        stopping = true;
        [...waiting].forEach((answer) => answer());
      });
  }
}

/**
 * Long poll: the host's desired state as soon as its revision differs from `after`, or the current
 * one after `waitMs`. Woken by the database's notifications on every change a desired state is made
 * of (live/host-live.ts listenForDesiredChanges), so a drain reaches the directors' agents at commit,
 * not at their next batch. Re-reads once per notification burst; never more than one read at a time.
 */
export async function waitForDesired(
  db: Db,
  hostId: string,
  after: number,
  waitMs: number,
  listen: (onChange: () => void) => Promise<() => void>,
): Promise<DesiredState> {
  answerWaitersOnShutdown();
  const first = await desiredStateFor(db, hostId);
  // A poll that reuses a kept-alive connection after shutdown began must not hold the stop up either.
  if (first.revision !== after || waitMs <= 0 || stopping) return first;
  return new Promise<DesiredState>((resolve) => {
    let latest = first;
    let done = false;
    let reading = false;
    let again = false;
    let unsubscribe: (() => void) | null = null;
    const finish = (d: DesiredState) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      waiting.delete(answerNow);
      unsubscribe?.();
      resolve(d);
    };
    const answerNow = () => finish(latest);
    waiting.add(answerNow);
    const reread = async () => {
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        do {
          again = false;
          latest = await desiredStateFor(db, hostId);
          if (latest.revision !== after) return finish(latest);
        } while (again && !done);
      } catch (e) {
        console.error(`desired state of ${hostId}: re-read failed`, e);
      } finally {
        reading = false;
      }
    };
    const timer = setTimeout(() => finish(latest), Math.min(waitMs, DESIRED_WAIT_MAX_MS));
    listen(() => void reread()).then(
      (u) => {
        if (done) u();
        else {
          unsubscribe = u;
          // A change between the first read and the subscription would otherwise wait for the timeout.
          void reread();
        }
      },
      (e: unknown) => {
        // No LISTEN connection now: answer at once; the agent's next batch still carries the revision.
        console.error("desired state: cannot listen for changes", e);
        finish(latest);
      },
    );
  });
}
