import { NextResponse, type NextRequest } from "next/server";
import { isDevelopment } from "./env";

/**
 * Runs before every page (not /api, not static assets):
 * 1. Optimistic auth gate: no session cookie -> /sign-in?next=… . The real check is in the API
 *    (every procedure resolves the session); this only avoids rendering a page that would fail.
 * 2. A Content-Security-Policy with a fresh script nonce (Next applies it to its own scripts).
 *    No 'unsafe-eval' outside development. Styles allow inline attributes: React and the
 *    virtualized table set element styles, which carry no script.
 */
const SESSION_COOKIE = "tide_session"; // = SESSION_COOKIE in @tide/api (kept out of the proxy bundle)
const PUBLIC_PATHS = new Set(["/sign-in"]);

function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${isDevelopment ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

export function proxy(request: NextRequest): NextResponse {
  const { pathname, search } = request.nextUrl;
  if (!PUBLIC_PATHS.has(pathname) && !request.cookies.has(SESSION_COOKIE)) {
    const url = request.nextUrl.clone();
    url.pathname = "/sign-in";
    url.search = pathname === "/" ? "" : `?next=${encodeURIComponent(pathname + search)}`;
    return NextResponse.redirect(url);
  }

  const nonce = btoa(crypto.randomUUID());
  const csp = contentSecurityPolicy(nonce);
  const requestHeaders = new Headers(request.headers);
  requestHeaders.set("x-nonce", nonce);
  requestHeaders.set("content-security-policy", csp);
  const res = NextResponse.next({ request: { headers: requestHeaders } });
  res.headers.set("content-security-policy", csp);
  return res;
}

export const config = {
  matcher: [
    {
      // The icon is public: the sign-in page shows it before anyone has a session.
      source: "/((?!api/|_next/static|_next/image|favicon.ico|icon.svg).*)",
      // Prefetches reuse the page's policy; skip them so the nonce stays per document.
      missing: [
        { type: "header", key: "next-router-prefetch" },
        { type: "header", key: "purpose", value: "prefetch" },
      ],
    },
  ],
};
