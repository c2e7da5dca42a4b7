import { TRPCError } from "@trpc/server";
import { createOpenApiNodeHttpHandler } from "trpc-to-openapi";
import type { Context } from "../context";
import { appRouter } from "../routers/_app";

/**
 * trpc-to-openapi's REST handler, made once per process. The library's fetch adapter
 * (createOpenApiFetchHandler) builds a new node-http handler on every request, and with it the
 * procedure table: every procedure walked and a path RegExp compiled for each, about a tenth of
 * the CPU of a GET /api/v1/me (issue 28). This is that adapter (same request proxy, same
 * response shim) around one handler; the request's context and error callback travel with the
 * request object instead of the handler's closure.
 */

/** What the console's routes log of a failed call (routes.ts takes the same callback). */
export type OnError = (info: { path: string | undefined; error: { code: string; cause?: unknown } }) => void;

interface PerRequest {
  ctx: Context;
  onError: OnError | undefined;
}

/** What the handler's callbacks need, by the request object they are given. */
const perRequest = new WeakMap<object, PerRequest>();

interface ResponseShim {
  statusCode: number;
  setHeader(key: string, value: string | string[]): void;
  end(body?: string): void;
}
type NodeHandler = (req: Request, res: ResponseShim) => Promise<void>;

let handler: NodeHandler | undefined;

function nodeHandler(): NodeHandler {
  handler ??= createOpenApiNodeHttpHandler({
    router: appRouter,
    createContext: ({ req }: { req: object }) => perRequest.get(req)!.ctx,
    onError: ({ error, path, req }: { error: TRPCError; path: string | undefined; req: object }) =>
      perRequest.get(req)?.onError?.({ error, path }),
  } as never) as unknown as NodeHandler;
  return handler;
}

/** The body as the library's fetch adapter hands it over: JSON parsed, anything else not read. */
function bodyOf(
  req: Request,
  text: string | null,
): { ok: true; data: unknown } | { ok: false; cause: unknown } {
  if (text === null || !req.headers.get("content-type")?.includes("application/json")) {
    return { ok: true, data: undefined };
  }
  try {
    return { ok: true, data: JSON.parse(text) as unknown };
  } catch (cause) {
    return { ok: false, cause };
  }
}

/**
 * Answer a REST request (`req`, its body already read as `bodyText`) with the procedure its method
 * and path name, in context `ctx`. `endpoint` is the REST prefix (/api/v1).
 */
export function openApiResponse(
  req: Request,
  bodyText: string | null,
  opts: { endpoint: string; ctx: Context; onError?: OnError | undefined },
): Promise<Response> {
  const url = req.url.replace(opts.endpoint, "");
  const body = bodyOf(req, bodyText);
  const proxied = new Proxy(req, {
    get: (target, prop) => {
      if (prop === "url") return url;
      if (prop === "body") {
        if (!body.ok) {
          throw new TRPCError({
            code: "PARSE_ERROR",
            message: "Failed to parse request body",
            cause: body.cause,
          });
        }
        return body.data;
      }
      return target[prop as keyof Request];
    },
  });
  perRequest.set(proxied, { ctx: opts.ctx, onError: opts.onError });
  const headers = new Headers();
  return new Promise<Response>((resolve, reject) => {
    const res: ResponseShim = {
      statusCode: 200,
      setHeader: (key, value) => {
        if (typeof value === "string") headers.set(key, value);
        else for (const v of value) headers.append(key, v);
      },
      end: (text) => resolve(new Response(text, { headers, status: res.statusCode })),
    };
    nodeHandler()(proxied, res).catch(reject);
  });
}
