import { errorCodes, isTideError } from "@tide/contracts";
import type { Db } from "@tide/db";
import { resolveActor } from "./context";
import { getDb } from "./db";
import { apiEnv } from "./env";
import { signIn, signOut } from "./auth/sessions";
import { versionContent } from "./services/table.service";

/** Route-handler helpers for the parts of the API that are not tRPC procedures. */

function errorResponse(status: number, code: string, message: string): Response {
  return Response.json({ code, message }, { status });
}

export function tideErrorResponse(e: unknown): Response {
  if (isTideError(e)) return errorResponse(errorCodes[e.code], e.code, e.message);
  console.error(e);
  return errorResponse(500, "internal", "Internal error; see the console's log.");
}

export async function handleSignIn(input: { email: string; password: string }, db: Db = getDb()) {
  return signIn(db, { ...input, sessionHours: apiEnv().TIDE_SESSION_HOURS });
}

export async function handleSignOut(cookieValue: string, db: Db = getDb()) {
  await signOut(db, cookieValue);
}

/** GET /api/v1/pools/{poolId}/tables/{version}/glbd: the exact stored bytes, read scope required. */
export async function handleTableDownload(opts: {
  headers: Headers;
  poolId: string;
  version: string;
  db?: Db;
}): Promise<Response> {
  const db = opts.db ?? getDb();
  try {
    const actor = await resolveActor(db, opts.headers);
    if (!actor) return errorResponse(401, "unauthorized", "Sign in, or send 'Authorization: Bearer tide_…'.");
    if (!actor.scopes.includes("read"))
      return errorResponse(403, "forbidden", "This needs the 'read' scope.");
    const version = Number(opts.version);
    if (!Number.isInteger(version) || version < 1) {
      return errorResponse(400, "bad_request", `Version must be a positive integer, got "${opts.version}".`);
    }
    const row = await versionContent(db, opts.poolId, version);
    const filename = `${row.pool.name}-v${row.version}.glbd`.replace(/[^A-Za-z0-9._-]/g, "_");
    return new Response(new Uint8Array(row.content), {
      status: 200,
      headers: {
        "content-type": "application/octet-stream",
        "content-disposition": `attachment; filename="${filename}"`,
        "x-tide-content-hash": row.contentHash,
        "cache-control": "private, max-age=31536000, immutable",
      },
    });
  } catch (e) {
    return tideErrorResponse(e);
  }
}
