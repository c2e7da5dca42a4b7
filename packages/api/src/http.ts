import { errorCodes, isTideError } from "@tide/contracts";
import type { Db } from "@tide/db";
import { HOST_TOKEN_PREFIX } from "@tide/contracts";
import { hostFromToken } from "./auth/host-tokens.service";
import { resolveActor } from "./context";
import { getDb } from "./db";
import { apiEnv } from "./env";
import { signIn, signOut } from "./auth/sessions";
import { versionContent } from "./services/table.service";
import { GLBD_HEADER_SIZE, GLBD_TABLE_SIZE, TABLE_ROWS } from "@tide/forwarding";

/** Route-handler helpers for the parts of the API that are not tRPC procedures. */

function errorResponse(status: number, code: string, message: string): Response {
  return Response.json({ code, message }, { status });
}

export function tideErrorResponse(e: unknown): Response {
  if (isTideError(e)) {
    const res = errorResponse(errorCodes[e.code], e.code, e.message);
    const retryAfterS = e.details?.["retryAfterS"];
    // rate_limited (sign-in backoff, busy hashing) and busy say when to retry in details.retryAfterS.
    if (typeof retryAfterS === "number" && Number.isFinite(retryAfterS)) {
      res.headers.set("retry-after", String(Math.max(1, Math.ceil(retryAfterS))));
    }
    return res;
  }
  console.error(e);
  return errorResponse(500, "internal", "Internal error; see the console's log.");
}

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

/** Where hash_key[16] sits inside one GLBD table: just before its 65,536 x 8-byte rows (13,320). */
const TABLE_HASH_KEY_OFFSET = GLBD_TABLE_SIZE - TABLE_ROWS * 8 - 16;
/** Offset of num_tables in the GLBD header ("GLBD", u32 version, u32 num_tables, …). */
const NUM_TABLES_OFFSET = 8;

/**
 * A copy of a GLBD file (v2 or v3: same table layout) with every table's hash key zeroed. The
 * key (byte 13,344 of a one-table file) decides which row, so which proxy, a client's flow hashes
 * to: with it a client could pick source ports that steer its traffic onto one proxy.
 */
export function redactHashKeys(content: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = Uint8Array.from(content);
  if (out.length < GLBD_HEADER_SIZE) return out;
  const numTables = new DataView(out.buffer, out.byteOffset, out.byteLength).getUint32(
    NUM_TABLES_OFFSET,
    true,
  );
  for (let t = 0; t < numTables; t++) {
    const at = GLBD_HEADER_SIZE + t * GLBD_TABLE_SIZE + TABLE_HASH_KEY_OFFSET;
    if (at + 16 > out.length) break;
    out.fill(0, at, at + 16);
  }
  return out;
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
