import {
  type errorCodes,
  fieldInWords,
  fieldPath,
  findUnsafeText,
  isTideError,
  type Scope,
  TideError,
} from "@tide/contracts";
import { initTRPC, TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import type { OpenApiMeta } from "trpc-to-openapi";
import { ZodError } from "zod";
import type { Context } from "./context";
import { busyErrorFrom } from "./db";
import { callerKeyOf, callerSlots } from "./http/caller-slots";
import { refusedAttempt } from "./services/audit/audit-refusal.plan";
import { recordRefusal } from "./services/audit/audit.service";

/** TideError code -> tRPC code (which trpc-to-openapi turns into the HTTP status). */
export const trpcCodeFor: Record<keyof typeof errorCodes, TRPC_ERROR_CODE_KEY> = {
  bad_request: "BAD_REQUEST",
  unauthorized: "UNAUTHORIZED",
  forbidden: "FORBIDDEN",
  not_found: "NOT_FOUND",
  conflict: "CONFLICT",
  invalid_transition: "CONFLICT",
  invariant_violation: "CONFLICT",
  payload_too_large: "PAYLOAD_TOO_LARGE",
  unsupported_media_type: "UNSUPPORTED_MEDIA_TYPE",
  unprocessable: "UNPROCESSABLE_CONTENT",
  rate_limited: "TOO_MANY_REQUESTS",
  internal: "INTERNAL_SERVER_ERROR",
  busy: "SERVICE_UNAVAILABLE",
  client_closed: "CLIENT_CLOSED_REQUEST",
};

/**
 * tRPC code -> TideError code for errors tRPC or the REST adapter raise themselves (bad JSON,
 * missing content type, body too large, batch too big): their own message is plain, keep it.
 */
const tideCodeForTrpc: Partial<Record<TRPC_ERROR_CODE_KEY, keyof typeof errorCodes>> = {
  PARSE_ERROR: "bad_request",
  BAD_REQUEST: "bad_request",
  UNAUTHORIZED: "unauthorized",
  FORBIDDEN: "forbidden",
  NOT_FOUND: "not_found",
  METHOD_NOT_SUPPORTED: "bad_request",
  PAYLOAD_TOO_LARGE: "payload_too_large",
  UNSUPPORTED_MEDIA_TYPE: "unsupported_media_type",
  TOO_MANY_REQUESTS: "rate_limited",
  SERVICE_UNAVAILABLE: "busy",
  CLIENT_CLOSED_REQUEST: "client_closed",
};

/** zod's own English messages ("Invalid input: expected number, received null", "Too big: …"). */
const ZOD_DEFAULT_MESSAGE = /^(Invalid\b|Too (big|small):|Unrecognized keys?:)/;

const TYPE_WORDS: Record<string, string> = {
  string: "text",
  number: "a number",
  int: "a whole number",
  boolean: "true or false",
  bigint: "a whole number",
  array: "a list",
  object: "an object",
  record: "an object",
  tuple: "a list",
  date: "a date",
  null: "null",
  nan: "a number",
};

/** What a received JSON value is, in words; zod names it at the end of its invalid_type message. */
function receivedWords(message: string): string | null {
  const received = /received (\w+)$/.exec(message)?.[1];
  if (!received) return null;
  return received === "null" || received === "undefined" ? received : (TYPE_WORDS[received] ?? received);
}

/** How many: "8 entries", "1 character"; null for numbers and dates. */
function sizeWords(n: number | bigint, origin: string): string | null {
  const one = Number(n) === 1;
  if (origin === "string") return `${n} ${one ? "character" : "characters"}`;
  if (origin === "array" || origin === "set") return `${n} ${one ? "entry" : "entries"}`;
  return null;
}

/**
 * One zod issue as a plain clause about its field: the schema's own message when it wrote one
 * ("must be an IP address or a host name"), otherwise the rule in words ("must be a whole number
 * from 68 to 9000" is split by zod into one issue per bound: "must be at most 9000").
 */
export function issueInWords(issue: ZodError["issues"][number]): string {
  if (!ZOD_DEFAULT_MESSAGE.test(issue.message)) return issue.message;
  switch (issue.code) {
    case "invalid_type": {
      const received = receivedWords(issue.message);
      if (received === "undefined") return "is missing";
      const expected = TYPE_WORDS[issue.expected] ?? issue.expected;
      // An int given 1.5 "received number": saying "not a number" would be wrong.
      const not =
        received && !(issue.expected === "int" && received === "a number") ? `, not ${received}` : "";
      return `must be ${expected}${not}`;
    }
    case "too_big": {
      const size = sizeWords(issue.maximum, issue.origin);
      if (size) return `must have at most ${size}`;
      return issue.inclusive === false
        ? `must be below ${issue.maximum}`
        : `must be at most ${issue.maximum}`;
    }
    case "too_small": {
      if (issue.origin === "string" && Number(issue.minimum) === 1) return "must not be empty";
      const size = sizeWords(issue.minimum, issue.origin);
      if (size) return `must have at least ${size}`;
      return issue.inclusive === false
        ? `must be above ${issue.minimum}`
        : `must be at least ${issue.minimum}`;
    }
    case "invalid_format":
      return issue.format === "regex" ? "is not in the accepted form" : `must be a valid ${issue.format}`;
    case "not_multiple_of":
      return `must be a multiple of ${issue.divisor}`;
    case "unrecognized_keys":
      return `has ${issue.keys.length === 1 ? "a field" : "fields"} it does not know: ${issue.keys.join(", ")}`;
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => String(v)).join(", ")}`;
    case "invalid_key":
    case "invalid_element":
      return "has an entry that is not valid";
    case "invalid_union":
      return "does not match any accepted form";
    default:
      return "is not valid";
  }
}

/** Field-level messages of a zod error, first message per field (path -> plain message). */
export function zodFields(error: ZodError): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const issue of error.issues) {
    const key = fieldPath(issue.path) || "input";
    fields[key] ??= issueInWords(issue);
  }
  return fields;
}

/**
 * A caller's bad input as sentences people read, one per field (the first issue of each):
 * "Invalid input: targets entry 1, sizes entry 1 — must be a number, not null." Never zod's
 * own rendering (✖ marks, "→ at targets[0].sizes[0]"), which the console would show as it is.
 */
export function zodMessage(error: ZodError): string {
  const seen = new Set<string>();
  const sentences: string[] = [];
  for (const issue of error.issues) {
    const key = fieldPath(issue.path);
    if (seen.has(key)) continue;
    seen.add(key);
    const words = issueInWords(issue).replace(/[.\s]+$/, "");
    sentences.push(`${fieldInWords(issue.path)} — ${words}.`);
  }
  return `Invalid input: ${sentences.join(" ")}`;
}

const t = initTRPC
  .context<Context>()
  .meta<OpenApiMeta>()
  .create({
    errorFormatter({ shape, error }) {
      const cause = error.cause;
      let tideCode: string = "internal";
      let details: Record<string, unknown> | undefined;
      if (isTideError(cause)) {
        tideCode = cause.code;
        details = cause.details;
      } else if (cause instanceof ZodError && error.code === "BAD_REQUEST") {
        // Input validation: the caller's fields. A ZodError of any other code is our output failing
        // its own contract: an internal error, with the validator's text only in the log.
        tideCode = "bad_request";
        details = { fields: zodFields(cause) };
      } else {
        tideCode = tideCodeForTrpc[error.code] ?? "internal";
      }
      const message =
        cause instanceof ZodError && tideCode === "bad_request"
          ? zodMessage(cause)
          : tideCode === "internal"
            ? "Internal error; see the console's log."
            : shape.message;
      return { ...shape, message, data: { ...shape.data, tideCode, details, stack: undefined } };
    },
  });

/**
 * Turn TideErrors thrown by services into tRPC errors with the matching code, and a database
 * timeout (db.ts busyErrorFrom: no connection free in time, a lock or statement timeout, a
 * transaction timeout) into SERVICE_UNAVAILABLE, 503 busy: the caller should retry, not see 500.
 * Both adapters add Retry-After to it (http/routes.ts).
 */
const tideErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok) {
    const cause = isTideError(result.error.cause) ? result.error.cause : busyErrorFrom(result.error.cause);
    if (cause) throw new TRPCError({ code: trpcCodeFor[cause.code], message: cause.message, cause });
  }
  return result;
});

/**
 * Each caller's calls run a few at a time (http/caller-slots.ts, TIDE_CALLER_CONCURRENCY), so a
 * tRPC batch of 50 calls, or 40 of them in parallel, cannot take every database connection from
 * the other callers; a call that finds no slot in time is answered 503 busy (tideErrors keeps the
 * TideError's code, both adapters add Retry-After). Callers with no credentials are not counted:
 * the procedures they may call refuse them before any work.
 */
const callerConcurrency = t.middleware(async ({ ctx, next }) => {
  const key = callerKeyOf(ctx);
  return key === null ? next() : callerSlots().run(key, () => next(), ctx.signal);
});

/**
 * Refuse input PostgreSQL cannot store (NUL, lone surrogates) anywhere in any procedure's input,
 * before it reaches a service: one check for tRPC, REST bodies, query strings and path parameters.
 */
const storableInput = t.middleware(async ({ getRawInput, next }) => {
  const found = findUnsafeText(await getRawInput());
  if (found) {
    const field = fieldPath(found.path) || "input";
    const message = `Invalid input: ${field} ${found.reason}.`;
    throw new TRPCError({
      code: "BAD_REQUEST",
      message,
      cause: new TideError("bad_request", message, { fields: { [field]: `Text ${found.reason}.` } }),
    });
  }
  return next();
});

/**
 * Record every refused mutation (409 conflict, 403 forbidden) in the audit log as "refused", with
 * the API's reason: the one place that sees every procedure's outcome, so a refused drain and a
 * viewer's forbidden call are both on record. Outermost, so it sees the codes tideErrors mapped.
 * Writing the event never changes the caller's answer: a failure to record is only logged.
 */
const auditRefusals = t.middleware(async ({ ctx, path, type, getRawInput, next }) => {
  const result = await next();
  if (!result.ok && type === "mutation") {
    const attempt = refusedAttempt({
      path,
      type,
      code: result.error.code,
      message: result.error.message,
      rawInput: await getRawInput().catch(() => undefined),
      actor: ctx.actor,
    });
    if (attempt) {
      await recordRefusal(ctx.db, attempt).catch((e: unknown) => {
        console.error(`audit: could not record a refused ${path}:`, e);
      });
    }
  }
  return result;
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const publicProcedure = t.procedure
  .use(auditRefusals)
  .use(tideErrors)
  .use(callerConcurrency)
  .use(storableInput);

const HOST_TOKEN_REFUSED =
  "Host tokens (tide_host_…) can only call the agent endpoints (/api/v1/agent/…); use an API token (tide_…).";

function requireScope(scope: Scope) {
  return t.middleware(({ ctx, next }) => {
    if (ctx.hostTokenPresented) throw new TRPCError({ code: "FORBIDDEN", message: HOST_TOKEN_REFUSED });
    if (!ctx.actor) {
      throw new TRPCError({
        code: "UNAUTHORIZED",
        message: "Sign in, or send an API token as 'Authorization: Bearer tide_…'.",
      });
    }
    if (!ctx.actor.scopes.includes(scope)) {
      throw new TRPCError({
        code: "FORBIDDEN",
        message: `This needs the '${scope}' scope; ${ctx.actor.label} has ${ctx.actor.scopes.join(", ") || "none"}.`,
      });
    }
    return next({ ctx: { ...ctx, actor: ctx.actor } });
  });
}

export const readProcedure = publicProcedure.use(requireScope("read"));
export const operateProcedure = publicProcedure.use(requireScope("operate"));
export const adminProcedure = publicProcedure.use(requireScope("admin"));

/**
 * Agent procedures: only a valid host token (scope "agent") gets through. Unknown or revoked host
 * tokens are 401; API tokens and sessions are 403 (they are valid, just not for this).
 */
export const agentProcedure = publicProcedure.use(({ ctx, next }) => {
  if (ctx.host) return next({ ctx: { ...ctx, host: ctx.host } });
  if (ctx.hostTokenPresented) {
    throw new TRPCError({ code: "UNAUTHORIZED", message: "Unknown or revoked host token." });
  }
  if (ctx.actor) {
    throw new TRPCError({
      code: "FORBIDDEN",
      message: "Agent endpoints need a host token (tide_host_…); API tokens and sessions cannot call them.",
    });
  }
  throw new TRPCError({
    code: "UNAUTHORIZED",
    message: "Send the agent's host token as 'Authorization: Bearer tide_host_…'.",
  });
});
