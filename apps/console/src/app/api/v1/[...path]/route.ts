import { handleRestRequest } from "@tide/api";

/**
 * REST (OpenAPI) over the same procedures as tRPC; documented at /api/openapi.json. The handler
 * authenticates before reading a body, caps bodies (413) and refuses non-object JSON (400/415).
 */
export const dynamic = "force-dynamic";

function handler(req: Request): Promise<Response> {
  return handleRestRequest(req, {
    onError: ({ error, path }) => {
      if (error.code === "INTERNAL_SERVER_ERROR")
        console.error(`REST ${path ?? "?"} failed:`, error.cause ?? error);
    },
  });
}

export { handler as GET, handler as POST, handler as PUT, handler as PATCH, handler as DELETE };
