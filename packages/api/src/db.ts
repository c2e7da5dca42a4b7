import { TideError } from "@tide/contracts";
import { createDb, pgPoolOf, type Db } from "@tide/db";
import { apiEnv } from "./env";

let shared: Db | undefined;

/**
 * The process-wide Prisma client, created on first use from DATABASE_URL, with a pool of
 * TIDE_DB_POOL_SIZE connections (fitted to the server at first use: fitPoolToServer).
 */
export function getDb(): Db {
  if (!shared) {
    shared = createDb(apiEnv().DATABASE_URL, { max: apiEnv().TIDE_DB_POOL_SIZE });
    void fitPoolToServer(shared);
  }
  return shared;
}

/** Share of the server's connections for ordinary users that one console process takes at most. */
export const POOL_SHARE_OF_SERVER = 1 / 3;

/**
 * The pool size a console may use on a server with `maxConnections` (max_connections) of which
 * `reserved` are kept for superusers (superuser_reserved_connections + reserved_connections):
 * at most POOL_SHARE_OF_SERVER of the rest (two consoles and other clients fit), less its LISTEN
 * connection, and never under 2.
 */
export function poolSizeFor(wanted: number, maxConnections: number, reserved: number): number {
  const fair = Math.floor((maxConnections - reserved) * POOL_SHARE_OF_SERVER) - 1;
  return Math.max(2, Math.min(wanted, fair));
}

/**
 * Shrink the pool when PostgreSQL cannot give it TIDE_DB_POOL_SIZE connections beside another
 * console: a pool larger than the server allows fails under load with "too many connections"
 * (answered 503, but every request that needed a new connection paid for the refusal), where a
 * smaller pool queues its requests for a connection (connectTimeoutMs, then 503 busy). Logged
 * once; a server that does not answer leaves the pool as configured.
 */
async function fitPoolToServer(db: Db): Promise<void> {
  const pool = pgPoolOf(db);
  if (!pool) return;
  try {
    const { rows } = await pool.query<{ max: number; reserved: number }>(
      `SELECT current_setting('max_connections')::int AS max,
              current_setting('superuser_reserved_connections')::int
                + COALESCE(current_setting('reserved_connections', true)::int, 0) AS reserved`,
    );
    const row = rows[0];
    if (!row) return;
    const wanted = pool.options.max;
    const size = poolSizeFor(wanted, row.max, row.reserved);
    if (size < wanted) {
      pool.options.max = size;
      console.warn(
        `database pool: TIDE_DB_POOL_SIZE is ${wanted}, but PostgreSQL's max_connections is ${row.max} ` +
          `(${row.reserved} reserved); using ${size} connections (a third of the rest, less the LISTEN connection)`,
      );
    }
  } catch (e) {
    console.warn(
      "database pool: could not read PostgreSQL's max_connections; keeping the pool as configured",
      e,
    );
  }
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

/**
 * The database timeouts (and the one capacity refusal) that mean "busy, retry" rather than "broken",
 * each with the words the 503 says. What each looks like under Prisma's pg driver adapter (measured
 * in http/db-timeouts.integration-test.ts, which provokes every one against PostgreSQL):
 * - connect: no pool connection came free within connectTimeoutMs (pg-pool: a plain Error "timeout
 *   exceeded when trying to connect", no code, Prisma passes it through as it is), or opening a new
 *   connection took longer (pg-pool: "Connection terminated due to connection timeout"). Prisma's
 *   own pool (P2024) is not used with the adapter; it is recognised all the same.
 * - lock: lock_timeout (SQLSTATE 55P03), as `code` on pg's error, `originalCode` inside Prisma's
 *   P2010 { meta: { driverAdapterError: { cause } } }.
 * - statement: statement_timeout (SQLSTATE 57014), wrapped like a lock timeout; and the client's
 *   own query_timeout for a server that no longer answers (pg: a plain Error "Query read timeout").
 * - transaction: a Prisma interactive transaction that outlived its `timeout` or could not start
 *   within `maxWait` (P2028 "… expired transaction …" / "Unable to start a transaction in the given
 *   time"); Prisma rolls it back, so nothing was changed.
 * - connections: PostgreSQL refused a new connection, max_connections or the database's connection
 *   limit reached (SQLSTATE 53300; Prisma's P2037 keeps it as the adapter error's originalCode):
 *   load, not a fault, and a retry a moment later finds one free.
 * - conflict: a deadlock (40P01) or a serialization failure (40001, Prisma's P2034): PostgreSQL
 *   rolled the transaction back so that another could finish; the same request a moment later
 *   goes through.
 * - idle: idle_in_transaction_session_timeout (25P03) ended the session of a transaction that sat
 *   without a statement too long (a request stalled between its statements, e.g. on a starved
 *   event loop); PostgreSQL rolled it back. The request on that session sees 25P03 when its
 *   statement was in flight, else node-postgres's "Client has encountered a connection error and
 *   is not queryable" (the 25P03 came as the connection's error event): kind lost, below.
 * - lost: the connection broke under the request (node-postgres "Connection terminated
 *   unexpectedly": the server ended the session, restarted, or a network path dropped); the
 *   transaction on it was rolled back. And after a frozen server's query_timeout, the client
 *   closes that connection itself (@tide/db BoundedClient), so what came next on it (the
 *   ROLLBACK, the rest of its transaction) reads "Client was closed and is not queryable".
 */
export type DatabaseTimeout =
  "connect" | "lock" | "statement" | "transaction" | "connections" | "conflict" | "idle" | "lost";

const BUSY_WORDS: Record<DatabaseTimeout, string> = {
  connect: "no database connection was free in time",
  lock: "a row it needs is locked",
  statement: "a statement took too long",
  transaction: "a transaction took too long",
  connections: "it has no connection to spare",
  conflict: "another change touched the same rows at the same time",
  idle: "a transaction was left waiting too long",
  lost: "the connection to it was lost",
};

/**
 * SQLSTATEs that mean busy: lock_not_available, query_canceled, too_many_connections,
 * serialization_failure, deadlock_detected, idle_in_transaction_session_timeout.
 */
const BUSY_SQLSTATES: Record<string, DatabaseTimeout> = {
  "55P03": "lock",
  "57014": "statement",
  "53300": "connections",
  "40001": "conflict",
  "40P01": "conflict",
  "25P03": "idle",
};

/** node-postgres's own messages for its client-side timeouts (its errors carry no code). */
const BUSY_PG_MESSAGES: Record<string, DatabaseTimeout> = {
  "timeout exceeded when trying to connect": "connect",
  "Connection terminated due to connection timeout": "connect",
  "Query read timeout": "statement",
  "Client was closed and is not queryable": "lost",
  "Client has encountered a connection error and is not queryable": "lost",
  "Connection terminated unexpectedly": "lost",
};

/**
 * Prisma's codes: P2024 its pool's timeout; P2028 "Transaction API error", a transaction Prisma
 * closed and rolled back (it expired, it could not start within maxWait, a statement came after it
 * was rolled back, Prisma no longer knows it); P2034 a write conflict or deadlock. One P2028 is a
 * bug, not load: a statement on a transaction that already committed (PRISMA_TX_USED_AFTER_COMMIT).
 */
const PRISMA_BUSY_CODES: Record<string, DatabaseTimeout> = {
  P2024: "connect",
  P2028: "transaction",
  P2034: "conflict",
};

const PRISMA_TX_USED_AFTER_COMMIT = /on a committed transaction/;

/** Seconds a client should wait before retrying a busy answer (the Retry-After header). */
export const BUSY_RETRY_AFTER_S = 1;

/** Which database timeout e is, however Prisma wrapped it, or null. */
export function databaseTimeoutOf(
  e: unknown,
  depth = 0,
): { kind: DatabaseTimeout; sqlState?: string } | null {
  if (depth > 6 || e === null || typeof e !== "object") return null;
  const o = e as Record<string, unknown>;
  for (const key of ["code", "originalCode"]) {
    const v = o[key];
    if (typeof v === "string" && Object.hasOwn(BUSY_SQLSTATES, v)) {
      return { kind: BUSY_SQLSTATES[v]!, sqlState: v };
    }
  }
  const prismaCode = o["code"];
  if (
    typeof prismaCode === "string" &&
    Object.hasOwn(PRISMA_BUSY_CODES, prismaCode) &&
    !(typeof o["message"] === "string" && PRISMA_TX_USED_AFTER_COMMIT.test(o["message"]))
  ) {
    return { kind: PRISMA_BUSY_CODES[prismaCode]! };
  }
  if (e instanceof Error && Object.hasOwn(BUSY_PG_MESSAGES, e.message)) {
    return { kind: BUSY_PG_MESSAGES[e.message]! };
  }
  // Prisma wraps the pg error: P2010 { meta: { driverAdapterError: { cause: { code } } } }.
  for (const key of ["meta", "driverAdapterError", "cause"]) {
    const found = databaseTimeoutOf(o[key], depth + 1);
    if (found) return found;
  }
  return null;
}

/**
 * A TideError "busy" (503, Retry-After BUSY_RETRY_AFTER_S) when e is a database timeout
 * (databaseTimeoutOf: connect, lock, statement, transaction, no connection to spare, a conflict
 * PostgreSQL rolled back, an idle transaction ended), however
 * Prisma wrapped it; otherwise null.
 */
export function busyErrorFrom(e: unknown): TideError | null {
  const timeout = databaseTimeoutOf(e);
  if (!timeout) return null;
  return new TideError(
    "busy",
    `The database is busy (${BUSY_WORDS[timeout.kind]}); nothing was changed. Retry in a moment.`,
    {
      timeout: timeout.kind,
      ...(timeout.sqlState ? { sqlState: timeout.sqlState } : {}),
      retryAfterS: BUSY_RETRY_AFTER_S,
    },
  );
}
