import { handleRestRequest, handleTrpcRequest } from "@tide/api";

/**
 * The console's two API handlers, as the route files (app/api/v1/[...path], app/api/trpc/[trpc])
 * and `tide-console serve`'s direct path (server/api-direct.ts) both call them: one definition, so
 * the two ways in cannot answer differently.
 */

export function restRequest(req: Request): Promise<Response> {
  return handleRestRequest(req, {
    onError: ({ error, path }) => {
      if (error.code === "INTERNAL_SERVER_ERROR")
        console.error(`REST ${path ?? "?"} failed:`, error.cause ?? error);
    },
  });
}

export function trpcRequest(req: Request): Promise<Response> {
  return handleTrpcRequest(req, {
    onError: ({ error, path }) => {
      if (error.code === "INTERNAL_SERVER_ERROR")
        console.error(`tRPC ${path ?? "?"} failed:`, error.cause ?? error);
    },
  });
}

/**
 * Where `tide-console serve` finds the handlers (a global symbol: its own bundle does not load the
 * API, whose module state - the database pool, the caches, the callers' slots - lives in Next's
 * server bundle and must exist once). = API_HANDLERS_KEY in server/api-direct.ts.
 */
const API_HANDLERS_KEY = Symbol.for("tide.console.api-handlers");

/** Publish the handlers to the production server (called from instrumentation's register()). */
export function publishApiHandlers(): void {
  (globalThis as Record<symbol, unknown>)[API_HANDLERS_KEY] = { rest: restRequest, trpc: trpcRequest };
}
