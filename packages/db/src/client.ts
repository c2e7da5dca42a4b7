import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient, type Prisma } from "@prisma/client";
import pg from "pg";

export type Db = PrismaClient;

/**
 * Bounds on every connection, so a stuck database or a held row lock becomes an error the API
 * turns into 503 "busy, retry" instead of a request that hangs:
 * - lockTimeoutMs (lock_timeout, 3 s): pool row locks are held for milliseconds while a table is
 *   rebuilt, so 3 s of waiting means something else holds the lock; a drain answers busy in ~3 s.
 * - statementTimeoutMs (statement_timeout, 15 s): the interactive transactions' own bound
 *   (TRANSACTION_OPTIONS.timeout); no request-path statement should come near it. Work that
 *   legitimately runs longer (bulk retention deletes) sets its own with `SET LOCAL statement_timeout`.
 * - idleInTransactionTimeoutMs (60 s): a client that dies mid-transaction frees its locks.
 * - connectTimeoutMs (5 s) and queryTimeoutMs (statement + 5 s, enforced by the client): a frozen
 *   server (SIGSTOP, network partition) cannot enforce its own timeouts, so the client gives up.
 */
export const DB_TIMEOUTS = {
  lockTimeoutMs: 3_000,
  statementTimeoutMs: 15_000,
  idleInTransactionTimeoutMs: 60_000,
  connectTimeoutMs: 5_000,
} as const;

export interface CreateDbOptions {
  max?: number;
  lockTimeoutMs?: number;
  statementTimeoutMs?: number;
  /** connectionTimeoutMillis: waiting for a free pool connection, or for a new one to open. */
  connectTimeoutMs?: number;
}

/**
 * A Prisma client over node-postgres (driver adapter: no native query engine, works offline).
 * One per process; pass the URL explicitly (apps parse it in their env.ts).
 */
export function createDb(databaseUrl: string, options: CreateDbOptions = {}): Db {
  const statementTimeoutMs = options.statementTimeoutMs ?? DB_TIMEOUTS.statementTimeoutMs;
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.max ?? 10,
    lock_timeout: options.lockTimeoutMs ?? DB_TIMEOUTS.lockTimeoutMs,
    statement_timeout: statementTimeoutMs,
    idle_in_transaction_session_timeout: DB_TIMEOUTS.idleInTransactionTimeoutMs,
    connectionTimeoutMillis: options.connectTimeoutMs ?? DB_TIMEOUTS.connectTimeoutMs,
    query_timeout: statementTimeoutMs + 5_000,
  });
  // The adapter ends the pool on $disconnect.
  const db = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  pools.set(db, pool);
  return db;
}

const pools = new WeakMap<object, pg.Pool>();

/**
 * The node-postgres pool under a client made by createDb (the same connections Prisma uses), or
 * null for a transaction client. The telemetry hot paths (a statement per agent batch, two per
 * evaluation) run their fixed SQL on it directly: Prisma compiles and interprets every query, raw
 * ones included, in WebAssembly, which was a quarter of a busy console's CPU at 1,000 agents.
 */
export function pgPoolOf(client: Db | Prisma.TransactionClient): pg.Pool | null {
  return pools.get(client) ?? null;
}

/**
 * Where a repository function's statements run: a client (its pool), a Prisma transaction, or a
 * sqlTransaction's connection (its SqlQuery).
 */
export type SqlClient = Db | Prisma.TransactionClient | SqlQuery;

/**
 * Rows of `sql` (parameters $1, $2, … from `params`) in a sqlTransaction (`client` is its query),
 * or on the client's own node-postgres pool when it has one (pgPoolOf: the hot paths skip Prisma's
 * query compiler), else through Prisma (a transaction client). One SQL text for all three.
 */
export async function rawRows<T>(client: SqlClient, sql: string, params: unknown[]): Promise<T[]> {
  if (typeof client === "function") return client<T>(sql, params);
  const pool = pgPoolOf(client);
  if (pool) return (await pool.query(sql, params)).rows as T[];
  return client.$queryRawUnsafe<T[]>(sql, ...params);
}

/** Rows of one statement in a sqlTransaction ($1, $2, … from `params`). */
export type SqlQuery = <T>(sql: string, params?: unknown[]) => Promise<T[]>;

/**
 * Run `fn` in one transaction on a connection of the client's node-postgres pool (BEGIN … COMMIT,
 * ROLLBACK when it throws), or in a Prisma interactive transaction when the client has no pool.
 * For background work that moves megabytes a run (the telemetry compactor): Prisma converts every
 * row of a raw query's result in WebAssembly on the event loop, which at 1,000 hosts was a tenth of
 * the console's CPU. The pool's statement, lock and idle-in-transaction timeouts bound it
 * (DB_TIMEOUTS); `timeoutMs` bounds the Prisma fallback.
 */
export async function sqlTransaction<T>(
  db: Db,
  fn: (query: SqlQuery) => Promise<T>,
  options: { timeoutMs: number },
): Promise<T> {
  const pool = pgPoolOf(db);
  if (!pool) {
    return db.$transaction((tx) => fn((sql, params = []) => tx.$queryRawUnsafe(sql, ...params)), {
      maxWait: DB_TIMEOUTS.connectTimeoutMs,
      timeout: options.timeoutMs,
    });
  }
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query("BEGIN");
    const result = await fn(
      async <R>(sql: string, params: unknown[] = []) => (await client.query(sql, params)).rows as R[],
    );
    await client.query("COMMIT");
    return result;
  } catch (e) {
    await client.query("ROLLBACK").catch((rollbackError: unknown) => {
      // A connection that cannot roll back is not given back to the pool.
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    });
    throw e;
  } finally {
    client.release(broken);
  }
}
