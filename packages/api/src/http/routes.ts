import type { Db } from "@tide/db";
import { TRPC_ERROR_CODES_BY_KEY } from "@trpc/server/rpc";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { createContext, presentsHostToken, type Context } from "../context";
import { restMethodsFor } from "../openapi";
import { isTideError } from "@tide/contracts";
import { BUSY_RETRY_AFTER_S, busyErrorFrom } from "../db";
import { appRouter } from "../routers/_app";
import { admissionBytesOf, ingestAdmission, type IngestAdmission } from "./ingest-admission";
import { ingestDirect } from "./ingest-route";
import { openApiResponse, type OnError } from "./openapi-handler";
import { trpcCodeFor } from "../trpc";
import {
  bodyLimitFor,
  forwardedHeaders,
  readBodyCapped,
  readJsonObject,
  readJsonObjectBody,
  refuseAnonymousBody,
  RequestRefusal,
  takesBody,
} from "./limits";

/**
 * The console's /api/v1 and /api/trpc route handlers (the routes only call these): authenticate,
 * cap and check the body, then hand over to trpc-to-openapi / tRPC with the context already made.
 */

export const REST_ENDPOINT = "/api/v1";
export const TRPC_ENDPOINT = "/api/trpc";

/**
 * Most calls one tRPC batch may hold. The console's batch link is bounded by URL length (4,000
 * characters, a few dozen calls); 1,000 calls in one 11 KB URL stalled other requests for 3 s.
 */
export const TRPC_MAX_BATCH_CALLS = 50;

/** The error body both adapters send (message, code, data.tideCode), for refusals made here. */
function refusalResponse(refusal: RequestRefusal, shape: "rest" | "trpc"): Response {
  const trpcCode = trpcCodeFor[refusal.code];
  const data = { code: trpcCode, httpStatus: refusal.status, tideCode: refusal.code };
  const body =
    shape === "rest"
      ? { message: refusal.message, code: trpcCode, data }
      : { error: { message: refusal.message, code: TRPC_ERROR_CODES_BY_KEY[trpcCode], data } };
  return Response.json(body, { status: refusal.status, headers: { "cache-control": "no-store" } });
}

/** 503 busy answers say when to retry. */
function withRetryAfter(res: Response): Response {
  if (res.status !== 503 || res.headers.has("retry-after")) return res;
  const headers = new Headers(res.headers);
  headers.set("retry-after", String(BUSY_RETRY_AFTER_S));
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
}

/**
 * The answer to a request that failed outside its procedure, where neither adapter maps errors:
 * looking up the caller's token or session, or the agents' direct batch path. A database timeout
 * is 503 busy with Retry-After (busyErrorFrom), like the procedures' own; anything else 500, in the
 * log. Without it the error escaped the route handler and Next.js answered 500 with an empty body
 * (issue 26: explain under load).
 */
function failedOutsideProcedure(e: unknown, shape: "rest" | "trpc"): Response {
  const error = isTideError(e) ? e : busyErrorFrom(e);
  if (error) return withRetryAfter(refusalResponse(new RequestRefusal(error.code, error.message), shape));
  console.error(`${shape === "rest" ? "REST" : "tRPC"} request failed before its procedure:`, e);
  return refusalResponse(new RequestRefusal("internal", "Internal error; see the console's log."), shape);
}

/** The request again, with the body already read (or none), so adapters never read the original. */
function rebuilt(req: Request, body: string | null): Request {
  return new Request(req.url, {
    method: req.method,
    headers: forwardedHeaders(req.headers, body !== null),
    body,
    signal: req.signal,
  });
}

/** The agents' batch route, admitted by IngestAdmission. */
const INGEST_PATH = "/agent/observations";

/** REST (OpenAPI) over the same procedures as tRPC: the handler behind /api/v1/…. */
export async function handleRestRequest(
  req: Request,
  opts: { db?: Db; onError?: OnError; admission?: IngestAdmission } = {},
): Promise<Response> {
  const res = await restResponse(req, opts).catch((e: unknown) => failedOutsideProcedure(e, "rest"));
  return new URL(req.url).pathname.startsWith(AGENT_PATHS) ? notCompressed(res) : res;
}

/** The agents' routes (hello, batches, health, desired state). */
const AGENT_PATHS = `${REST_ENDPOINT}/agent/`;

/**
 * An agent's answer, marked `Cache-Control: no-store, no-transform` so the console's HTTP server
 * does not gzip it. Agents' fetch asks for gzip, and Next.js compressed every reply (tens of bytes
 * of JSON) through a zlib stream of its own: at 1,000 agents that was a twentieth of the console's
 * CPU and much of its garbage, for nothing.
 */
function notCompressed(res: Response): Response {
  const headers = new Headers(res.headers);
  headers.set("cache-control", "no-store, no-transform");
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
}

async function restResponse(
  req: Request,
  opts: { db?: Db; onError?: OnError; admission?: IngestAdmission },
): Promise<Response> {
  const wrongMethod = methodNotAllowed(req);
  if (wrongMethod) return wrongMethod;
  const path = new URL(req.url).pathname.slice(REST_ENDPOINT.length);
  const newContext = () =>
    createContext({ headers: req.headers, db: opts.db, signal: req.signal, url: req.url });
  if (req.method === "POST" && path === INGEST_PATH && presentsHostToken(req.headers)) {
    const admission = opts.admission ?? ingestAdmission();
    const bytes = admissionBytesOf(req.headers, bodyLimitFor(path));
    const busy = admission.enter(bytes);
    // Refused before the token is looked up: when the console is overloaded, a busy answer must
    // cost it next to nothing (an unknown token is told 401 once the console has room).
    if (busy) return withRetryAfter(refusalResponse(busy, "rest"));
    try {
      const ctx = await newContext();
      if (!ctx.host) return await handleRest(req, ctx, path, opts);
      const read = await readJsonObject(req, bodyLimitFor(path));
      if (read instanceof RequestRefusal) return refusalResponse(read, "rest");
      // A valid batch is answered directly; anything else takes the REST adapter (ingest-route.ts).
      return (
        (await ingestDirect({ ...ctx, host: ctx.host }, read.value, read.text)) ??
        (await handleRest(req, ctx, path, opts, read.text))
      );
    } finally {
      admission.leave(bytes);
    }
  }
  return handleRest(req, await newContext(), path, opts);
}

async function handleRest(
  req: Request,
  ctx: Context,
  path: string,
  opts: { onError?: OnError },
  /** The body, when the caller has read it already (a JSON object, by readJsonObject). */
  bodyRead?: string,
): Promise<Response> {
  let body: string | null = bodyRead ?? null;
  if (bodyRead === undefined && takesBody(req.method)) {
    const anonymous = refuseAnonymousBody(ctx, path);
    if (anonymous) return refusalResponse(anonymous, "rest");
    const text = await readJsonObjectBody(req, bodyLimitFor(path));
    if (text instanceof RequestRefusal) return refusalResponse(text, "rest");
    body = text;
  }
  const res = await openApiResponse(rebuilt(req, body), body, {
    endpoint: REST_ENDPOINT,
    ctx,
    onError: opts.onError,
  });
  return withRetryAfter(res);
}

/**
 * A route that exists, asked with a method it does not answer: 405 with Allow and a sentence, not
 * "Not found" (the route is there; the method is wrong).
 */
function methodNotAllowed(req: Request): Response | null {
  const path = new URL(req.url).pathname.slice(REST_ENDPOINT.length);
  if (!["GET", "POST", "PUT", "PATCH", "DELETE"].includes(req.method)) return null;
  const allowed = restMethodsFor(path);
  if (allowed.length === 0 || allowed.includes(req.method)) return null;
  const trpcCode = "METHOD_NOT_SUPPORTED" as const;
  return Response.json(
    {
      message: `${req.method} is not allowed on ${REST_ENDPOINT}${path}; use ${allowed.join(" or ")}.`,
      code: trpcCode,
      data: { code: trpcCode, httpStatus: 405, tideCode: "bad_request" },
    },
    { status: 405, headers: { allow: allowed.join(", "), "cache-control": "no-store" } },
  );
}

/** tRPC (the console's own client): the handler behind /api/trpc/…. */
export async function handleTrpcRequest(
  req: Request,
  opts: { db?: Db; onError?: OnError } = {},
): Promise<Response> {
  return trpcResponse(req, opts).catch((e: unknown) => failedOutsideProcedure(e, "trpc"));
}

async function trpcResponse(req: Request, opts: { db?: Db; onError?: OnError }): Promise<Response> {
  const url = new URL(req.url);
  const calls = url.pathname.slice(TRPC_ENDPOINT.length + 1).split(",").length;
  if (url.searchParams.get("batch") === "1" && calls > TRPC_MAX_BATCH_CALLS) {
    return refusalResponse(
      new RequestRefusal(
        "payload_too_large",
        `A batch may hold at most ${TRPC_MAX_BATCH_CALLS} calls; this one has ${calls}. Send fewer at once.`,
      ),
      "trpc",
    );
  }
  const ctx: Context = await createContext({
    headers: req.headers,
    db: opts.db,
    signal: req.signal,
    url: req.url,
  });
  let body: string | null = null;
  if (takesBody(req.method)) {
    const anonymous = refuseAnonymousBody(ctx);
    if (anonymous) return refusalResponse(anonymous, "trpc");
    const text = await readBodyCapped(req, bodyLimitFor(null));
    if (text instanceof RequestRefusal) return refusalResponse(text, "trpc");
    body = text;
  }
  return fetchRequestHandler({
    endpoint: TRPC_ENDPOINT,
    router: appRouter,
    req: rebuilt(req, body),
    createContext: () => ctx,
    maxBatchSize: TRPC_MAX_BATCH_CALLS,
    responseMeta: ({ errors }) =>
      errors.some((e) => e.code === "SERVICE_UNAVAILABLE")
        ? { headers: new Headers({ "retry-after": String(BUSY_RETRY_AFTER_S) }) }
        : {},
    onError: opts.onError ? ({ error, path }) => opts.onError?.({ error, path }) : undefined,
  });
}
