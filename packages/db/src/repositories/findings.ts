import type { FindingEventType, FindingSeverity, FindingStatus, Prisma } from "@prisma/client";
import { rawRows, type SqlClient } from "../client";
import type { FindingRow } from "../selects";

/**
 * The stored findings of `hostIds` whose kind is one of `kinds`, as Prisma's findingSelect gives
 * them (FindingRow), in one statement. The findings evaluator reads those of a whole batch of hosts
 * at once, on the pool's node-postgres (client.ts rawRows) rather than one Prisma query per host.
 * Timestamps are stored as UTC without a zone (Prisma's DateTime) and read back as instants.
 */
export async function findingsOfHosts(
  tx: SqlClient,
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

/**
 * What diagnostics says of a finding, as the evaluator writes it: the content columns, and when it
 * was last seen. `subject`, `evidence` and `remedy` are jsonb.
 */
export interface FindingContentRow {
  id: string;
  kind: string;
  incident: number;
  severity: FindingSeverity;
  title: string;
  subject: unknown;
  evidence: unknown;
  explanation: string;
  remedy: unknown;
  lastSeenAt: Date;
}

/** The content columns of FindingContentRow for jsonb_to_recordset (timestamps as ISO text). */
function contentRecord(r: FindingContentRow) {
  return {
    id: r.id,
    kind: r.kind,
    incident: r.incident,
    severity: r.severity,
    title: r.title,
    subject: r.subject,
    evidence: r.evidence,
    explanation: r.explanation,
    remedy: r.remedy,
    last_seen_at: r.lastSeenAt.toISOString(),
  };
}

/** jsonb_to_recordset's column list for contentRecord's fields. */
const CONTENT_COLUMNS = `id text, kind text, incident int, severity text, title text, subject jsonb,
  evidence jsonb, explanation text, remedy jsonb, last_seen_at text`;

/*
 * The writes of a findings evaluation (host-evaluation.ts), each one statement for a whole batch
 * of hosts, on whatever `tx` is: the evaluator's sqlTransaction on node-postgres, not a Prisma
 * interactive transaction with one query per reopened or resolved finding. Timestamps are stored as
 * UTC without a zone (Prisma's DateTime).
 */

/** Open new findings (status open, never acknowledged). */
export async function insertOpenFindings(
  tx: SqlClient,
  rows: readonly (FindingContentRow & { fingerprint: string; hostId: string; firstSeenAt: Date })[],
): Promise<void> {
  if (rows.length === 0) return;
  await rawRows(
    tx,
    `INSERT INTO findings (id, fingerprint, host_id, kind, incident, severity, status, title, subject,
                           evidence, explanation, remedy, first_seen_at, last_seen_at)
     SELECT x.id, x.fingerprint, x.host_id, x.kind, x.incident, x.severity::"FindingSeverity",
            'open'::"FindingStatus", x.title, x.subject, x.evidence, x.explanation, x.remedy,
            x.first_seen_at::timestamptz AT TIME ZONE 'UTC', x.last_seen_at::timestamptz AT TIME ZONE 'UTC'
       FROM jsonb_to_recordset($1::jsonb) AS x(${CONTENT_COLUMNS}, fingerprint text, host_id text,
            first_seen_at text)`,
    [
      JSON.stringify(
        rows.map((r) => ({
          ...contentRecord(r),
          fingerprint: r.fingerprint,
          host_id: r.hostId,
          first_seen_at: r.firstSeenAt.toISOString(),
        })),
      ),
    ],
  );
}

/**
 * Rewrite the content of findings. With `reopen` they are open again: resolved and acknowledged
 * are cleared. Without, only the content moves (an open finding refreshed at each evaluation).
 */
export async function updateFindingContent(
  tx: SqlClient,
  rows: readonly FindingContentRow[],
  reopen: boolean,
): Promise<void> {
  if (rows.length === 0) return;
  const reopened = reopen
    ? `, status = 'open'::"FindingStatus", resolved_at = NULL, acknowledged_by = NULL, acknowledged_at = NULL`
    : "";
  await rawRows(
    tx,
    `UPDATE findings f
        SET kind = x.kind, incident = x.incident, severity = x.severity::"FindingSeverity",
            title = x.title, subject = x.subject, evidence = x.evidence,
            explanation = x.explanation, remedy = x.remedy,
            last_seen_at = x.last_seen_at::timestamptz AT TIME ZONE 'UTC'${reopened}
       FROM jsonb_to_recordset($1::jsonb) AS x(${CONTENT_COLUMNS})
      WHERE f.id = x.id`,
    [JSON.stringify(rows.map(contentRecord))],
  );
}

/** Resolve findings at their time; an acknowledgement is cleared with it. */
export async function resolveFindings(
  tx: SqlClient,
  rows: readonly { id: string; resolvedAt: Date }[],
): Promise<void> {
  if (rows.length === 0) return;
  await rawRows(
    tx,
    `UPDATE findings f
        SET status = 'resolved'::"FindingStatus",
            resolved_at = x.resolved_at::timestamptz AT TIME ZONE 'UTC',
            acknowledged_by = NULL, acknowledged_at = NULL
       FROM jsonb_to_recordset($1::jsonb) AS x(id text, resolved_at text)
      WHERE f.id = x.id`,
    [JSON.stringify(rows.map((r) => ({ id: r.id, resolved_at: r.resolvedAt.toISOString() })))],
  );
}

/** A finding history entry (finding_events). */
export interface FindingEventInsert {
  findingId: string;
  type: FindingEventType;
  at: Date;
  by: string;
  fromSeverity: FindingSeverity | null;
  toSeverity: FindingSeverity | null;
  detail: string;
}

/** Append history entries, in the order given (their ids follow it). */
export async function insertFindingEvents(
  tx: SqlClient,
  events: readonly FindingEventInsert[],
): Promise<void> {
  if (events.length === 0) return;
  await rawRows(
    tx,
    `INSERT INTO finding_events (finding_id, type, at, by, from_severity, to_severity, detail)
     SELECT e->>'finding_id', (e->>'type')::"FindingEventType",
            (e->>'at')::timestamptz AT TIME ZONE 'UTC', e->>'by',
            (e->>'from_severity')::"FindingSeverity", (e->>'to_severity')::"FindingSeverity",
            e->>'detail'
       FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x(e, n)
      ORDER BY x.n`,
    [
      JSON.stringify(
        events.map((e) => ({
          finding_id: e.findingId,
          type: e.type,
          at: e.at.toISOString(),
          by: e.by,
          from_severity: e.fromSeverity,
          to_severity: e.toSeverity,
          detail: e.detail,
        })),
      ),
    ],
  );
}
