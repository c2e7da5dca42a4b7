import {
  newId,
  SAMPLE_MAX_FUTURE_MS,
  TideError,
  type AgentObservationsIn,
  type AgentObservationsReply,
  type SampleRefusal,
} from "@tide/contracts";
import { storeBatch, type Db, type Prisma } from "@tide/db";
import type { HostCaller } from "../../auth/actor";
import { throwIfClientGone, type Context } from "../../context";
import { ingestEnv } from "../../env";
import { recordDirectorSync } from "./director-sync.service";
import { desiredRevisionCacheFor } from "../fleet/desired-revision-cache";
import { windowCacheFor } from "../findings/host-evaluation";
import { findingEvaluatorFor } from "../findings/evaluation-scheduler";
import { ingestPacer, type IngestPacer } from "./ingest-pacing";
import { recordTraffic } from "./proxy-traffic.service";
import { changeReporterFor, recordRedirectFlows } from "../transitions/change-report.service";
import { hashMigrationFinisherFor } from "../tables/hash-migration.service";
import { telemetryCompactorFor } from "./telemetry-compactor";
import { OBSERVATIONS_CHANNEL } from "../../live/channels";

export interface IngestOptions {
  /** Minutes of samples kept per host (TIDE_OBSERVATION_RETENTION_MINUTES, default 60). */
  retentionMinutes: number;
  /** The console's clock (tests pin it; default: now). */
  now?: Date;
  /** Who decides the batch interval asked of the agent (ingest-pacing.ts; default: this process's). */
  pacer?: IngestPacer;
  /**
   * The JSON text `input` was parsed and validated from (the request body): its observations are
   * stored as that text (storeBatch's SampleSource) rather than serialized again.
   */
  sourceJson?: string;
}

type Refused = NonNullable<AgentObservationsReply["refused"]>;

export interface IngestResult extends AgentObservationsReply {
  pruned: number;
  /** The host is a registered director: its data plane's served tables go to director sync. */
  director: boolean;
}

/**
 * Store a batch from an agent and prune old samples; findings are evaluated afterwards, off the
 * request path (evaluation-scheduler.ts): the reply only says what was stored, and findings trail the
 * samples by the evaluator's lag.
 *
 * One SQL statement (storeBatch in @tide/db): insert, prune, mark the host seen and NOTIFY live
 * pages of the new samples (charts) in one round trip and one implicit transaction, so a busy pool
 * never fails ingest with "Unable to start a transaction"; the evaluator notifies again when
 * findings changed. (The NOTIFY fails the statement only when PostgreSQL's notification queue is
 * full, i.e. a listening console stopped reading for a long time: the agent then keeps its batch
 * and retries.)
 *
 * The reply asks the agent to batch (batchIntervalMs, ingest-pacing.ts) once this process serves
 * more agents than it is sized to take one sample per request from.
 *
 * Window (console clock, never the agent's): a sample is stored when it is at most the retention
 * (`retentionMinutes`) old and at most SAMPLE_MAX_FUTURE_MS (5 min) ahead of the console. Every other
 * sample is refused, each with its reason in the reply (`refused`: in_future, too_old, or duplicate
 * when that instant is already stored), so `accepted: 0` for a non-empty batch always says why. A
 * sample dated 2099 is refused: it can neither prune the host's current samples nor shadow later
 * ones (retention used to count back from the host's newest sample, so one such sample wiped the
 * host and every later batch was "too old").
 *
 * Pruning is one range DELETE per batch over the (host_id, sampled_at DESC) index, not per row and
 * not a trigger: at one sample a second and 60-sample batches it removes about 60 rows a minute per
 * host, adds one statement part to an ingest that already writes, and needs no scheduler. A host
 * holds at most retention + SAMPLE_MAX_FUTURE_MS of rows; samples outside the window stored before
 * this rule are deleted by the same statement.
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
  const now = options.now ?? new Date();
  const retentionMs = options.retentionMinutes * 60_000;
  const refused: Refused = [];
  const refuse = (sampledAt: string, reason: SampleRefusal, detail: string) =>
    refused.push({ sampledAt, reason, detail });
  // Positions in input.observations of the samples kept (the source text's order).
  const at: number[] = [];
  const inWindow = input.observations.filter((o, i) => {
    const t = Date.parse(o.sampledAt);
    if (t > now.getTime() + SAMPLE_MAX_FUTURE_MS) {
      refuse(
        o.sampledAt,
        "in_future",
        `dated more than ${SAMPLE_MAX_FUTURE_MS / 60_000} min after the console's clock (${now.toISOString()}): check the host's clock`,
      );
      return false;
    }
    if (t < now.getTime() - retentionMs) {
      refuse(
        o.sampledAt,
        "too_old",
        `older than the retention of ${options.retentionMinutes} min before the console's clock (${now.toISOString()})`,
      );
      return false;
    }
    at.push(i);
    return true;
  });
  const rows = inWindow.map((o) => ({
    id: newId("observation"),
    sampledAt: new Date(o.sampledAt),
    payload: o as unknown as Prisma.InputJsonValue,
  }));
  const { accepted, storedIds, pruned } = await storeBatch(
    db,
    host.hostId,
    rows,
    retentionMs,
    {
      dataPlane: input.dataPlane as Prisma.InputJsonValue,
      agentVersion: newest.agentVersion,
      kernelRelease: newest.kernelRelease,
      ...(input.dropped ? { samplesDropped: input.dropped } : {}),
    },
    { now, maxFutureMs: SAMPLE_MAX_FUTURE_MS },
    // Live pages are told in the same statement (charts); the evaluator notifies again when
    // findings changed.
    { channel: OBSERVATIONS_CHANNEL, payload: host.hostId },
    options.sourceJson === undefined ? undefined : { json: options.sourceJson, at },
  );
  const stored = new Set(storedIds);
  inWindow.forEach((o, i) => {
    if (!stored.has(rows[i]!.id))
      refuse(o.sampledAt, "duplicate", "a sample for this instant is already stored");
  });
  // The evaluator uses these parsed samples instead of reading them back (evaluation-window-cache.ts).
  windowCacheFor(db).add(
    host.hostId,
    inWindow.filter((_, i) => stored.has(rows[i]!.id)),
  );
  refused.sort((a, b) => Date.parse(a.sampledAt) - Date.parse(b.sampledAt));
  // Also for a batch of duplicates: it retries an evaluation that failed, and costs one coalesced run.
  findingEvaluatorFor(db).schedule(host.hostId);
  // Started by the first batch a process receives; compacts and prunes every host in the background.
  telemetryCompactorFor(db);
  // Likewise: finishes hash-field migrations once no flow uses the old fields (hash-migration.service.ts).
  hashMigrationFinisherFor(db);
  // Likewise: ends change windows and writes their reports (change-report.service.ts).
  changeReporterFor(db);
  if (accepted > 0) {
    await recordTraffic(db, host, newest, input.dataPlane);
    await recordRedirectFlows(db, host.hostId, input.dataPlane);
  }
  // Revision and director-ness from memory until a desired state changes (desired-revision-cache.ts).
  const desired = await desiredRevisionCacheFor(db).get(host.hostId, host.hostname);
  const batchIntervalMs = (options.pacer ?? ingestPacer()).batchArrived(host.hostId);
  return {
    accepted,
    desiredRevision: desired.revision,
    pruned,
    director: desired.director,
    ...(refused.length > 0 ? { refused } : {}),
    ...(batchIntervalMs > 0 ? { batchIntervalMs } : {}),
  };
}

/**
 * POST /agent/observations, what the route does with a valid batch (agent.router.ts's procedure,
 * and http/ingest-route.ts's direct path for the same route): store it, update director sync when
 * the host is a director, answer what was stored.
 */
export async function acceptObservations(
  ctx: Pick<Context, "db" | "signal"> & { host: HostCaller },
  input: AgentObservationsIn,
  /** The JSON text `input` was parsed from, when the caller has it (IngestOptions.sourceJson). */
  sourceJson?: string,
): Promise<AgentObservationsReply> {
  // Parsing and validating a big batch takes a while: an agent that timed out meanwhile sends it
  // again, so this copy is not stored.
  throwIfClientGone(ctx, "its batch was stored");
  const r = await ingestObservations(ctx.db, ctx.host, input, {
    retentionMinutes: ingestEnv().TIDE_OBSERVATION_RETENTION_MINUTES,
    ...(sourceJson === undefined ? {} : { sourceJson }),
  });
  // Only a director's batches change director sync (it reads the director first and stops).
  if (r.director) await recordDirectorSync(ctx.db, ctx.host.hostname, input.dataPlane);
  return {
    accepted: r.accepted,
    desiredRevision: r.desiredRevision,
    ...(r.refused ? { refused: r.refused } : {}),
    ...(r.batchIntervalMs ? { batchIntervalMs: r.batchIntervalMs } : {}),
  };
}
