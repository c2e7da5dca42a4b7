import { handleSignIn, tideErrorResponse } from "@tide/api";
import { isTideError } from "@tide/contracts";
import { NextResponse } from "next/server";
import { refuseCrossSite } from "~/features/auth/same-origin";
import { setSessionCookie } from "~/features/auth/session-cookie";
import { readSignInBody, SIGN_IN_BODY_LIMIT } from "~/features/auth/sign-in-body";
import { safeNextPath, SignInInput } from "~/features/auth/sign-in-input";

export const dynamic = "force-dynamic";

function seeOther(location: string): NextResponse {
  return new NextResponse(null, { status: 303, headers: { location, "cache-control": "no-store" } });
}

/**
 * POST JSON { email, password } (the sign-in page) -> 200 { user } + session cookie, or 401
 * { code, message }. A plain form post (no JavaScript) gets redirects instead: to `next` on
 * success, back to /sign-in?error=1 on failure. A post from another site is refused (403).
 */
export async function POST(req: Request): Promise<Response> {
  const crossSite = refuseCrossSite(req);
  if (crossSite) return crossSite;
  const read = await readSignInBody(req);
  if (read === "too_large") {
    return Response.json(
      { code: "payload_too_large", message: `A sign-in is at most ${SIGN_IN_BODY_LIMIT} bytes.` },
      { status: 413 },
    );
  }
  const { isForm, body } = read;
  const input = SignInInput.safeParse(body);
  const next = safeNextPath(
    isForm && body && typeof body === "object" && "next" in body ? String(body.next) : null,
  );
  if (!input.success) {
    if (isForm) return seeOther(`/sign-in?error=1&next=${encodeURIComponent(next)}`);
    return Response.json(
      { code: "bad_request", message: "Send a JSON body { email, password }." },
      { status: 400 },
    );
  }
  try {
    const session = await handleSignIn(input.data, req.headers);
    const res = isForm
      ? seeOther(next)
      : NextResponse.json({ user: session.user }, { headers: { "cache-control": "no-store" } });
    setSessionCookie(res, req, session.cookieValue, session.expiresAt);
    return res;
  } catch (e) {
    if (isForm && isTideError(e) && e.code === "unauthorized") {
      return seeOther(`/sign-in?error=1&next=${encodeURIComponent(next)}`);
    }
    return tideErrorResponse(e);
  }
}
