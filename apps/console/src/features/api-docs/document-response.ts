import { createHash } from "node:crypto";

/**
 * A GET handler for a JSON document that is fixed for the life of the process (the OpenAPI
 * documents): built, serialized and hashed on the first request only (~0.5 MB of JSON), then sent
 * with an ETag so that a browser revalidating it gets a 304 and no body. `no-cache` rather than a
 * max-age: the document changes with a console upgrade, and a revalidation costs one round trip.
 * The ETag is weak because the server may compress the body (gzip, br) and a strong one would
 * claim byte equality across encodings.
 */
export function jsonDocumentHandler(build: () => unknown): (request: Request) => Response {
  let made: { body: string; etag: string } | undefined;
  return (request) => {
    if (!made) {
      const body = JSON.stringify(build());
      made = { body, etag: `W/"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"` };
    }
    const headers = { etag: made.etag, "cache-control": "no-cache" };
    if (matchesEtag(request.headers.get("if-none-match"), made.etag)) {
      return new Response(null, { status: 304, headers });
    }
    return new Response(made.body, { headers: { ...headers, "content-type": "application/json" } });
  };
}

/** If-None-Match compares weakly (RFC 9110 13.1.2): `*`, or any listed tag, W/ or not. */
function matchesEtag(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, "");
  return ifNoneMatch.split(",").some((tag) => tag.trim() === "*" || opaque(tag) === opaque(etag));
}
