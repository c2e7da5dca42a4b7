import { restRequest } from "~/api-handlers";

/**
 * REST (OpenAPI) over the same procedures as tRPC; documented at /api/openapi.json. The handler
 * authenticates before reading a body, caps bodies (413) and refuses non-object JSON (400/415).
 * `tide-console serve` answers these paths without Next's router (server/api-direct.ts); this
 * route serves `next dev` and `next start`.
 */
export const dynamic = "force-dynamic";

export {
  restRequest as GET,
  restRequest as POST,
  restRequest as PUT,
  restRequest as PATCH,
  restRequest as DELETE,
};
