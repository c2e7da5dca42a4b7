import { openApiDocument } from "@tide/api";
import { jsonDocumentHandler } from "~/features/api-docs/document-response";

/** The OpenAPI 3.1 document of the REST API under /api/v1 (public: it holds no data). */
export const dynamic = "force-dynamic";

export const GET = jsonDocumentHandler(() => openApiDocument());
