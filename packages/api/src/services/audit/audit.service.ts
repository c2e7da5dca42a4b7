import { type AuditListInput, newId, SESSION_ACTION_PREFIX } from "@tide/contracts";
import { targetIdsMatching, targetNames } from "./audit-targets";
import { Prisma, type ActorKind, type AuditOutcome, type Db } from "@tide/db";

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
  /** "refused" for an attempt the API turned down; done when absent. */
  outcome?: AuditOutcome;
  /** Why it was refused, in the API's words (with outcome "refused"). */
  refusal?: string;
}

/** Most actor labels offered as a filter list; past that the console's actor filter is typed. */
const FACET_ACTORS_MAX = 200;

export interface AuditEntry {
  id: string;
  actor: string;
  actorKind: ActorKind;
  action: string;
  outcome: AuditOutcome;
  refusal: string;
  targetType: string;
  targetId: string;
  targetName: string | null;
  poolId: string | null;
  poolName: string | null;
  before: unknown;
  after: unknown;
  reason: string;
  tableVersionId: string | null;
  tableVersion: number | null;
  createdAt: string;
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
      outcome: e.outcome ?? "done",
      refusal: e.refusal ?? "",
    },
  });
  return id;
}

/**
 * Record a refused attempt (outside the refused work's transaction, which rolled back). A proxy's
 * pool is looked up so the attempt shows in that pool's audit log too.
 */
export async function recordRefusal(db: Db, e: AuditInput): Promise<void> {
  let poolId = e.poolId ?? null;
  if (!poolId && e.targetType === "proxy" && e.targetId) {
    const proxy = await db.proxy.findUnique({ where: { id: e.targetId }, select: { poolId: true } });
    poolId = proxy?.poolId ?? null;
  }
  if (!poolId && e.targetType === "pool" && e.targetId) poolId = e.targetId;
  await recordAudit(db, { ...e, poolId });
}

/** Newest first, keyset-paged by (createdAt, id), filtered on the server; targets come with names. */
export async function listAudit(
  db: Db,
  input: AuditListInput,
): Promise<{ items: AuditEntry[]; nextCursor: string | null }> {
  const and: Prisma.AuditEventWhereInput[] = [];
  if (input.poolId) and.push({ poolId: input.poolId });
  if (input.targetId) and.push({ targetId: input.targetId });
  if (input.action) and.push({ action: input.action });
  if (input.actor) and.push({ actorLabel: { contains: input.actor, mode: "insensitive" } });
  if (input.outcome) and.push({ outcome: input.outcome });
  if (input.from || input.to) {
    and.push({
      createdAt: {
        ...(input.from ? { gte: new Date(input.from) } : {}),
        ...(input.to ? { lt: new Date(input.to) } : {}),
      },
    });
  }
  if (input.sessions === "hide" && !input.action?.startsWith(SESSION_ACTION_PREFIX)) {
    and.push({ NOT: { action: { startsWith: SESSION_ACTION_PREFIX } } });
  }
  if (input.target) and.push({ targetId: { in: await targetIdsMatching(db, input.target) } });
  const rows = await db.auditEvent.findMany({
    where: { AND: and },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: input.limit + 1,
    ...(input.cursor ? { cursor: { id: input.cursor }, skip: 1 } : {}),
  });
  const page = rows.slice(0, input.limit);
  const names = await targetNames(db, page);
  return {
    items: page.map((r) => ({
      id: r.id,
      actor: r.actorLabel,
      actorKind: r.actorKind,
      action: r.action,
      outcome: r.outcome,
      refusal: r.refusal,
      targetType: r.targetType,
      targetId: r.targetId,
      targetName: names.target(r),
      poolId: r.poolId,
      poolName: r.poolId ? (names.pools.get(r.poolId) ?? null) : null,
      before: r.before,
      after: r.after,
      reason: r.reason,
      tableVersionId: r.tableVersionId,
      tableVersion: r.tableVersionId ? (names.versions.get(r.tableVersionId) ?? null) : null,
      createdAt: r.createdAt.toISOString(),
    })),
    nextCursor: rows.length > input.limit ? (page[page.length - 1]?.id ?? null) : null,
  };
}

/** Every action and actor in the log, for the console's filter lists (actors capped: a long tail is typed). */
export async function auditFacets(db: Db): Promise<{ actions: string[]; actors: string[] }> {
  const [actions, actors] = await Promise.all([
    db.auditEvent.findMany({ distinct: ["action"], select: { action: true }, orderBy: { action: "asc" } }),
    db.auditEvent.findMany({
      distinct: ["actorLabel"],
      select: { actorLabel: true },
      orderBy: { actorLabel: "asc" },
      take: FACET_ACTORS_MAX,
    }),
  ]);
  return { actions: actions.map((a) => a.action), actors: actors.map((a) => a.actorLabel) };
}
