/**
 * Cross-site request refusal for the sign-in and sign-out forms (login CSRF: another site
 * posting a form that signs the browser in to the attacker's account, or out of its own). A
 * browser sends Origin (and Sec-Fetch-Site) with every POST; a form posted from another site
 * carries that site's origin, which it cannot forge. Clients that send neither (tidectl, curl) are
 * not browsers and are let through: there is no ambient cookie for them to abuse.
 */

/** The host this request was addressed to, as the browser saw it (a TLS proxy may change Host). */
function requestHost(req: Request): string {
  const forwarded = req.headers.get("x-forwarded-host")?.split(",")[0]?.trim();
  return (forwarded || req.headers.get("host") || new URL(req.url).host).toLowerCase();
}

/** Why this POST is refused as cross-site, or null when it comes from this site (or not a browser). */
export function crossSiteRefusal(req: Request): string | null {
  const fetchSite = req.headers.get("sec-fetch-site");
  if (fetchSite === "cross-site" || fetchSite === "same-site") {
    return `a ${fetchSite} request`;
  }
  const origin = req.headers.get("origin");
  if (origin === null) return null;
  let host: string;
  try {
    host = new URL(origin).host.toLowerCase();
  } catch {
    return `an unreadable Origin (${origin.slice(0, 80)})`;
  }
  if (origin === "null" || host !== requestHost(req)) return `Origin ${origin.slice(0, 80)}`;
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
