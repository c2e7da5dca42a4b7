import { TideError } from "@tide/contracts";
import { createDb, type Db } from "@tide/db";
import { apiEnv } from "./env";

let shared: Db | undefined;

/** The process-wide Prisma client, created on first use from DATABASE_URL. */
export function getDb(): Db {
  shared ??= createDb(apiEnv().DATABASE_URL);
  return shared;
}

/** How long /api/health waits for `SELECT 1` before it says the database does not answer. */
export const HEALTH_CHECK_TIMEOUT_MS = 2_000;

/** Whether the database answers `SELECT 1` within timeoutMs; never throws. */
export async function checkDatabase(db?: Db, timeoutMs = HEALTH_CHECK_TIMEOUT_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const answered = (async () => {
    try {
      await (db ?? getDb()).$queryRaw`SELECT 1`;
      return true;
    } catch {
      return false;
    }
  })();
  try {
    return await Promise.race([answered, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** SQLSTATEs that mean "the database is busy, retry": lock_not_available, query_canceled. */
const BUSY_SQLSTATES = { "55P03": "a row it needs is locked", "57014": "a statement took too long" } as const;
type BusySqlState = keyof typeof BUSY_SQLSTATES;

/** Seconds a client should wait before retrying a busy answer (the Retry-After header). */
export const BUSY_RETRY_AFTER_S = 1;

function busySqlState(e: unknown, depth = 0): BusySqlState | null {
  if (depth > 6 || e === null || typeof e !== "object") return null;
  const o = e as Record<string, unknown>;
  for (const key of ["code", "originalCode"]) {
    const v = o[key];
    if (typeof v === "string" && v in BUSY_SQLSTATES) return v as BusySqlState;
  }
  // Prisma wraps the pg error: P2010 { meta: { driverAdapterError: { cause: { code } } } }.
  for (const key of ["meta", "driverAdapterError", "cause"]) {
    const found = busySqlState(o[key], depth + 1);
    if (found) return found;
  }
  return null;
}

/**
 * A TideError "busy" when e is a PostgreSQL lock timeout (55P03) or statement timeout (57014),
 * however Prisma wrapped it; otherwise null.
 */
export function busyErrorFrom(e: unknown): TideError | null {
  const state = busySqlState(e);
  if (!state) return null;
  return new TideError(
    "busy",
    `The database is busy (${BUSY_SQLSTATES[state]}); nothing was changed. Retry in a moment.`,
    { sqlState: state, retryAfterSeconds: BUSY_RETRY_AFTER_S },
  );
}
