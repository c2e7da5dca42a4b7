import type { Db } from "@tide/db";
import { signIn, signOut } from "../auth/sessions";
import { getDb } from "../db";
import { apiEnv } from "../env";

/** The console's sign-in and sign-out route handlers (not tRPC procedures: they set the cookie). */

/**
 * The client's address for sign-in throttling: the last X-Forwarded-For entry (Next sets it from
 * the socket when absent; a reverse proxy that appends puts the address it saw last), else null.
 * A client talking to Next directly can forge it, so the per-account throttle never depends on it.
 */
function clientAddress(headers: Headers): string | null {
  const hops = (headers.get("x-forwarded-for") ?? "")
    .split(",")
    .map((h) => h.trim())
    .filter(Boolean);
  const last = hops.at(-1) ?? headers.get("x-real-ip")?.trim();
  return last ? last.slice(0, 64) : null;
}

/** Sign in; `headers` (the request's) give the source address for throttling. */
export async function handleSignIn(
  input: { email: string; password: string },
  headers: Headers = new Headers(),
  db: Db = getDb(),
) {
  return signIn(db, {
    ...input,
    source: clientAddress(headers),
    sessionHours: apiEnv().TIDE_SESSION_HOURS,
  });
}

export async function handleSignOut(cookieValue: string, db: Db = getDb()) {
  await signOut(db, cookieValue);
}
