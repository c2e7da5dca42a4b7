import { describe, expect, it } from "vitest";
import { requestOrigin } from "./public-url";

const h = (headers: Record<string, string>) => new Headers(headers);

describe("requestOrigin", () => {
  it("takes the Host header and the request's scheme", () => {
    expect(requestOrigin("http://localhost:3000/api/v1/x", h({ host: "localhost:3000" }))).toBe(
      "http://localhost:3000",
    );
  });

  it("prefers the first X-Forwarded-Proto and X-Forwarded-Host (a TLS proxy in front)", () => {
    const headers = h({
      host: "127.0.0.1:3000",
      "x-forwarded-proto": "https, http",
      "x-forwarded-host": "Console.Example.NET, inner",
    });
    expect(requestOrigin("http://127.0.0.1:3000/api/trpc/x", headers)).toBe("https://console.example.net");
  });

  it("falls back to the URL's host without a Host header", () => {
    expect(requestOrigin("https://tide.example.net/api/v1/x", h({}))).toBe("https://tide.example.net");
  });

  it("keeps ports and IPv6 literals", () => {
    expect(requestOrigin(undefined, h({ host: "[2001:db8::1]:8443", "x-forwarded-proto": "https" }))).toBe(
      "https://[2001:db8::1]:8443",
    );
  });

  it.each([
    ["a shell metacharacter in Host", { host: "evil.example;rm -rf /", "x-forwarded-proto": "https" }],
    ["a space in X-Forwarded-Host", { "x-forwarded-host": "a b", "x-forwarded-proto": "https" }],
    ["an odd scheme", { host: "tide.example.net", "x-forwarded-proto": "javascript" }],
    ["no host at all", {}],
  ])("is null for %s", (_, headers) => {
    expect(requestOrigin(undefined, h(headers))).toBeNull();
  });
});
