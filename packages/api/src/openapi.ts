import { generateOpenApiDocument } from "trpc-to-openapi";
import { appRouter } from "./routers/_app";

/**
 * The OpenAPI versions the document is written in. 3.1.0 is the REST API's contract, published at
 * /api/openapi.json. 3.0.3 is the same operations for the console's Swagger UI (/docs): Swagger UI 5
 * resolves a 3.1 document through ApiDOM, refracting the whole document (~0.5 MB) several times on
 * load, which froze the page for ~9 s of CPU before the first operation showed; the 3.0 form takes
 * its old resolver (~3 s). The 3.0 form says a little less: no `propertyNames` on records, no
 * `prefixItems` on tuples (zod's "openapi-3.0" target drops them), `nullable` for `null` types.
 */
export type OpenApiVersion = "3.1.0" | "3.0.3";

/** REST under /api/v1, generated from the same tRPC procedures the console uses. */
function buildDocument(openApiVersion: OpenApiVersion) {
  const doc = generateOpenApiDocument(appRouter, {
    openApiVersion,
    title: "Tide API",
    version: "1.0.0",
    description:
      "Fleet operations for GLB-style L4 load balancing. Authenticate with `Authorization: Bearer tide_…` " +
      "(agents: `tide_host_…` host tokens, accepted only by /agent/… endpoints) " +
      "(tokens are created in the console: the header's Tokens link, admins). Scopes: read, operate, admin. " +
      "Errors are JSON `{ message, code, data: { tideCode }, issues? }`: `message` is for humans, `code` is the " +
      "transport class (e.g. CONFLICT) and `data.tideCode` the stable Tide code (e.g. invalid_transition).",
    baseUrl: "/api/v1",
    tags: [
      "auth",
      "fleet",
      "pools",
      "directors",
      "proxies",
      "tables",
      "audit",
      "tokens",
      "users",
      "agent",
      "hosts",
      "findings",
    ],
  });
  // The GLBD download is binary, served by a route handler next to the REST handler.
  doc.paths = {
    ...doc.paths,
    "/pools/{poolId}/tables/{version}/glbd": {
      get: {
        operationId: "tables-download",
        summary: "Download a table version as a GLBD file (v3, with its hash fields)",
        tags: ["tables"],
        security: [{ Authorization: [] }],
        parameters: [
          { name: "poolId", in: "path", required: true, schema: { type: "string" } },
          { name: "version", in: "path", required: true, schema: { type: "integer", minimum: 1 } },
        ],
        responses: {
          "200": {
            description:
              "GLBD file (one table; v3 carries hash fields, v2 for versions written before); X-Tide-Content-Hash carries its sha256",
            content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } },
          },
          "401": { description: "Missing or invalid token" },
          "404": { description: "No such pool or version" },
        },
      },
    },
  };
  return doc;
}

const cached = new Map<OpenApiVersion, ReturnType<typeof buildDocument>>();

let routes: { pattern: RegExp; methods: string[] }[] | undefined;

/**
 * The methods the REST API answers on a path (under /api/v1), from the OpenAPI document: empty when
 * no route has that shape. Lets a wrong method get 405 with Allow instead of "Not found".
 */
export function restMethodsFor(path: string): string[] {
  routes ??= Object.entries(openApiDocument().paths ?? {}).map(([template, item]) => ({
    pattern: new RegExp(
      `^${template
        .split(/(\{[^}]+\})/)
        .map((part) => (part.startsWith("{") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
        .join("")}/?$`,
    ),
    methods: Object.keys(item ?? {})
      .filter((m) => ["get", "post", "put", "patch", "delete"].includes(m))
      .map((m) => m.toUpperCase()),
  }));
  return [...new Set(routes.filter((r) => r.pattern.test(path)).flatMap((r) => r.methods))].sort();
}

/** The document, built once per process and version (~0.3 s each); the contract's 3.1.0 by default. */
export function openApiDocument(version: OpenApiVersion = "3.1.0") {
  let doc = cached.get(version);
  if (!doc) {
    doc = buildDocument(version);
    cached.set(version, doc);
  }
  return doc;
}
