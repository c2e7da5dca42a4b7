import type { DesiredState } from "@tide/contracts";
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
 * (services/pmtu-targets.service.ts).
 */
async function desiredBody(
  db: Db,
  hostname: string,
  pmtuTargets: DesiredState["pmtuTargets"],
): Promise<Omit<DesiredState, "revision">> {
  const director = await db.director.findUnique({
    where: { hostname },
    select: { pools: { select: { id: true, name: true }, orderBy: { name: "asc" } } },
  });
  const directorTables: DesiredState["directorTables"] = [];
  for (const pool of director?.pools ?? []) {
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
