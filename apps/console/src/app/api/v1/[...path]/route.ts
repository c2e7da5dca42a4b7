import { appRouter, createContext } from "@tide/api";
import { createOpenApiFetchHandler } from "trpc-to-openapi";

/** REST (OpenAPI) over the same procedures as tRPC; documented at /api/openapi.json. */
export const dynamic = "force-dynamic";

function handler(req: Request): Promise<Response> {
  return createOpenApiFetchHandler({
    endpoint: "/api/v1",
    router: appRouter,
    req,
    createContext: () => createContext({ headers: req.headers }),
    onError: ({ error, path }) => {
      if (error.code === "INTERNAL_SERVER_ERROR")
        console.error(`REST ${path ?? "?"} failed:`, error.cause ?? error);
    },
  });
}

export { handler as GET, handler as POST, handler as PUT, handler as PATCH, handler as DELETE };
