import { type errorCodes, isTideError, type Scope } from "@tide/contracts";
import { initTRPC, TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import type { OpenApiMeta } from "trpc-to-openapi";
import { ZodError, z } from "zod";
import type { Context } from "./context";

/** TideError code -> tRPC code (which trpc-to-openapi turns into the HTTP status). */
const trpcCodeFor: Record<keyof typeof errorCodes, TRPC_ERROR_CODE_KEY> = {
  bad_request: "BAD_REQUEST",
  unauthorized: "UNAUTHORIZED",
  forbidden: "FORBIDDEN",
  not_found: "NOT_FOUND",
  conflict: "CONFLICT",
  invalid_transition: "CONFLICT",
  invariant_violation: "CONFLICT",
  unprocessable: "UNPROCESSABLE_CONTENT",
  rate_limited: "TOO_MANY_REQUESTS",
  internal: "INTERNAL_SERVER_ERROR",
};

/** A zod issue path as the console names fields: ["binds", 1, "address"] -> "binds[1].address". */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

/** Field-level messages of a zod error, first message per field (path -> plain message). */
export function zodFields(error: ZodError): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const issue of error.issues) {
    const key = fieldPath(issue.path) || "input";
    fields[key] ??= issue.message;
  }
  return fields;
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
      } else if (cause instanceof ZodError) {
        tideCode = "bad_request";
        details = { fields: zodFields(cause) };
      } else if (error.code === "BAD_REQUEST" || error.code === "PARSE_ERROR") {
        tideCode = "bad_request";
      } else if (error.code === "UNAUTHORIZED") tideCode = "unauthorized";
      else if (error.code === "FORBIDDEN") tideCode = "forbidden";
      else if (error.code === "NOT_FOUND") tideCode = "not_found";
      const message =
        cause instanceof ZodError
          ? `Invalid input: ${z.prettifyError(cause)}`
          : tideCode === "internal"
            ? "Internal error; see the console's log."
            : shape.message;
      return { ...shape, message, data: { ...shape.data, tideCode, details, stack: undefined } };
    },
  });

/** Turn TideErrors thrown by services into tRPC errors with the matching code. */
const tideErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && isTideError(result.error.cause)) {
    const cause = result.error.cause;
    throw new TRPCError({ code: trpcCodeFor[cause.code], message: cause.message, cause });
  }
  return result;
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const publicProcedure = t.procedure.use(tideErrors);

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
