import { describe, expect, it } from "vitest";
import { openApiDocument } from "./openapi";

/** "METHOD /path" of every operation of a document. */
function operations(doc: ReturnType<typeof openApiDocument>): string[] {
  return Object.entries(doc.paths ?? {})
    .flatMap(([path, item]) =>
      Object.keys(item ?? {})
        .filter((m) => ["get", "post", "put", "patch", "delete"].includes(m))
        .map((m) => `${m.toUpperCase()} ${path}`),
    )
    .sort();
}

describe("openApiDocument", () => {
  it("is the 3.1 contract by default, built once per process", () => {
    expect(openApiDocument().openapi).toBe("3.1.0");
    expect(openApiDocument()).toBe(openApiDocument("3.1.0"));
  });

  // The console's Swagger UI reads the 3.0 form (it draws a 3.1 document ~3x slower): it must
  // show every operation of the contract, the GLBD download too, and no 3.1-only schema keyword.
  it("has a 3.0 form with the same operations and no 3.1-only keywords", () => {
    const v30 = openApiDocument("3.0.3");
    expect(v30.openapi).toBe("3.0.3");
    expect(operations(v30)).toEqual(operations(openApiDocument()));
    expect(operations(v30)).toContain("GET /pools/{poolId}/tables/{version}/glbd");
    const text = JSON.stringify(v30);
    for (const keyword of ['"const":', '"prefixItems":', '"propertyNames":', '"type":["'])
      expect(text, keyword).not.toContain(keyword);
    expect(text).toContain('"nullable":true');
  });
});
