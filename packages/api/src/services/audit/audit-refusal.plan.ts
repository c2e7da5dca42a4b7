import type { Actor } from "../../auth/actor";
import { actorRef } from "../../auth/actor";
import type { AuditInput } from "./audit.service";

/**
 * What the audit log records of a mutating call the API refused (409 conflict, 403 forbidden): who
 * tried which action on which target, and why it was refused. Pure: trpc.ts calls it on the error
 * path of every mutation, so no procedure has to remember to.
 *
 * Nothing of the input is kept but prefixed ids (`prx_…`, `pool_…`) and the operator's `reason`
 * text: a refused user creation or password change must never put a password into the log.
 */

/** tRPC codes that mean "refused": the caller asked for something the rules do not allow. */
export const REFUSED_CODES = new Set(["CONFLICT", "FORBIDDEN"]);

/** Routers whose mutations are not user actions: agents report what they see (with host tokens). */
const NOT_AUDITED_ROUTERS = new Set(["agent"]);

/** Router name -> the audit log's target type (as the services write it). */
const TARGET_TYPE: Record<string, string> = {
  pools: "pool",
  proxies: "proxy",
  directors: "director",
  users: "user",
  tokens: "token",
  hostTokens: "host_token",
  enrollmentTokens: "enrollment_token",
  hosts: "host",
  findings: "finding",
  auth: "user",
};

/** The id field that names a router's own target in its inputs. */
const TARGET_ID_FIELD: Record<string, string> = {
  pool: "poolId",
  proxy: "proxyId",
  director: "directorId",
  user: "userId",
  token: "tokenId",
  host_token: "tokenId",
  enrollment_token: "tokenId",
  host: "hostId",
  finding: "findingId",
};

/** A prefixed id as newId makes them (`prx_4k9x2m7q1c8d0fhj`); anything else in an input is not kept. */
const ID_SHAPE = /^[a-z]{2,5}_[0-9a-z]{1,40}$/;

/** Longest operator reason kept (the procedures' own limit). */
const REASON_MAX = 500;

/** `setHashFields` -> `hash_fields`, `assignPool` -> `assign_pool`: the services' action words. */
export function actionWord(procedure: string): string {
  const word = /^set[A-Z]/.test(procedure) ? procedure.slice(3) : procedure;
  return word.replace(/[A-Z]/g, (c, i: number) => (i === 0 ? c.toLowerCase() : `_${c.toLowerCase()}`));
}

function field(input: unknown, key: string): unknown {
  return typeof input === "object" && input !== null && !Array.isArray(input)
    ? (input as Record<string, unknown>)[key]
    : undefined;
}

function idField(input: unknown, key: string): string | null {
  const v = field(input, key);
  return typeof v === "string" && ID_SHAPE.test(v) ? v : null;
}

/**
 * The audit event for a refused mutation, or null when the call is not one the log records
 * (not a refusal, no signed-in actor, an agent's report).
 */
export function refusedAttempt(call: {
  path: string;
  type: string;
  code: string;
  message: string;
  rawInput: unknown;
  actor: Actor | null;
}): AuditInput | null {
  if (call.type !== "mutation" || !REFUSED_CODES.has(call.code) || !call.actor) return null;
  const dot = call.path.indexOf(".");
  const routerName = dot < 0 ? call.path : call.path.slice(0, dot);
  const procedure = dot < 0 ? call.path : call.path.slice(dot + 1);
  if (NOT_AUDITED_ROUTERS.has(routerName)) return null;
  const targetType = TARGET_TYPE[routerName] ?? routerName;
  // A proxy transition names its action in the input: record it as proxy.drain, like a done one.
  const transition = procedure === "transition" ? field(call.rawInput, "action") : undefined;
  const verb =
    typeof transition === "string" && /^[a-z]{1,20}$/.test(transition) ? transition : actionWord(procedure);
  const ownField = TARGET_ID_FIELD[targetType];
  const targetId =
    (ownField ? idField(call.rawInput, ownField) : null) ??
    idField(call.rawInput, "id") ??
    (routerName === "auth" ? call.actor.userId : "");
  const reason = field(call.rawInput, "reason");
  return {
    ...actorRef(call.actor),
    action: `${targetType}.${verb}`,
    targetType,
    targetId,
    poolId: idField(call.rawInput, "poolId"),
    reason: typeof reason === "string" ? reason.slice(0, REASON_MAX) : "",
    outcome: "refused",
    refusal: call.message,
  };
}
