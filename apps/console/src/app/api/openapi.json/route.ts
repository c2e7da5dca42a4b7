import { openApiDocument } from "@tide/api";

/** The OpenAPI 3 document of the REST API under /api/v1 (public: it holds no data). */
export const dynamic = "force-dynamic";

export function GET(): Response {
  return Response.json(openApiDocument(), { headers: { "cache-control": "no-cache" } });
}
