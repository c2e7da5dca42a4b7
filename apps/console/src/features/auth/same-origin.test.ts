import { describe, expect, it } from "vitest";
import { crossSiteRefusal } from "./same-origin";

const post = (headers: Record<string, string>, url = "http://console.example:3000/api/auth/sign-in") =>
  new Request(url, { method: "POST", headers });

const refused: Record<string, string>[] = [
  { origin: "https://evil.example" },
  { origin: "http://console.example.evil.example:3000" },
  { origin: "http://console.example:3001" },
  { origin: "null" },
  { origin: "not a url" },
  { "sec-fetch-site": "cross-site" },
  { "sec-fetch-site": "same-site", origin: "https://other.console.example" },
  { origin: "https://evil.example", host: "console.example:3000" },
];

const accepted: Record<string, string>[] = [
  { origin: "http://console.example:3000" },
  { origin: "http://CONSOLE.example:3000", "sec-fetch-site": "same-origin" },
  // Behind a TLS-terminating proxy: the browser's origin is the proxy's host.
  { origin: "https://tide.corp.example", "x-forwarded-host": "tide.corp.example" },
  {}, // tidectl, curl: no browser, no ambient cookie
];

describe("crossSiteRefusal", () => {
  it.each(refused)("refuses %j", (headers) => {
    expect(crossSiteRefusal(post(headers))).not.toBeNull();
  });

  it.each(accepted)("accepts %j", (headers) => {
    expect(crossSiteRefusal(post(headers))).toBeNull();
  });
});
