import { newId, TideError, type AgentObservationsIn, type AgentObservationsReply } from "@tide/contracts";
import { storeBatch, type Db, type Prisma } from "@tide/db";
import type { HostCaller } from "../auth/host-tokens.service";
import { desiredStateFor } from "./desired-state.service";
import { findingEvaluatorFor } from "./finding-evaluator";

/** Channel of live host notifications (live/host-live.ts); payload: the host record id. */
const LIVE_CHANNEL = "tide_observations";

export interface IngestOptions {
  /** Minutes of samples kept per host (TIDE_OBSERVATION_RETENTION_MINUTES, default 60). */
  retentionMinutes: number;
}

export interface IngestResult extends AgentObservationsReply {
  pruned: number;
}

/**
 * Store a batch from an agent and prune old samples; findings are evaluated afterwards, off the
 * request path (finding-evaluator.ts): the reply only says what was stored, and findings trail the
 * samples by the evaluator's lag.
 *
 * One SQL statement (storeBatch in @tide/db): insert, prune and mark the host seen in one round
 * trip and one implicit transaction, so a busy pool never fails ingest with "Unable to start a
 * transaction". Live pages are told about the new samples right after it (charts); the evaluator
 * notifies again when findings changed.
 *
 * Retention: only the newest `retentionMinutes` of samples per host are kept, measured from the
 * host's newest sample (agent clock, so a skewed or replaying agent never loses its recent window).
 * Pruning is one range DELETE per batch over the (host_id, sampled_at DESC) index, not per row and
 * not a trigger: at one sample a second and 60-sample batches it removes about 60 rows a minute per
 * host, adds one statement part to an ingest that already writes, and needs no scheduler. A host
 * holds at most retention + one batch of rows. Samples of the batch that are already older than the
 * retention horizon are not stored (they would be pruned at once) and are not counted as accepted.
 */
export async function ingestObservations(
  db: Db,
  host: HostCaller,
  input: AgentObservationsIn,
  options: IngestOptions,
): Promise<IngestResult> {
  const foreign = input.observations.find((o) => o.hostId !== host.hostname);
  if (foreign) {
    throw new TideError(
      "forbidden",
      `This token was issued for host ${host.hostname}; the batch holds samples of ${foreign.hostId}.`,
    );
  }
  const newest = input.observations[input.observations.length - 1]!;
  const { accepted, pruned } = await storeBatch(
    db,
    host.hostId,
    input.observations.map((o) => ({
      id: newId("observation"),
      sampledAt: new Date(o.sampledAt),
      payload: o as unknown as Prisma.InputJsonValue,
    })),
    options.retentionMinutes * 60_000,
    {
      dataPlane: input.dataPlane as Prisma.InputJsonValue,
      agentVersion: newest.agentVersion,
      kernelRelease: newest.kernelRelease,
    },
  );
  // Also for a batch of duplicates: it retries an evaluation that failed, and costs one coalesced run.
  findingEvaluatorFor(db).schedule(host.hostId);
  if (accepted > 0) await notifySamples(db, host.hostId);
  const desired = await desiredStateFor(db, host.hostId);
  return { accepted, desiredRevision: desired.revision, pruned };
}

/** Best effort: a failed notify never fails ingest (pages catch up on the next one). */
async function notifySamples(db: Db, hostId: string): Promise<void> {
  try {
    await db.$executeRaw`SELECT pg_notify(${LIVE_CHANNEL}, ${hostId})`;
  } catch (e) {
    console.error("pg_notify tide_observations failed:", e);
  }
}
