import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient, type Prisma } from "@prisma/client";
import pg from "pg";

export type Db = PrismaClient;

/**
 * Bounds on every connection, so a stuck database or a held row lock becomes an error the API
 * turns into 503 "busy, retry" instead of a request that hangs:
 * - lockTimeoutMs (lock_timeout, 3 s): pool row locks are held for milliseconds while a table is
 *   rebuilt, so 3 s of waiting means something else holds the lock; a drain answers busy in ~3 s.
 * - statementTimeoutMs (15 s): statement_timeout on the server, and the client's own bound on
 *   every statement (node-postgres `query_timeout`, the same 15 s): a frozen server (SIGSTOP, a
 *   network partition) cannot enforce its own timeout, so a request that already holds a
 *   connection gives up after the statement timeout, not later. The client then closes that
 *   connection (BoundedClient): the statement may still be running, or its transaction still
 *   open, on a server that wakes up again. It is also the interactive transactions' own bound
 *   (TRANSACTION_OPTIONS.timeout); no request-path statement should come near it.
 * - idleInTransactionTimeoutMs (60 s): a client that dies mid-transaction frees its locks.
 * - connectTimeoutMs (5 s): waiting for a free pool connection, or for a new one to open.
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
  /** statement_timeout, and the client's query_timeout unless queryTimeoutMs says otherwise; 0: none. */
  statementTimeoutMs?: number;
  /** The client's own bound on a statement (query_timeout); default statementTimeoutMs; 0: none. */
  queryTimeoutMs?: number;
  idleInTransactionTimeoutMs?: number;
  /** connectionTimeoutMillis: waiting for a free pool connection, or for a new one to open. */
  connectTimeoutMs?: number;
}

/** node-postgres's error for a statement that outlived query_timeout. */
const QUERY_READ_TIMEOUT = "Query read timeout";

/**
 * A node-postgres client that closes its connection when a statement outlives query_timeout, and
 * goes back to its pool when its connection ends while it is checked out.
 * - node-postgres only stops waiting for a statement past query_timeout: the connection stays open,
 *   with the statement (and, in a Prisma transaction, its BEGIN) still pending on the server.
 *   Prisma's adapter gives a transaction's connection back to the pool without an error whatever
 *   happened, so once the server answered again the next request on that connection would have
 *   run inside the abandoned transaction. Closing it also makes the ROLLBACK that follows fail at
 *   once instead of waiting out a second query_timeout on a frozen server.
 * - Prisma gives a transaction's connection back only after its ROLLBACK succeeds; on a connection
 *   that is gone (closed above, or ended by the server: idle_in_transaction_session_timeout, a
 *   restart) the ROLLBACK fails and the connection was never returned: one pool slot lost for
 *   good each time, until every request waited for a connection that never came.
 */
class BoundedClient extends pg.Client {
  /** The pool's release of this checkout (pg-pool assigns client.release on every checkout). */
  private releaseToPool: ((err?: Error | boolean) => void) | null = null;

  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on("end", () => this.release(new Error("The database connection ended while in use.")));
  }

  // An accessor, so the pool's assignment is caught: the connection's end releases the checkout,
  // and the caller's own release after that is a no-op instead of pg-pool's double-release throw.
  get release(): (err?: Error | boolean) => void {
    return (err) => {
      const release = this.releaseToPool;
      this.releaseToPool = null;
      release?.(err);
    };
  }

  set release(fn: (err?: Error | boolean) => void) {
    this.releaseToPool = fn;
  }

  // node-postgres's overloads (text or config, values or callback, callback): wrap whichever
  // callback there is, and watch the promise when there is none.
  override query(...args: unknown[]): never {
    const last = args.length - 1;
    if (last >= 0 && typeof args[last] === "function") {
      const callback = args[last] as (err: unknown, ...rest: unknown[]) => void;
      args[last] = (err: unknown, ...rest: unknown[]) => {
        this.closeAfterTimeout(err);
        callback(err, ...rest);
      };
    }
    const result = (super.query as (...a: unknown[]) => unknown)(...args);
    if (result instanceof Promise) result.catch((err: unknown) => this.closeAfterTimeout(err));
    return result as never;
  }

  private closeAfterTimeout(err: unknown): void {
    if (err instanceof Error && err.message === QUERY_READ_TIMEOUT) {
      // end() with a statement in flight destroys the socket at once (no goodbye to a frozen server).
      this.end().catch(() => undefined);
    }
  }
}

/**
 * Interactive transactions allowed at once per client, of `max` connections: half the pool. A
 * transaction holds its connection while it waits for a pool's row lock, and some take a second
 * one for a read outside the transaction (the connection-impact prediction of a drain or a bind
 * change). With every connection held by transactions queued on one pool's lock, the lock holder
 * could not get its second connection: 200 concurrent drains on one pool finished 3 and answered
 * 197 busy after waiting out the lock and connect timeouts (http/pool-contention.integration-test.ts).
 * The other half stays free for those reads and for every request that is not a transaction.
 */
export function transactionSlotsFor(max: number): number {
  return Math.max(1, Math.floor(max / 2));
}

/** A transaction that found no slot within its maxWait; the API answers it 503 busy. */
export class TransactionStartTimeout extends Error {
  /** Prisma's code for a transaction that could not start within maxWait (the same condition). */
  readonly code = "P2028";
  constructor(waitedMs: number, slots: number) {
    super(
      `Unable to start a transaction in the given time: ${slots} transactions were running and none ended within ${waitedMs} ms.`,
    );
    this.name = "TransactionStartTimeout";
  }
}

/** Slots for transactions, handed out first come, first served; a waiter gives up after its maxWait. */
class TransactionSlots {
  private running = 0;
  private readonly waiting: { grant: () => void }[] = [];

  constructor(readonly limit: number) {}

  async run<T>(maxWaitMs: number, fn: (waitedMs: number) => Promise<T>): Promise<T> {
    const started = Date.now();
    if (this.running < this.limit) this.running++;
    else await this.wait(maxWaitMs);
    try {
      return await fn(Date.now() - started);
    } finally {
      const next = this.waiting.shift();
      if (next) next.grant();
      else this.running--;
    }
  }

  /** Resolves when a running transaction hands its slot over; rejects after maxWaitMs. */
  private wait(maxWaitMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        grant: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        const i = this.waiting.indexOf(waiter);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(new TransactionStartTimeout(maxWaitMs, this.limit));
      }, maxWaitMs);
      this.waiting.push(waiter);
    });
  }
}

/** Prisma's default maxWait (ms) for a transaction given none. */
const PRISMA_DEFAULT_MAX_WAIT_MS = 2_000;

/**
 * A Prisma client over node-postgres (driver adapter: no native query engine, works offline).
 * One per process; pass the URL explicitly (apps parse it in their env.ts). Its interactive
 * transactions (and sqlTransaction's) take one of transactionSlotsFor(max) slots first.
 */
export function createDb(databaseUrl: string, options: CreateDbOptions = {}): Db {
  const statementTimeoutMs = options.statementTimeoutMs ?? DB_TIMEOUTS.statementTimeoutMs;
  const max = options.max ?? 10;
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max,
    Client: BoundedClient,
    lock_timeout: options.lockTimeoutMs ?? DB_TIMEOUTS.lockTimeoutMs,
    statement_timeout: statementTimeoutMs,
    idle_in_transaction_session_timeout:
      options.idleInTransactionTimeoutMs ?? DB_TIMEOUTS.idleInTransactionTimeoutMs,
    connectionTimeoutMillis: options.connectTimeoutMs ?? DB_TIMEOUTS.connectTimeoutMs,
    query_timeout: options.queryTimeoutMs ?? statementTimeoutMs,
  });
  // The adapter ends the pool on $disconnect.
  const db = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  const slots = new TransactionSlots(transactionSlotsFor(max));
  const start = db.$transaction.bind(db) as (arg: unknown, o?: TransactionOptions) => Promise<unknown>;
  const gated = (arg: unknown, o?: TransactionOptions) => {
    const maxWait = o?.maxWait ?? PRISMA_DEFAULT_MAX_WAIT_MS;
    // The slot's wait counts against maxWait; Prisma gets what is left to find a connection.
    return slots.run(maxWait, (waited) => start(arg, { ...o, maxWait: Math.max(1, maxWait - waited) }));
  };
  Object.defineProperty(db, "$transaction", { value: gated, configurable: true, writable: true });
  pools.set(db, pool);
  slotsOf.set(db, slots);
  return db;
}

interface TransactionOptions {
  maxWait?: number;
  timeout?: number;
  isolationLevel?: Prisma.TransactionIsolationLevel;
}

const slotsOf = new WeakMap<object, TransactionSlots>();

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
  const slots = slotsOf.get(db);
  if (!pool || !slots) {
    return db.$transaction((tx) => fn((sql, params = []) => tx.$queryRawUnsafe(sql, ...params)), {
      maxWait: DB_TIMEOUTS.connectTimeoutMs,
      timeout: options.timeoutMs,
    });
  }
  return slots.run(DB_TIMEOUTS.connectTimeoutMs, () => poolTransaction(pool, fn));
}

async function poolTransaction<T>(pool: pg.Pool, fn: (query: SqlQuery) => Promise<T>): Promise<T> {
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
