import { z } from "zod";
import { PoolId } from "./ids";
import { safeText } from "./text";

/** Actions of signing in and out: many and rarely what an audit is looking for, so hidden unless asked. */
export const SESSION_ACTION_PREFIX = "session.";

export const AuditOutcome = z
  .enum(["done", "refused"])
  .describe("done, or refused: the API turned the attempt down (409 conflict, 403 forbidden)");

export const AuditEntry = z
  .object({
    id: z.string(),
    actor: z.string().describe("Who: user email or 'token NAME (email)'"),
    actorKind: z.enum(["user", "token", "system"]),
    action: z.string().describe("What, e.g. proxy.drain"),
    outcome: AuditOutcome,
    refusal: z.string().describe("Why a refused attempt was turned down; empty when done"),
    targetType: z.string().describe("pool, proxy, director, user, token, host, host_token, finding"),
    targetId: z.string(),
    targetName: z
      .string()
      .nullable()
      .describe("The target's name (pool name, host name, user email) when it is known"),
    poolId: z.string().nullable(),
    poolName: z.string().nullable().describe("The pool's name when the event belongs to one"),
    before: z.unknown(),
    after: z.unknown(),
    reason: z.string(),
    tableVersionId: z.string().nullable(),
    tableVersion: z.number().int().nullable().describe("The table version number the event wrote"),
    createdAt: z.string().datetime(),
  })
  .describe("An audit event");

/** Text filters are short: a name, an email, an id. */
const filterText = () => safeText().trim().min(1).max(200);

export const AuditListInput = z
  .object({
    poolId: PoolId.optional().describe("Only events of this pool"),
    targetId: filterText().optional().describe("Only events on this exact target id"),
    target: filterText()
      .optional()
      .describe("Only events whose target's id is this, or whose name (pool, host, email) contains it"),
    action: filterText().optional().describe("Only this action, e.g. proxy.drain"),
    actor: filterText().optional().describe("Only actors whose label contains this (an email, a token name)"),
    outcome: AuditOutcome.optional().describe("Only done or only refused attempts"),
    from: z
      .string()
      .datetime({ offset: true })
      .optional()
      .describe("Events at or after this time (ISO 8601)"),
    to: z.string().datetime({ offset: true }).optional().describe("Events before this time (ISO 8601)"),
    sessions: z
      .enum(["hide", "show"])
      .default("hide")
      .describe("Sign-ins and sign-outs (session.*) are hidden unless 'show'"),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: safeText().max(200).optional(),
  })
  .refine((v) => !v.from || !v.to || Date.parse(v.from) < Date.parse(v.to), {
    message: "The start of the time range must be before its end.",
    path: ["from"],
  });
export type AuditListInput = z.infer<typeof AuditListInput>;

export const AuditFacets = z
  .object({
    actions: z.array(z.string()).describe("Every action in the log, sorted"),
    actors: z.array(z.string()).describe("Every actor label in the log, sorted"),
  })
  .describe("What the audit log can be filtered by");
