import { openApiDocument } from "@tide/api";
import { jsonDocumentHandler } from "~/features/api-docs/document-response";

/**
 * The same document in its OpenAPI 3.0 form, for the console's Swagger UI (/docs) only: Swagger UI
 * draws a 3.0 document about three times faster than the 3.1 one (see OpenApiVersion in @tide/api).
 * Clients of the API read /api/openapi.json, the contract.
 */
export const dynamic = "force-dynamic";

export const GET = jsonDocumentHandler(() => openApiDocument("3.0.3"));
