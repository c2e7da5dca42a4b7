import { HOST_TOKEN_PREFIX } from "@tide/contracts";
import type { Db } from "@tide/db";
import { hostFromToken } from "../auth/host-tokens.service";
import { resolveActor } from "../context";
import { getDb } from "../db";
import { versionContent } from "../services/tables/table.service";
import { errorResponse, tideErrorResponse } from "./errors";
import { redactHashKeys } from "./glbd-redaction";

/**
 * Whether a host token may download a pool's tables: only the director (by hostname) serving that
 * pool, as listed in its desired state. Returns null when no host token was sent.
 */
async function hostMayDownload(db: Db, headers: Headers, poolId: string): Promise<Response | true | null> {
  const token = /^Bearer\s+(\S+)$/i.exec(headers.get("authorization") ?? "")?.[1];
  if (!token?.startsWith(HOST_TOKEN_PREFIX)) return null;
  const host = await hostFromToken(db, token);
  if (!host) return errorResponse(401, "unauthorized", "Unknown or revoked host token.");
  const serves = await db.director.count({
    where: { hostname: host.hostname, pools: { some: { id: poolId } } },
  });
  return serves > 0
    ? true
    : errorResponse(403, "forbidden", `Host ${host.hostname} is not a director of pool ${poolId}.`);
}

/**
 * GET /api/v1/pools/{poolId}/tables/{version}/glbd: the stored table file.
 * - The host token of a director serving the pool (tide-agent fetches its desired tables here),
 *   or a user/token with the operate scope: the exact stored bytes, with the hash key
 *   (`x-tide-hash-key: included`, `x-tide-content-hash` = the version's content hash).
 * - Read scope only: the same file with every table's hash key zeroed
 *   (`x-tide-hash-key: redacted`, no content hash: the bytes are not the version's).
 */
export async function handleTableDownload(opts: {
  headers: Headers;
  poolId: string;
  version: string;
  db?: Db;
}): Promise<Response> {
  const db = opts.db ?? getDb();
  try {
    const hostAccess = await hostMayDownload(db, opts.headers, opts.poolId);
    if (hostAccess instanceof Response) return hostAccess;
    const actor = hostAccess === true ? null : await resolveActor(db, opts.headers);
    if (hostAccess !== true && !actor)
      return errorResponse(401, "unauthorized", "Sign in, or send 'Authorization: Bearer tide_…'.");
    if (actor && !actor.scopes.includes("read"))
      return errorResponse(403, "forbidden", "This needs the 'read' scope.");
    const withKey = hostAccess === true || (actor?.scopes.includes("operate") ?? false);
    // Decimal digits only, and within PostgreSQL's int (a version of 1e20 made the query fail: 500).
    const version = /^[1-9]\d{0,8}$/.test(opts.version) ? Number(opts.version) : NaN;
    if (!Number.isInteger(version) || version < 1) {
      return errorResponse(400, "bad_request", `Version must be a positive integer, got "${opts.version}".`);
    }
    const row = await versionContent(db, opts.poolId, version);
    const filename = `${row.pool.name}-v${row.version}.glbd`.replace(/[^A-Za-z0-9._-]/g, "_");
    const stored = new Uint8Array(row.content);
    return new Response(withKey ? stored : redactHashKeys(stored), {
      status: 200,
      headers: {
        "content-type": "application/octet-stream",
        "content-disposition": `attachment; filename="${filename}"`,
        "x-tide-hash-key": withKey ? "included" : "redacted",
        ...(withKey ? { "x-tide-content-hash": row.contentHash } : {}),
        // One URL, two bodies by caller: never serve one caller's copy to another.
        vary: "authorization, cookie",
        "cache-control": withKey ? "private, max-age=31536000, immutable" : "private, no-cache",
      },
    });
  } catch (e) {
    return tideErrorResponse(e);
  }
}
