import { describe, expect, it } from "vitest";
import { safeNextPath } from "./sign-in-input";

/** Resolve `next` the way a browser resolves a Location header on this site. */
function landsOn(next: string | null): string {
  return new URL(safeNextPath(next), "https://console.example/").origin;
}

describe("safeNextPath", () => {
  // Each of these resolved to another site before: browsers drop tab/CR/LF from URLs and read
  // a backslash as a slash, so "/\t/evil.example" became "//evil.example".
  it.each([
    "/%09/evil.example",
    "/\t/evil.example",
    "/\n/evil.example",
    "/\r\n/evil.example",
    "/%0A/evil.example",
    "/\t\\evil.example",
    "/\\evil.example",
    "\\/evil.example",
    "//evil.example",
    "///evil.example",
    "/ /evil.example",
    "https://evil.example/",
    "javascript:alert(1)",
    "/\u0000/evil.example",
  ])("keeps %j on this site", (next) => {
    const decoded = next.includes("%") ? decodeURIComponent(next) : next;
    expect(landsOn(next)).toBe("https://console.example");
    expect(landsOn(decoded)).toBe("https://console.example");
    expect(safeNextPath(decoded)).toBe("/");
  });

  it.each([
    ["/pools/pool_1?tab=rows", "/pools/pool_1?tab=rows"],
    ["/findings#top", "/findings#top"],
    ["/", "/"],
  ])("keeps the same-site path %j", (next, expected) => {
    expect(safeNextPath(next)).toBe(expected);
  });

  it.each([null, "", "pools", "/sign-in?next=/x", "/api/v1/pools"])("sends %j home", (next) => {
    expect(safeNextPath(next)).toBe("/");
  });
});
