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
  // A form on another site, as Chromium and Firefox post it.
  { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", origin: "https://evil.example" },
  // Another site under no-referrer: Origin null, but the browser still says cross-site.
  { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", origin: "null" },
  // The browser's word wins over an Origin that happens to match (it cannot be forged by a page).
  { "sec-fetch-site": "cross-site", origin: "http://console.example:3000" },
  { "sec-fetch-site": "something-new" },
];

const accepted: Record<string, string>[] = [
  { origin: "http://console.example:3000" },
  { origin: "http://CONSOLE.example:3000", "sec-fetch-site": "same-origin" },
  // Behind a TLS-terminating proxy: the browser's origin is the proxy's host.
  { origin: "https://tide.corp.example", "x-forwarded-host": "tide.corp.example" },
  {}, // tidectl, curl: no browser, no ambient cookie
  // Chromium's sign-out form under Referrer-Policy: no-referrer (issue 27): Origin null.
  { "sec-fetch-site": "same-origin", "sec-fetch-mode": "navigate", origin: "null" },
  // Firefox's same-origin form post: fetch metadata and its origin.
  { "sec-fetch-site": "same-origin", "sec-fetch-mode": "navigate", origin: "http://console.example:3000" },
  // fetch() from the sign-in page: same-origin, no Origin header at all under some policies.
  { "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors" },
  // Behind a proxy that rewrites Host without X-Forwarded-Host: the browser still says same-origin.
  { "sec-fetch-site": "same-origin", origin: "https://tide.corp.example", host: "127.0.0.1:3000" },
  // A navigation the user started (bookmark, typed URL): no site sent it.
  { "sec-fetch-site": "none" },
];

describe("crossSiteRefusal", () => {
  it.each(refused)("refuses %j", (headers) => {
    expect(crossSiteRefusal(post(headers))).not.toBeNull();
  });

  it.each(accepted)("accepts %j", (headers) => {
    expect(crossSiteRefusal(post(headers))).toBeNull();
  });
});
