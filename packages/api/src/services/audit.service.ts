import { newId } from "@tide/contracts";
import { Prisma, type ActorKind, type Db } from "@tide/db";

type Tx = Prisma.TransactionClient | Db;

export interface AuditInput {
  actorKind: ActorKind;
  actorId: string | null;
  actorLabel: string;
  action: string;
  targetType: string;
  targetId: string;
  poolId?: string | null;
  before?: unknown;
  after?: unknown;
  reason?: string;
  tableVersionId?: string | null;
}

function json(v: unknown): Prisma.InputJsonValue | typeof Prisma.JsonNull {
  return v === undefined || v === null ? Prisma.JsonNull : (v as Prisma.InputJsonValue);
}

/** Append one audit event (who, what, before, after, reason). Audit events are never updated. */
export async function recordAudit(tx: Tx, e: AuditInput): Promise<string> {
  const id = newId("audit");
  await tx.auditEvent.create({
    data: {
      id,
      actorKind: e.actorKind,
      actorId: e.actorId,
      actorLabel: e.actorLabel,
      action: e.action,
      targetType: e.targetType,
      targetId: e.targetId,
      poolId: e.poolId ?? null,
      before: json(e.before),
      after: json(e.after),
      reason: e.reason ?? "",
      tableVersionId: e.tableVersionId ?? null,
    },
  });
  return id;
}

export interface AuditEntry {
  id: string;
  actor: string;
  actorKind: ActorKind;
  action: string;
  targetType: string;
  targetId: string;
  poolId: string | null;
  before: unknown;
  after: unknown;
  reason: string;
  tableVersionId: string | null;
  createdAt: string;
}

/** Newest first, keyset-paged by (createdAt, id). */
export async function listAudit(
  db: Db,
  input: {
    poolId?: string | undefined;
    targetId?: string | undefined;
    limit: number;
    cursor?: string | undefined;
  },
): Promise<{ items: AuditEntry[]; nextCursor: string | null }> {
  const where: Prisma.AuditEventWhereInput = {};
  if (input.poolId) where.poolId = input.poolId;
  if (input.targetId) where.targetId = input.targetId;
  const rows = await db.auditEvent.findMany({
    where,
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: input.limit + 1,
    ...(input.cursor ? { cursor: { id: input.cursor }, skip: 1 } : {}),
  });
  const page = rows.slice(0, input.limit);
  return {
    items: page.map((r) => ({
      id: r.id,
      actor: r.actorLabel,
      actorKind: r.actorKind,
      action: r.action,
      targetType: r.targetType,
      targetId: r.targetId,
      poolId: r.poolId,
      before: r.before,
      after: r.after,
      reason: r.reason,
      tableVersionId: r.tableVersionId,
      createdAt: r.createdAt.toISOString(),
    })),
    nextCursor: rows.length > input.limit ? (page[page.length - 1]?.id ?? null) : null,
  };
}
