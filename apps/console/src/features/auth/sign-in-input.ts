import { z } from "zod";

/** What the sign-in form posts to /api/auth/sign-in. */
export const SignInInput = z.object({
  email: z.string().trim().min(3).max(320),
  password: z.string().min(1).max(1024),
});
export type SignInInput = z.infer<typeof SignInInput>;

/** Stands in for this console's origin while resolving `next`; never leaves this function. */
const SENTINEL_ORIGIN = "https://tide.invalid";

/**
 * Where to go after signing in: only a path on this site (no open redirect). Browsers drop tab,
 * CR and LF anywhere in a URL and read "\\" as "/", so "/\t/evil.example" would become
 * "//evil.example" (another host). Refuse any control character, space or backslash outright,
 * then resolve what is left and keep it only if it stays on this origin; the path returned is the
 * resolved one, so what the browser follows is exactly what was checked.
 */
export function safeNextPath(next: string | null | undefined): string {
  if (!next || !next.startsWith("/") || next.startsWith("//")) return "/";
  for (const ch of next) {
    const code = ch.charCodeAt(0);
    if (code <= 0x20 || code === 0x7f || ch === "\\") return "/";
  }
  let url: URL;
  try {
    url = new URL(next, SENTINEL_ORIGIN);
  } catch {
    return "/";
  }
  if (url.origin !== SENTINEL_ORIGIN) return "/";
  const path = url.pathname + url.search + url.hash;
  if (!path.startsWith("/") || path.startsWith("//")) return "/";
  if (url.pathname === "/sign-in" || url.pathname.startsWith("/sign-in/")) return "/";
  if (url.pathname.startsWith("/api/")) return "/";
  return path;
}
