import { Evidence, TideError } from "@tide/contracts";
import { findingSelect, type Db, type FindingRow, type Prisma } from "@tide/db";
import { actorRef, type Actor } from "../../auth/actor";
import { FindingRecord, type FindingDetail } from "../../schemas/findings.schema";
import { recordAudit } from "../audit/audit.service";
import { rowToFinding } from "./host-evaluation";
import { findHost } from "../fleet/host.service";

/**
 * A stored finding as the API shows it, checked against FindingRecord: a row written before rates
 * were finite by construction (an Infinity evidence value, stored by JSON as null) must not fail the
 * reply of everyone who lists findings. A row that does not parse is repaired by leaving out the
 * evidence entries that do not parse; one that still does not parse is left out (null). Either is
 * logged with the row's id and the reasons, which never reach the reply.
 */
function toRecord(r: FindingRow): FindingRecord | null {
  const record = {
    ...rowToFinding(r),
    hostId: r.hostId,
    acknowledgedBy: r.acknowledgedBy,
    acknowledgedAt: r.acknowledgedAt?.toISOString() ?? null,
  };
  const parsed = FindingRecord.safeParse(record);
  if (parsed.success) return parsed.data;
  const evidence = Array.isArray(record.evidence) ? record.evidence : [];
  const kept = evidence.filter((e) => Evidence.safeParse(e).success);
  const repaired = FindingRecord.safeParse({ ...record, evidence: kept });
  console.error(
    `finding ${r.id}: stored row does not parse (${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}); ` +
      (repaired.success
        ? `shown without ${evidence.length - kept.length} unreadable evidence entries`
        : "left out of the reply"),
  );
  return repaired.success ? repaired.data : null;
}

/** Findings, worst and most recent first. */
export async function listFindings(
  db: Db,
  input: {
    status?: FindingRecord["status"] | undefined;
    hostId?: string | undefined;
    kind?: FindingRecord["kind"] | undefined;
    severity?: FindingRecord["severity"] | undefined;
    limit: number;
  },
): Promise<FindingRecord[]> {
  const where: Prisma.FindingWhereInput = {};
  if (input.status) where.status = input.status;
  if (input.kind) where.kind = input.kind;
  if (input.severity) where.severity = input.severity;
  if (input.hostId) where.hostId = (await findHost(db, input.hostId)).id;
  const rows = await db.finding.findMany({
    where,
    select: findingSelect,
    // The severity enum is declared info < warn < critical, so desc is worst first.
    orderBy: [{ severity: "desc" }, { lastSeenAt: "desc" }, { id: "asc" }],
    take: input.limit,
  });
  return rows.map(toRecord).filter((f): f is FindingRecord => f !== null);
}

export async function getFinding(db: Db, findingId: string): Promise<FindingDetail> {
  const row = await db.finding.findUnique({
    where: { id: findingId },
    select: { ...findingSelect, events: { orderBy: { id: "asc" } } },
  });
  if (!row) throw new TideError("not_found", `Finding ${findingId} does not exist.`);
  const record = toRecord(row);
  if (!record) throw new TideError("internal", `Finding ${findingId} cannot be read; see the console's log.`);
  return {
    ...record,
    history: row.events.map((e) => ({
      type: e.type,
      at: e.at.toISOString(),
      by: e.by,
      fromSeverity: e.fromSeverity,
      toSeverity: e.toSeverity,
      detail: e.detail,
    })),
  };
}

/** An operator takes an open finding: it stays acknowledged until it resolves. */
export async function acknowledgeFinding(
  db: Db,
  actor: Actor,
  input: { findingId: string; note?: string | undefined },
): Promise<FindingDetail> {
  const now = new Date();
  await db.$transaction(async (tx) => {
    const row = await tx.finding.findUnique({
      where: { id: input.findingId },
      select: { status: true, hostId: true, acknowledgedBy: true },
    });
    if (!row) throw new TideError("not_found", `Finding ${input.findingId} does not exist.`);
    if (row.status === "resolved") {
      throw new TideError(
        "invalid_transition",
        `Finding ${input.findingId} is resolved; nothing to acknowledge.`,
      );
    }
    if (row.status === "acknowledged") {
      throw new TideError(
        "conflict",
        `Finding ${input.findingId} was already acknowledged by ${row.acknowledgedBy}.`,
      );
    }
    // Compare-and-set on the status: a concurrent resolve wins and this is refused.
    const { count } = await tx.finding.updateMany({
      where: { id: input.findingId, status: "open" },
      data: { status: "acknowledged", acknowledgedBy: actor.label, acknowledgedAt: now },
    });
    if (count !== 1) throw new TideError("conflict", `Finding ${input.findingId} changed; try again.`);
    await tx.findingEvent.create({
      data: {
        findingId: input.findingId,
        type: "acknowledged",
        at: now,
        by: actor.label,
        detail: input.note ?? "",
      },
    });
    await recordAudit(tx, {
      ...actorRef(actor),
      action: "finding.acknowledge",
      targetType: "finding",
      targetId: input.findingId,
      before: { status: "open" },
      after: { status: "acknowledged" },
      reason: input.note ?? "",
    });
  });
  return getFinding(db, input.findingId);
}
