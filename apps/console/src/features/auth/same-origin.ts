/**
 * Cross-site request refusal for the sign-in and sign-out forms (login CSRF: another site
 * posting a form that signs the browser in to the attacker's account, or out of its own).
 *
 * The browser's own word comes first: Sec-Fetch-Site (Chromium 76+, Firefox 90+, Safari 16.4+),
 * which a page cannot set or forge. "same-origin" and "none" (the user's own navigation) pass;
 * "same-site" (a sibling subdomain) and "cross-site" are refused. Only a browser without fetch
 * metadata falls back to Origin, which must name this host. Origin alone is not enough: under
 * `Referrer-Policy: no-referrer` Chromium sends `Origin: null` with a same-origin form post (what
 * kept sign-out from signing out; the console now sends strict-origin-when-cross-origin, so the
 * fallback gets a real origin too). An `Origin: null` without fetch metadata is refused: the
 * sender cannot be told apart from a sandboxed frame on another site. Clients that send neither
 * header (tidectl, curl) are not browsers and are let through: there is no ambient cookie for
 * them to abuse.
 */

/** The host this request was addressed to, as the browser saw it (a TLS proxy may change Host). */
function requestHost(req: Request): string {
  const forwarded = req.headers.get("x-forwarded-host")?.split(",")[0]?.trim();
  return (forwarded || req.headers.get("host") || new URL(req.url).host).toLowerCase();
}

/** Sec-Fetch-Site values of a request this site started (or the user typed). */
const SAME_ORIGIN_FETCH_SITES = new Set(["same-origin", "none"]);

/** Why this POST is refused as cross-site, or null when it comes from this site (or not a browser). */
export function crossSiteRefusal(req: Request): string | null {
  const fetchSite = req.headers.get("sec-fetch-site")?.trim().toLowerCase();
  if (fetchSite) {
    return SAME_ORIGIN_FETCH_SITES.has(fetchSite) ? null : `a ${fetchSite.slice(0, 40)} request`;
  }
  const origin = req.headers.get("origin");
  if (origin === null) return null;
  if (origin === "null") return "Origin null";
  let host: string;
  try {
    host = new URL(origin).host.toLowerCase();
  } catch {
    return `an unreadable Origin (${origin.slice(0, 80)})`;
  }
  if (host !== requestHost(req)) return `Origin ${origin.slice(0, 80)}`;
  return null;
}

/** 403 for a cross-site POST, or null to go on. */
export function refuseCrossSite(req: Request): Response | null {
  const why = crossSiteRefusal(req);
  if (!why) return null;
  return Response.json(
    { code: "forbidden", message: `Refused: ${why} may not sign in or out here.` },
    { status: 403, headers: { "cache-control": "no-store" } },
  );
}
