import { HOST_TOKEN_PREFIX, TideError } from "@tide/contracts";
import type { Db } from "@tide/db";
import type { Actor } from "./auth/actor";
import { actorFromSession, SESSION_COOKIE } from "./auth/sessions";
import type { HostCaller } from "./auth/actor";
import { hostFromToken } from "./auth/host-tokens.service";
import { actorFromToken } from "./auth/tokens.service";
import { getDb } from "./db";
import { changeReporterFor } from "./services/transitions/change-report.service";
import { requestOrigin } from "./http/public-url";

export interface Context {
  db: Db;
  actor: Actor | null;
  /** Set when the caller presented a valid host token (tide_host_…); then actor is null. */
  host?: HostCaller | null;
  /** A tide_host_… token was sent (valid or not): user procedures refuse it with a clear message. */
  hostTokenPresented?: boolean;
  /** Aborted when the client goes away (a closed connection): long work checks it before it starts. */
  signal?: AbortSignal;
  /** The console's URL as this request reached it (http/public-url.ts); null when unknown. */
  origin?: string | null;
}

/**
 * Refuse to start work a client no longer waits for: an agent that timed out resends its batch, so
 * storing the abandoned copy only doubles the console's load when it is already slow.
 */
export function throwIfClientGone(ctx: Pick<Context, "signal">, what: string): void {
  if (ctx.signal?.aborted)
    throw new TideError("client_closed", `The client went away before ${what}; nothing was done.`);
}

function cookieValue(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      return null; // broken percent-encoding: no session, not a 500
    }
  }
  return null;
}

function bearer(headers: Headers): string | null {
  const auth = headers.get("authorization");
  if (!auth) return null;
  return /^Bearer\s+(\S+)$/i.exec(auth)?.[1] ?? "";
}

/** Whether the request presents a host token (tide_host_…), valid or not, without looking it up. */
export function presentsHostToken(headers: Headers): boolean {
  return bearer(headers)?.startsWith(HOST_TOKEN_PREFIX) ?? false;
}

/** Who is calling, from `Authorization: Bearer tide_…` (runbooks) or the session cookie (console). */
export async function resolveActor(db: Db, headers: Headers): Promise<Actor | null> {
  const token = bearer(headers);
  if (token !== null) {
    // Host tokens never act as users, even on routes that accept API tokens.
    return token && !token.startsWith(HOST_TOKEN_PREFIX) ? actorFromToken(db, token) : null;
  }
  const cookie = cookieValue(headers.get("cookie"), SESSION_COOKIE);
  return cookie ? actorFromSession(db, cookie) : null;
}

export async function createContext(opts: {
  headers: Headers;
  db?: Db;
  signal?: AbortSignal;
  /** The request's URL: with the headers, where the caller reached the console (Context.origin). */
  url?: string;
}): Promise<Context> {
  const db = opts.db ?? getDb();
  // The console's own database: its change reports end and get written even before (or without)
  // an agent batch, which also starts it (ingest). Tests pass their db and advance reports themselves.
  if (!opts.db) changeReporterFor(db);
  const signal = opts.signal ? { signal: opts.signal } : {};
  const token = bearer(opts.headers);
  if (token?.startsWith(HOST_TOKEN_PREFIX)) {
    return { db, actor: null, host: await hostFromToken(db, token), hostTokenPresented: true, ...signal };
  }
  const origin = requestOrigin(opts.url, opts.headers);
  return { db, actor: await resolveActor(db, opts.headers), host: null, origin, ...signal };
}
