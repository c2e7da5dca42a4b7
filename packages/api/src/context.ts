import type { Db } from "@tide/db";
import type { Actor } from "./auth/actor";
import { actorFromSession, SESSION_COOKIE } from "./auth/sessions";
import { actorFromToken } from "./auth/tokens.service";
import { getDb } from "./db";

export interface Context {
  db: Db;
  actor: Actor | null;
}

function cookieValue(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return null;
}

/** Who is calling, from `Authorization: Bearer tide_…` (runbooks) or the session cookie (console). */
export async function resolveActor(db: Db, headers: Headers): Promise<Actor | null> {
  const auth = headers.get("authorization");
  if (auth) {
    const match = /^Bearer\s+(\S+)$/i.exec(auth);
    return match?.[1] ? actorFromToken(db, match[1]) : null;
  }
  const cookie = cookieValue(headers.get("cookie"), SESSION_COOKIE);
  return cookie ? actorFromSession(db, cookie) : null;
}

export async function createContext(opts: { headers: Headers; db?: Db }): Promise<Context> {
  const db = opts.db ?? getDb();
  return { db, actor: await resolveActor(db, opts.headers) };
}
