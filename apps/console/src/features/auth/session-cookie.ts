import "server-only";

import { SESSION_COOKIE } from "@tide/api";
import type { NextResponse } from "next/server";
import { env } from "~/env";

/** Secure when the request arrived over https (directly or via a TLS-terminating proxy), or forced. */
function wantsSecure(req: Request): boolean {
  const mode = env().TIDE_SECURE_COOKIES;
  if (mode !== "auto") return mode === "always";
  const forwarded = req.headers.get("x-forwarded-proto")?.split(",")[0]?.trim();
  return (forwarded ?? new URL(req.url).protocol.replace(":", "")) === "https";
}

export function setSessionCookie(res: NextResponse, req: Request, value: string, expiresAt: Date): void {
  res.cookies.set({
    name: SESSION_COOKIE,
    value,
    httpOnly: true,
    sameSite: "lax",
    secure: wantsSecure(req),
    path: "/",
    expires: expiresAt,
  });
}

export function clearSessionCookie(res: NextResponse, req: Request): void {
  res.cookies.set({
    name: SESSION_COOKIE,
    value: "",
    httpOnly: true,
    sameSite: "lax",
    secure: wantsSecure(req),
    path: "/",
    maxAge: 0,
  });
}
