/**
 * The API's requests (/api/v1/…, /api/trpc/…) answered by the API handlers directly, without
 * Next's router. Next's request path (route resolution, its request and response wrappers, its
 * tracing, gzip through a zlib stream for every answer) cost ~5 ms of CPU per request where the
 * API's own work for GET /api/v1/me was ~0.4 ms: at concurrency 5 the console answered 127 reads a
 * second, one core busy (issue 28). The handlers are the ones Next's routes call
 * (src/api-handlers.ts), published by the console's instrumentation into a global, so the API's
 * module state (the database pool, the caches, the callers' slots) exists once, in Next's bundle.
 * Until they are published, or for a path Next must route (the GLBD download has a route of its
 * own; anything unusual in the path), the request goes to Next as before.
 *
 * The answer carries what Next would have added: the security headers of next.config.ts
 * (security-headers.json), and X-Forwarded-* where the console is the edge (Next sets them from
 * the socket). It is not gzipped: API answers are small JSON (a reverse proxy may compress).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import securityHeaders from "./security-headers.json";

/** = API_HANDLERS_KEY in src/api-handlers.ts. */
const API_HANDLERS_KEY = Symbol.for("tide.console.api-handlers");

interface ApiHandlers {
  rest(req: Request): Promise<Response>;
  trpc(req: Request): Promise<Response>;
}

/**
 * Paths taken directly: letters, digits and the URL-safe punctuation REST ids and tRPC batches use,
 * no empty, "." or ".." segment, no trailing slash (Next would redirect it). The GLBD download
 * (/api/v1/pools/{id}/tables/{version}/glbd) is one of Next's own routes.
 */
const DIRECT_PATH = /^\/api\/(v1|trpc)(?:\/[A-Za-z0-9_~,%:@+-][A-Za-z0-9_~,%:@+.-]*)+$/;
const NEXT_ROUTED = /^\/api\/v1\/pools\/[^/]+\/tables\/[^/]+\/glbd$/;

/**
 * The methods the route files export: Next answers any other itself (OPTIONS with Allow, HEAD as a
 * GET without its body, 405), and keeps doing so.
 */
const ROUTE_METHODS = {
  rest: ["GET", "POST", "PUT", "PATCH", "DELETE"],
  trpc: ["GET", "POST"],
} as const;

/**
 * Which handler answers `method` on `url` (a request target: path and query), or null: Next
 * routes it.
 */
export function directApiRoute(method: string, url: string): "rest" | "trpc" | null {
  const route = routeOf(url);
  return route && (ROUTE_METHODS[route] as readonly string[]).includes(method) ? route : null;
}

function routeOf(url: string): "rest" | "trpc" | null {
  const q = url.indexOf("?");
  const path = q < 0 ? url : url.slice(0, q);
  const m = DIRECT_PATH.exec(path);
  // "%2e" is a dot to the URL parser: "/%2e%2e/" is a ".." segment once the Request is made.
  if (!m || /\/\.|%2e/i.test(path) || NEXT_ROUTED.test(path)) return null;
  return m[1] === "v1" ? "rest" : "trpc";
}

function publishedHandlers(): ApiHandlers | undefined {
  return (globalThis as Record<symbol, ApiHandlers | undefined>)[API_HANDLERS_KEY];
}

/**
 * Answer `req` with the API handler its path names, if published; false when Next must (the
 * handlers are not published yet, or the path is not one taken directly).
 */
export function answerDirectly(
  req: IncomingMessage,
  res: ServerResponse,
  edge: { scheme: "http" | "https"; host: string; tls: boolean },
): boolean {
  const route = req.url ? directApiRoute(req.method ?? "GET", req.url) : null;
  const handlers = route ? publishedHandlers() : undefined;
  if (!route || !handlers) return false;
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  const host = headers.get("host") ?? edge.host;
  if (edge.tls) {
    // As Next does where it is the edge (serve.ts dropped whatever clients sent under these names).
    headers.set("x-forwarded-proto", "https");
    headers.set("x-forwarded-host", host);
    if (req.socket.remoteAddress) headers.set("x-forwarded-for", req.socket.remoteAddress);
  }
  const aborted = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) aborted.abort();
  });
  const method = req.method ?? "GET";
  const hasBody = method !== "GET";
  const request = new Request(`${edge.scheme}://${host}${req.url}`, {
    method,
    headers,
    body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : null,
    signal: aborted.signal,
    ...(hasBody ? { duplex: "half" } : {}),
  } as RequestInit);
  handlers[route](request)
    .then((response) => send(response, res))
    .catch((e: unknown) => {
      console.error(`tide-console: ${method} ${route === "rest" ? "REST" : "tRPC"} request failed:`, e);
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(
        res.headersSent ? undefined : JSON.stringify({ message: "Internal error; see the console's log." }),
      );
    });
  return true;
}

async function send(response: Response, res: ServerResponse): Promise<void> {
  res.statusCode = response.status;
  for (const { key, value } of securityHeaders) res.setHeader(key, value);
  const cookies = response.headers.getSetCookie();
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") res.setHeader(name, value);
  });
  if (cookies.length > 0) res.setHeader("set-cookie", cookies);
  if (!response.body) {
    res.end();
    return;
  }
  // One write for headers and body when the answer is whole (JSON): fewer syscalls than a stream.
  const reader = response.body.getReader();
  const first = await reader.read();
  if (first.done) {
    res.end();
    return;
  }
  const second = await reader.read();
  if (second.done) {
    res.end(first.value);
    return;
  }
  res.write(first.value);
  res.write(second.value);
  for (;;) {
    const next = await reader.read();
    if (next.done) break;
    if (res.destroyed) {
      await reader.cancel().catch(() => undefined);
      return;
    }
    if (!res.write(next.value)) {
      await new Promise((r) => {
        res.once("drain", r);
        res.once("close", r);
      });
    }
  }
  res.end();
}
