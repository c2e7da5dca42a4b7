import type { Metadata } from "next";
import { headers } from "next/headers";
import { ApiDocsView } from "~/features/api-docs/api-docs-view";

export const metadata: Metadata = { title: "API docs" };

/** The REST API's OpenAPI document (/api/openapi.json) as a page, rendered by Swagger UI. */
export default async function ApiDocsPage() {
  // Swagger UI's bundle loads as a script of this page: it needs the page's CSP nonce.
  const nonce = (await headers()).get("x-nonce") ?? undefined;
  return <ApiDocsView nonce={nonce} />;
}
