import { describe, expect, it, vi } from "vitest";
import { jsonDocumentHandler } from "./document-response";

const url = "http://console.test/api/openapi.json";

describe("jsonDocumentHandler", () => {
  it("builds the document once, then answers every request from that", async () => {
    const build = vi.fn(() => ({ openapi: "3.1.0", paths: {} }));
    const get = jsonDocumentHandler(build);
    const first = get(new Request(url));
    const second = get(new Request(url));
    expect(build).toHaveBeenCalledTimes(1);
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe("application/json");
    expect(first.headers.get("cache-control")).toBe("no-cache");
    expect(await first.json()).toEqual({ openapi: "3.1.0", paths: {} });
    expect(second.headers.get("etag")).toBe(first.headers.get("etag"));
  });

  it("answers 304 with no body to a matching If-None-Match, weak or strong, alone or listed", async () => {
    const get = jsonDocumentHandler(() => ({ a: 1 }));
    const etag = get(new Request(url)).headers.get("etag")!;
    expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]+"$/);
    for (const ifNoneMatch of [etag, etag.slice(2), `"other", ${etag}`, "*"]) {
      const res = get(new Request(url, { headers: { "if-none-match": ifNoneMatch } }));
      expect(res.status, ifNoneMatch).toBe(304);
      expect(res.headers.get("etag")).toBe(etag);
      expect(await res.text()).toBe("");
    }
  });

  it("sends the document again when the tag does not match", async () => {
    const get = jsonDocumentHandler(() => ({ a: 1 }));
    const res = get(new Request(url, { headers: { "if-none-match": 'W/"stale"' } }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ a: 1 });
  });

  it("tags different documents differently", () => {
    const a = jsonDocumentHandler(() => ({ a: 1 }))(new Request(url)).headers.get("etag");
    const b = jsonDocumentHandler(() => ({ a: 2 }))(new Request(url)).headers.get("etag");
    expect(a).not.toBe(b);
  });
});
