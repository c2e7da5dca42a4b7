import { z } from "zod";

/** What the sign-in form posts to /api/auth/sign-in. */
export const SignInInput = z.object({
  email: z.string().trim().min(3).max(320),
  password: z.string().min(1).max(1024),
});
export type SignInInput = z.infer<typeof SignInInput>;

/** Where to go after signing in: only a path on this site (no open redirect). */
export function safeNextPath(next: string | null | undefined): string {
  if (!next || !next.startsWith("/") || next.startsWith("//") || next.startsWith("/\\")) return "/";
  if (next.startsWith("/sign-in") || next.startsWith("/api/")) return "/";
  return next;
}
