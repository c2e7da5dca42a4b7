import {
  newId,
  TideError,
  type AgentObservationsIn,
  type AgentObservationsReply,
  type Finding,
  type Observation,
} from "@tide/contracts";
import {
  findingSelect,
  insertSamples,
  newestSampleAt,
  pruneSamples,
  samplesBetween,
  type Db,
  type FindingEventType,
  type FindingRow,
  type FindingSeverity,
  type Prisma,
} from "@tide/db";
import { diagnose, resolve } from "@tide/diagnostics";
import type { HostCaller } from "../auth/host-tokens.service";
import { desiredStateFor } from "./desired-state.service";

/**
 * Samples evaluated after each batch, in seconds: diagnostics' rates use a 60 s window, and two
 * minutes lets resolve() see the whole previous window as well.
 */
export const EVALUATION_WINDOW_S = 120;

/** Who writes automatic finding history. */
const DIAGNOSTICS = "diagnostics";

export interface IngestOptions {
  /** Minutes of samples kept per host (TIDE_OBSERVATION_RETENTION_MINUTES, default 60). */
  retentionMinutes: number;
}

export interface IngestResult extends AgentObservationsReply {
  pruned: number;
  opened: number;
  resolved: number;
}

type Tx = Prisma.TransactionClient;

/** A stored finding as diagnostics' contract type (acknowledged stays acknowledged). */
export function rowToFinding(r: FindingRow): Finding {
  return {
    id: r.id,
    fingerprint: r.fingerprint,
    kind: r.kind as Finding["kind"],
    incident: r.incident,
    severity: r.severity,
    status: r.status,
    title: r.title,
    subject: r.subject as Finding["subject"],
    evidence: r.evidence as Finding["evidence"],
    explanation: r.explanation,
    remedy: r.remedy as Finding["remedy"],
    firstSeenAt: r.firstSeenAt.toISOString(),
    lastSeenAt: r.lastSeenAt.toISOString(),
    resolvedAt: r.resolvedAt?.toISOString() ?? null,
  };
}

async function event(
  tx: Tx,
  findingId: string,
  type: FindingEventType,
  at: string,
  extra: { from?: FindingSeverity; to?: FindingSeverity; detail?: string } = {},
) {
  await tx.findingEvent.create({
    data: {
      findingId,
      type,
      at: new Date(at),
      by: DIAGNOSTICS,
      fromSeverity: extra.from ?? null,
      toSeverity: extra.to ?? null,
      detail: extra.detail ?? "",
    },
  });
}

function findingContent(f: Finding) {
  return {
    kind: f.kind,
    incident: f.incident,
    severity: f.severity,
    title: f.title,
    subject: f.subject as Prisma.InputJsonValue,
    evidence: f.evidence as Prisma.InputJsonValue,
    explanation: f.explanation,
    remedy: f.remedy as Prisma.InputJsonValue,
    lastSeenAt: new Date(f.lastSeenAt),
  };
}

/**
 * Re-run diagnostics over the host's last EVALUATION_WINDOW_S of samples and bring its findings up
 * to date: new ones open, known ones refresh (severity changes are recorded), vanished ones resolve
 * when the window could evaluate them, resolved ones that come back reopen. One transaction under a
 * per-host advisory lock, so two batches of one host never race on the same findings.
 */
export async function evaluateHost(db: Db, hostId: string): Promise<{ opened: number; resolved: number }> {
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`findings:${hostId}`}))`;
    const newest = await newestSampleAt(tx, hostId);
    if (!newest) return { opened: 0, resolved: 0 };
    const rows = await samplesBetween(tx, hostId, new Date(newest.getTime() - EVALUATION_WINDOW_S * 1000));
    const window = rows.map((r) => r.payload as unknown as Observation);
    const stored = await tx.finding.findMany({ where: { hostId }, select: findingSelect });
    const byId = new Map(stored.map((r) => [r.id, r]));
    const previous = stored.filter((r) => r.status !== "resolved").map(rowToFinding);
    const result = resolve(previous, diagnose(window), window);

    let opened = 0;
    for (const f of result.open) {
      const row = byId.get(f.id);
      if (!row) {
        await tx.finding.create({
          data: {
            id: f.id,
            fingerprint: f.fingerprint,
            hostId,
            status: "open",
            firstSeenAt: new Date(f.firstSeenAt),
            ...findingContent(f),
          },
        });
        await event(tx, f.id, "opened", f.lastSeenAt, { to: f.severity });
        opened++;
      } else if (row.status === "resolved") {
        await tx.finding.update({
          where: { id: f.id },
          data: {
            status: "open",
            resolvedAt: null,
            acknowledgedBy: null,
            acknowledgedAt: null,
            ...findingContent(f),
          },
        });
        await event(tx, f.id, "reopened", f.lastSeenAt, { from: row.severity, to: f.severity });
        opened++;
      } else {
        await tx.finding.update({ where: { id: f.id }, data: findingContent(f) });
        if (row.severity !== f.severity) {
          await event(tx, f.id, "severity_changed", f.lastSeenAt, { from: row.severity, to: f.severity });
        }
      }
    }
    for (const { finding, reason } of result.resolved) {
      const at = finding.resolvedAt ?? newest.toISOString();
      await tx.finding.update({
        where: { id: finding.id },
        data: { status: "resolved", resolvedAt: new Date(at), acknowledgedBy: null, acknowledgedAt: null },
      });
      await event(tx, finding.id, "resolved", at, { from: finding.severity, detail: reason });
    }
    return { opened, resolved: result.resolved.length };
  });
}

/**
 * Tell live console pages (LISTEN tide_observations, see live/host-live.ts) that the host has new
 * samples and findings. Sent after the ingest transaction and the evaluation committed, so a
 * listener that reads on notification sees them. Best effort: a failed notify never fails ingest.
 */
async function notifySamples(db: Db, hostId: string): Promise<void> {
  try {
    await db.$executeRaw`SELECT pg_notify('tide_observations', ${hostId})`;
  } catch (e) {
    console.error("pg_notify tide_observations failed:", e);
  }
}

/**
 * Store a batch from an agent, prune old samples, then evaluate findings.
 *
 * Retention: only the newest `retentionMinutes` of samples per host are kept, measured from the
 * host's newest sample (agent clock, so a skewed or replaying agent never loses its recent window).
 * Pruning is one range DELETE per batch over the (host_id, sampled_at DESC) index, not per row and
 * not a trigger: at one sample a second and 60-sample batches it removes about 60 rows a minute per
 * host, adds one statement to an ingest that already writes, and needs no scheduler. A host holds
 * at most retention + one batch of rows. Samples of the batch that are already older than the
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
  const retentionMs = options.retentionMinutes * 60_000;
  const { accepted, pruned } = await db.$transaction(async (tx) => {
    const stored = await newestSampleAt(tx, host.hostId);
    const batchNewest = Date.parse(input.observations[input.observations.length - 1]!.sampledAt);
    const horizon = new Date(Math.max(stored?.getTime() ?? 0, batchNewest) - retentionMs);
    const fresh = input.observations.filter((o) => Date.parse(o.sampledAt) >= horizon.getTime());
    const accepted = await insertSamples(
      tx,
      host.hostId,
      fresh.map((o) => ({
        id: newId("observation"),
        sampledAt: new Date(o.sampledAt),
        payload: o as unknown as Prisma.InputJsonValue,
      })),
    );
    const pruned = await pruneSamples(tx, host.hostId, horizon);
    const newest = input.observations[input.observations.length - 1]!;
    await tx.host.update({
      where: { id: host.hostId },
      data: {
        lastSeenAt: new Date(),
        dataPlane: input.dataPlane as Prisma.InputJsonValue,
        agentVersion: newest.agentVersion,
        kernelRelease: newest.kernelRelease,
      },
    });
    return { accepted, pruned };
  });
  const { opened, resolved } = await evaluateHost(db, host.hostId);
  await notifySamples(db, host.hostId);
  const desired = await desiredStateFor(db, host.hostId);
  return { accepted, desiredRevision: desired.revision, pruned, opened, resolved };
}
