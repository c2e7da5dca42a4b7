import { handleSignOut, SESSION_COOKIE } from "@tide/api";
import { cookies } from "next/headers";
import { NextResponse } from "next/server";
import { refuseCrossSite } from "~/features/auth/same-origin";
import { clearSessionCookie } from "~/features/auth/session-cookie";

export const dynamic = "force-dynamic";

/**
 * POST (a plain form in the header): end the session, clear the cookie, go to the sign-in page.
 * A post from another site is refused (403): it may not sign the user out.
 */
export async function POST(req: Request): Promise<Response> {
  const crossSite = refuseCrossSite(req);
  if (crossSite) return crossSite;
  const value = (await cookies()).get(SESSION_COOKIE)?.value;
  if (value) await handleSignOut(value).catch((e: unknown) => console.error("sign-out failed:", e));
  // A relative Location: correct behind a TLS-terminating proxy whatever Host the app sees.
  const res = new NextResponse(null, { status: 303, headers: { location: "/sign-in" } });
  clearSessionCookie(res, req);
  return res;
}
