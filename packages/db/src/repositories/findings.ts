import type { FindingSeverity, FindingStatus, Prisma } from "@prisma/client";
import { rawRows, type Db } from "../client";
import type { FindingRow } from "../selects";

/**
 * The stored findings of `hostIds` whose kind is one of `kinds`, as Prisma's findingSelect gives
 * them (FindingRow), in one statement. The findings evaluator reads those of a whole batch of hosts
 * at once, on the pool's node-postgres (client.ts rawRows) rather than one Prisma query per host.
 * Timestamps are stored as UTC without a zone (Prisma's DateTime) and read back as instants.
 */
export async function findingsOfHosts(
  tx: Db | Prisma.TransactionClient,
  hostIds: readonly string[],
  kinds: readonly string[],
): Promise<FindingRow[]> {
  type Row = {
    id: string;
    fingerprint: string;
    host_id: string;
    kind: string;
    incident: number;
    severity: FindingSeverity;
    status: FindingStatus;
    title: string;
    subject: Prisma.JsonValue;
    evidence: Prisma.JsonValue;
    explanation: string;
    remedy: Prisma.JsonValue;
    first_seen_at: Date;
    last_seen_at: Date;
    resolved_at: Date | null;
    acknowledged_by: string | null;
    acknowledged_at: Date | null;
  };
  if (hostIds.length === 0) return [];
  const rows = await rawRows<Row>(
    tx,
    `SELECT id, fingerprint, host_id, kind, incident, severity::text AS severity,
            status::text AS status, title, subject, evidence, explanation, remedy,
            first_seen_at AT TIME ZONE 'UTC' AS first_seen_at,
            last_seen_at AT TIME ZONE 'UTC' AS last_seen_at,
            resolved_at AT TIME ZONE 'UTC' AS resolved_at,
            acknowledged_by,
            acknowledged_at AT TIME ZONE 'UTC' AS acknowledged_at
       FROM findings
      WHERE host_id = ANY($1::text[]) AND kind = ANY($2::text[])`,
    [hostIds, kinds],
  );
  const at = (d: Date | string) => new Date(d);
  return rows.map((r) => ({
    id: r.id,
    fingerprint: r.fingerprint,
    hostId: r.host_id,
    kind: r.kind,
    incident: r.incident,
    severity: r.severity,
    status: r.status,
    title: r.title,
    subject: r.subject,
    evidence: r.evidence,
    explanation: r.explanation,
    remedy: r.remedy,
    firstSeenAt: at(r.first_seen_at),
    lastSeenAt: at(r.last_seen_at),
    resolvedAt: r.resolved_at === null ? null : at(r.resolved_at),
    acknowledgedBy: r.acknowledged_by,
    acknowledgedAt: r.acknowledged_at === null ? null : at(r.acknowledged_at),
  }));
}
