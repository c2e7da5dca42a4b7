import { readdirSync, readFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { newId } from "@tide/contracts";
import { testHello } from "@tide/contracts/testing";
import { sample } from "@tide/diagnostics/fixtures";
import { createDb, type Db } from "@tide/db";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { Actor } from "../auth/actor";
import { hostFromToken } from "../auth/host-tokens.service";
import { busyErrorFrom, databaseTimeoutOf } from "../db";
import { callerFor, makePool, makeUser, truncateAll } from "../testing/fixtures";
import { createCallerFactory, publicProcedure, router } from "../trpc";
import { ingestDirect } from "./ingest-route";
import { handleRestRequest, handleTrpcRequest } from "./routes";
import { handleTableDownload } from "./table-download";

/**
 * Issue 26 item 6: every kind of database timeout is answered 503 busy with Retry-After, on REST
 * (explain, the route that answered 500 with an empty body), tRPC and the agents' routes (desired
 * state, which answered "Internal error"), never 500. Each kind is provoked for real against the
 * integration tier's PostgreSQL: a pool of one connection held by a transaction, a server that
 * never answers, a table locked by another session, a database that takes no more connections.
 * db.ts databaseTimeoutOf says what each looks like.
 */

const url = () => inject("databaseUrl");
let db: Db;
let admin: Actor;
let apiToken: string;
let hostToken: string;
let poolId: string;
let versionId: string;
let version: number;
const HOSTNAME = "lb-busy-1";

beforeAll(async () => {
  db = createDb(url(), { max: 4 });
  await truncateAll(db);
  admin = await makeUser(db, "admin");
  const api = callerFor(db, admin);
  apiToken = (await api.tokens.create({ name: "ops", scopes: ["read", "operate", "admin"] })).token;
  hostToken = (await api.hostTokens.create({ hostname: HOSTNAME })).token;
  const pool = await makePool(db, "busy", 3);
  poolId = pool.id;
  const latest = await db.tableVersion.findFirstOrThrow({
    where: { poolId },
    orderBy: { version: "desc" },
    select: { id: true, version: true },
  });
  versionId = latest.id;
  version = latest.version;
  expect((await agentHello(db)).status).toBe(200);
});
afterAll(async () => {
  await db.$disconnect();
});

interface Reply {
  status: number;
  retryAfter: string | null;
  /** REST: { message, code, data }; tRPC: { error: { message, code, data } }; others { code, message }. */
  body: Record<string, unknown>;
}

async function reply(res: Response): Promise<Reply> {
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    body = { text };
  }
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body };
}

function request(method: string, path: string, token: string, body?: string): Request {
  const headers = new Headers({ authorization: `Bearer ${token}` });
  if (body !== undefined) headers.set("content-type", "application/json");
  return new Request(`http://localhost${path}`, { method, headers, body: body ?? null });
}

const agentHello = async (on: Db) =>
  reply(
    await handleRestRequest(
      request("POST", "/api/v1/agent/hello", hostToken, JSON.stringify(testHello(HOSTNAME))),
      { db: on },
    ),
  );

/** A batch of two samples taken just now, as an agent sends it. */
function batch(): string {
  const now = Math.floor(Date.now() / 1000) * 1000;
  const observations = [0, 1].map((i) => ({
    ...sample(i, { hostId: HOSTNAME }),
    sampledAt: new Date(now - (2 - i) * 1000).toISOString(),
  }));
  return JSON.stringify({ observations, dataPlane: [], replayed: false });
}

/**
 * The routes of the issue, each on `on`: REST explain and the table download (API token), tRPC
 * pools.list over HTTP (API token), and the agent's desired state, hello and batch (host token).
 */
async function routes(on: Db): Promise<Record<string, Reply>> {
  const [explain, download, trpc, desired, hello, observations] = await Promise.all([
    handleRestRequest(
      request("GET", `/api/v1/tables/${versionId}/explain?srcAddr=198.51.100.9&srcPort=40000`, apiToken),
      { db: on },
    ).then(reply),
    handleTableDownload({
      headers: new Headers({ authorization: `Bearer ${apiToken}` }),
      poolId,
      version: String(version),
      db: on,
    }).then(reply),
    handleTrpcRequest(request("GET", "/api/trpc/pools.list", apiToken), { db: on }).then(reply),
    handleRestRequest(request("GET", "/api/v1/agent/desired", hostToken), { db: on }).then(reply),
    agentHello(on),
    handleRestRequest(request("POST", "/api/v1/agent/observations", hostToken, batch()), { db: on }).then(
      reply,
    ),
  ]);
  return { explain, download, trpc, desired, hello, observations };
}

/** The error of a reply, whichever shape its route answers in. */
function errorOf(r: Reply): { message?: unknown; tideCode?: unknown; httpStatus?: unknown } {
  const inner = (r.body["error"] ?? r.body) as Record<string, unknown>;
  const data = (inner["data"] ?? {}) as Record<string, unknown>;
  return {
    message: inner["message"],
    tideCode: data["tideCode"] ?? inner["code"],
    httpStatus: data["httpStatus"],
  };
}

/** Every reply is 503 busy, says why in `words`, and says when to retry. */
function expectBusy(replies: Record<string, Reply>, words: RegExp): void {
  for (const [route, r] of Object.entries(replies)) {
    const error = errorOf(r);
    expect({ route, status: r.status, tideCode: error.tideCode }).toEqual({
      route,
      status: 503,
      tideCode: "busy",
    });
    expect(error.message, route).toMatch(/^The database is busy \(/);
    expect(error.message, route).toMatch(words);
    expect(Number(r.retryAfter), route).toBeGreaterThanOrEqual(1);
  }
  // tRPC's own shape: the JSON-RPC error with the HTTP status it was sent with.
  expect(errorOf(replies["trpc"]!).httpStatus).toBe(503);
}

/**
 * Hold every connection of `on`'s pool (size `connections`) in open transactions until the returned
 * function is called, as requests that are slow to finish hold them under load.
 */
async function holdConnections(on: Db, connections: number): Promise<() => Promise<void>> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const holding: Promise<unknown>[] = [];
  const taken: Promise<void>[] = [];
  for (let i = 0; i < connections; i++) {
    let took!: () => void;
    taken.push(new Promise<void>((resolve) => (took = resolve)));
    holding.push(
      on.$transaction(
        async (tx) => {
          await tx.$queryRaw`SELECT 1`;
          took();
          await released;
        },
        { maxWait: 10_000, timeout: 60_000 },
      ),
    );
  }
  await Promise.all(taken);
  return async () => {
    release();
    await Promise.all(holding);
  };
}

/**
 * Lock the tables the routes read (not the token tables) from another session until the returned
 * function is called: a request that reads them waits for the lock like one behind a long change.
 */
async function lockTables(): Promise<() => Promise<void>> {
  const holder = createDb(url(), { max: 1, lockTimeoutMs: 0, statementTimeoutMs: 0, queryTimeoutMs: 1_000 });
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const tx = holder.$transaction(
    async (t) => {
      await t.$executeRawUnsafe(
        "LOCK TABLE pools, table_versions, hosts, observation_samples IN ACCESS EXCLUSIVE MODE",
      );
      locked();
      await released;
    },
    { timeout: 60_000 },
  );
  await isLocked;
  return async () => {
    release();
    await tx;
    await holder.$disconnect();
  };
}

/** A fresh client on the test database that has answered once (its host-token cache is warm). */
async function warmClient(options: Parameters<typeof createDb>[1]): Promise<Db> {
  const on = createDb(url(), options);
  expect((await agentHello(on)).status).toBe(200);
  return on;
}

describe("a connect timeout (no connection within connectionTimeoutMillis)", () => {
  it("when every pool connection is taken: 503 busy everywhere, within the timeout", async () => {
    // The host token is cached by the warm-up: the agent's routes reach their procedure and time
    // out inside it (the "Internal error" on desired state); the API token's lookup times out
    // before any procedure runs (the empty 500 on explain).
    const on = await warmClient({ max: 1, connectTimeoutMs: 300 });
    const release = await holdConnections(on, 1);
    try {
      const raw = await on.pool.findMany().then(
        () => null,
        (e: unknown) => e,
      );
      expect(raw).toBeInstanceOf(Error);
      expect((raw as Error).message).toBe("timeout exceeded when trying to connect");
      expect(databaseTimeoutOf(raw)).toEqual({ kind: "connect" });

      const started = Date.now();
      expectBusy(await routes(on), /no database connection was free in time/);
      // Before an agent gives up on the call (its time limit: 10 s), cold code paths included.
      expect(Date.now() - started).toBeLessThan(10_000);

      // The agents' direct batch path hands the timeout on, to be answered at once, instead of
      // running the batch again through the adapter (a second wait for a connection).
      const host = (await hostFromToken(db, hostToken))!;
      const body = batch();
      const direct = await ingestDirect({ db: on, actor: null, host }, JSON.parse(body), body).then(
        () => null,
        (e: unknown) => e,
      );
      expect(databaseTimeoutOf(direct)).toEqual({ kind: "connect" });
    } finally {
      await release();
      await on.$disconnect();
    }
    expect(await db.observationSample.count()).toBe(0);
  });

  it("when a new connection does not open (a frozen server): 503 busy everywhere", async () => {
    // A server that accepts connections and never says a word, like a frozen PostgreSQL.
    const sockets: Socket[] = [];
    const server: Server = createServer((s) => sockets.push(s));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    const frozen = createDb(`postgresql://tide@127.0.0.1:${port}/tide`, { max: 4, connectTimeoutMs: 300 });
    try {
      const raw = await frozen.pool.findMany().then(
        () => null,
        (e: unknown) => e,
      );
      expect((raw as Error).message).toBe("Connection terminated due to connection timeout");
      expect(databaseTimeoutOf(raw)).toEqual({ kind: "connect" });
      expectBusy(await routes(frozen), /no database connection was free in time/);
    } finally {
      for (const s of sockets) s.destroy();
      server.close();
      await frozen.$disconnect().catch(() => undefined);
    }
  });
});

describe("timeouts of a statement that waits", () => {
  it("lock_timeout (55P03): 503 busy everywhere", async () => {
    const on = await warmClient({ max: 8, lockTimeoutMs: 200 });
    const unlock = await lockTables();
    try {
      expectBusy(await routes(on), /a row it needs is locked/);
    } finally {
      await unlock();
      await on.$disconnect();
    }
  });

  it("statement_timeout (57014): 503 busy everywhere", async () => {
    // The lock outlasts the statement's own bound: the statement is cancelled, not the lock wait.
    const on = await warmClient({ max: 8, lockTimeoutMs: 30_000, statementTimeoutMs: 200 });
    const unlock = await lockTables();
    try {
      expectBusy(await routes(on), /a statement took too long/);
    } finally {
      await unlock();
      await on.$disconnect();
    }
  });

  it("the client's query_timeout, for a server that does not answer: 503 busy", async () => {
    // statement_timeout off, so only the client's own bound (query_timeout) ends it.
    const on = await warmClient({ max: 8, lockTimeoutMs: 0, statementTimeoutMs: 0, queryTimeoutMs: 1_000 });
    const unlock = await lockTables();
    try {
      expectBusy(await routes(on), /a statement took too long/);
    } finally {
      await unlock();
      await on.$disconnect();
    }
  });
});

describe("Prisma transaction timeouts (P2028)", () => {
  it("a transaction that cannot start within maxWait: SERVICE_UNAVAILABLE from the procedure", async () => {
    // The pool's wait (10 s) outlasts the transaction's maxWait (5 s, TRANSACTION_OPTIONS): the
    // connection comes free after 5.5 s, so the transaction starts, too late, and Prisma ends it.
    const on = createDb(url(), { max: 1, connectTimeoutMs: 10_000 });
    const release = await holdConnections(on, 1);
    const freed = setTimeout(() => void release(), 5_500);
    try {
      const error = await callerFor(on, admin)
        .directors.assignPool({ directorId: newId("director"), poolId })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(TRPCError);
      expect((error as TRPCError).code).toBe("SERVICE_UNAVAILABLE");
      expect((error as TRPCError).message).toMatch(/^The database is busy \(a transaction took too long\)/);
      // The middleware's TideError, with what the REST adapter's Retry-After and the log need.
      expect((error as TRPCError).cause).toMatchObject({
        code: "busy",
        details: { timeout: "transaction", retryAfterS: 1 },
      });
    } finally {
      clearTimeout(freed);
      await release();
      await on.$disconnect();
    }
  }, 20_000);

  it("a transaction that outlives its timeout: SERVICE_UNAVAILABLE from the procedure", async () => {
    // No procedure's transaction can be made to last 15 s on demand; one of a test router goes
    // through the same middleware (trpc.ts tideErrors) with a transaction of 200 ms that is slow.
    const slowRouter = router({
      slow: publicProcedure.query(({ ctx }) =>
        ctx.db.$transaction(
          async (tx) => {
            await new Promise((resolve) => setTimeout(resolve, 400));
            return tx.$queryRaw`SELECT 1`;
          },
          { timeout: 200 },
        ),
      ),
    });
    const error = await createCallerFactory(slowRouter)({ db, actor: null })
      .slow()
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect((error as TRPCError).code).toBe("SERVICE_UNAVAILABLE");
    expect((error as TRPCError).message).toMatch(/a transaction took too long/);
    expect((error as TRPCError).cause).toMatchObject({ code: "busy", details: { timeout: "transaction" } });
  });
});

/** A router of test procedures that run what a request's transaction could meet, through trpc.ts. */
function testCaller(on: Db, procedures: Record<string, (on: Db) => Promise<unknown>>) {
  const routes = Object.fromEntries(
    Object.entries(procedures).map(([name, run]) => [
      name,
      publicProcedure.mutation(({ ctx }) => run(ctx.db)),
    ]),
  );
  return createCallerFactory(router(routes))({ db: on, actor: null }) as unknown as Record<
    string,
    () => Promise<unknown>
  >;
}

const settled = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e,
  );

/** The procedure's error is 503 busy, for the reason `kind`, with a Retry-After. */
function expectBusyError(error: unknown, kind: string, words: RegExp): void {
  expect(error).toBeInstanceOf(TRPCError);
  expect((error as TRPCError).code).toBe("SERVICE_UNAVAILABLE");
  expect((error as TRPCError).message).toMatch(/^The database is busy \(/);
  expect((error as TRPCError).message).toMatch(words);
  expect((error as TRPCError).cause).toMatchObject({
    code: "busy",
    details: { timeout: kind, retryAfterS: 1 },
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("conflicts PostgreSQL resolves by rolling a transaction back (issue 27 item 5)", () => {
  it("a deadlock (40P01): the transaction chosen to end answers 503 busy", async () => {
    const on = createDb(url(), { max: 4, lockTimeoutMs: 10_000 });
    const [a, b] = [await makePool(db, "deadlock-a", 1), await makePool(db, "deadlock-b", 1)];
    // Each locks one pool, then (once the other holds its own) the other's: PostgreSQL ends one.
    const both = { n: 0 };
    const lockInOrder = (first: string, second: string) => (c: Db) =>
      c.$transaction(
        async (tx) => {
          await tx.$queryRaw`SELECT id FROM pools WHERE id = ${first} FOR UPDATE`;
          both.n++;
          while (both.n < 2) await sleep(10);
          await tx.$queryRaw`SELECT id FROM pools WHERE id = ${second} FOR UPDATE`;
        },
        { timeout: 20_000 },
      );
    try {
      const caller = testCaller(on, { ab: lockInOrder(a.id, b.id), ba: lockInOrder(b.id, a.id) });
      const errors = (await Promise.all([settled(caller["ab"]!()), settled(caller["ba"]!())])).filter(
        Boolean,
      );
      expect(errors).toHaveLength(1);
      expectBusyError(errors[0], "conflict", /another change touched the same rows/);
    } finally {
      await on.$disconnect();
    }
  });

  it("a serialization failure (40001): 503 busy, not 500", async () => {
    const on = createDb(url(), { max: 4 });
    const pool = await makePool(db, "serial", 1);
    let read!: () => void;
    const hasRead = new Promise<void>((resolve) => (read = resolve));
    try {
      const caller = testCaller(on, {
        // Reads the pool in a repeatable-read snapshot, then updates it after another session did.
        stale: (c) =>
          c.$transaction(
            async (tx) => {
              await tx.$queryRaw`SELECT description FROM pools WHERE id = ${pool.id}`;
              read();
              await sleep(300);
              await tx.$executeRaw`UPDATE pools SET description = 'stale' WHERE id = ${pool.id}`;
            },
            { isolationLevel: "RepeatableRead", timeout: 10_000 },
          ),
      });
      const stale = settled(caller["stale"]!());
      await hasRead;
      await db.$executeRaw`UPDATE pools SET description = 'fresh' WHERE id = ${pool.id}`;
      const error = await stale;
      expectBusyError(error, "conflict", /another change touched the same rows/);
    } finally {
      await on.$disconnect();
    }
  });

  it("idle_in_transaction_session_timeout (25P03): 503 busy, and the connection goes back to the pool", async () => {
    // A transaction that waits between its statements longer than the session may sit idle in it.
    // One connection: had the ended session's connection not gone back to the pool (Prisma only
    // returns it after a ROLLBACK, which fails on it), the statement after would wait in vain.
    const on = createDb(url(), { max: 1, idleInTransactionTimeoutMs: 200, connectTimeoutMs: 2_000 });
    try {
      const caller = testCaller(on, {
        stalled: (c) =>
          c.$transaction(
            async (tx) => {
              await tx.$queryRaw`SELECT 1`;
              await sleep(700);
              await tx.$queryRaw`SELECT 1`;
            },
            { timeout: 10_000 },
          ),
      });
      const error = await settled(caller["stalled"]!());
      expect((error as TRPCError).code).toBe("SERVICE_UNAVAILABLE");
      expect((error as TRPCError).cause).toMatchObject({ code: "busy", details: { retryAfterS: 1 } });
      expect((error as TRPCError).message).toMatch(
        /a transaction was left waiting too long|the connection to it was lost/,
      );
      expect(await on.$queryRaw`SELECT 1 AS one`).toEqual([{ one: 1 }]);
    } finally {
      await on.$disconnect();
    }
  });
});

/** The pids of the PostgreSQL cluster behind the integration URL: its postmaster and every child. */
function clusterPids(backendPid: number): number[] {
  const parentOf = (pid: number) =>
    Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
  const postmaster = parentOf(backendPid);
  const children = readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => {
      try {
        return parentOf(pid) === postmaster;
      } catch {
        return false; // gone meanwhile
      }
    });
  return [postmaster, ...children];
}

/** SIGSTOP the whole cluster (postmaster and backends), as a frozen database; returns the thaw. */
async function freezeCluster(on: Db): Promise<() => void> {
  const [row] = await on.$queryRaw<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
  const pid = row!.pid;
  const pids = clusterPids(pid);
  for (const p of pids) process.kill(p, "SIGSTOP");
  return () => {
    for (const p of pids) {
      try {
        process.kill(p, "SIGCONT");
      } catch {
        // exited meanwhile (a backend whose client closed its socket)
      }
    }
  };
}

describe("a frozen database (SIGSTOP) (issue 27 item 5)", () => {
  const STATEMENT_MS = 1_000;
  const CONNECT_MS = 1_000;

  it("a request holding a connection fails within the statement timeout, 503 busy; no connection comes back inside its transaction", async () => {
    const on = await warmClient({ max: 4, statementTimeoutMs: STATEMENT_MS, connectTimeoutMs: CONNECT_MS });
    // Four idle connections in the pool, so the requests below take connections that exist.
    await Promise.all([0, 1, 2, 3].map(() => on.$queryRaw`SELECT 1 FROM pg_sleep(0.05)`));
    let thaw: (() => void) | undefined;
    try {
      // A transaction already running when the database freezes: its next statement waits out the
      // statement timeout once, not once more for the ROLLBACK after it (2 x 20 s before).
      const inTransaction = on.$transaction(
        async (tx) => {
          await tx.$queryRaw`SELECT 1`;
          thaw = await freezeCluster(db);
          const frozenAt = Date.now();
          const error = await settled(tx.$queryRaw`SELECT 2`);
          return { error, waitedMs: Date.now() - frozenAt };
        },
        { timeout: 30_000 },
      );
      const failed = await settled(inTransaction);
      expect(databaseTimeoutOf(failed)?.kind).toMatch(/^(statement|lost)$/);
      const started = Date.now();
      const replies = await routes(on);
      const tookMs = Date.now() - started;
      expectBusy(
        replies,
        /a statement took too long|no database connection was free in time|the connection to it was lost/,
      );
      // Each route's statement is abandoned after STATEMENT_MS; a new connection (to the frozen
      // postmaster) after CONNECT_MS. Not statement + 5 s, and not twice for a transaction.
      console.log(`frozen database: every route answered 503 busy in ${tookMs} ms`);
      expect(tookMs).toBeLessThan(STATEMENT_MS + CONNECT_MS + 1_500);
    } finally {
      thaw?.();
    }
    try {
      // Thawed: no connection handed out again sits inside a transaction begun before the freeze
      // (now() is the transaction's start, statement_timestamp() this statement's).
      const fresh = await Promise.all(
        Array.from(
          { length: 8 },
          () => on.$queryRaw<{ fresh: boolean }[]>`SELECT now() = statement_timestamp() AS fresh`,
        ),
      );
      expect(fresh.map((r) => r[0]!.fresh)).toEqual(Array(8).fill(true));
    } finally {
      await on.$disconnect();
    }
  }, 60_000);
});

describe("a database that takes no more connections (53300)", () => {
  it("is busy, not broken: 503 everywhere", async () => {
    // Its connection is opened before the limit, to lift it again after (refusals come at once,
    // well within the 10 s an idle pg connection is kept).
    const owner = createDb(url(), { max: 1 });
    const name = new URL(url()).pathname.slice(1);
    await owner.$executeRawUnsafe(`ALTER DATABASE "${name}" CONNECTION LIMIT 0`);
    const on = createDb(url(), { max: 4 });
    try {
      const raw = await on.pool.findMany().then(
        () => null,
        (e: unknown) => e,
      );
      expect(databaseTimeoutOf(raw)).toEqual({ kind: "connections", sqlState: "53300" });
      expectBusy(await routes(on), /it has no connection to spare/);
    } finally {
      await owner.$executeRawUnsafe(`ALTER DATABASE "${name}" CONNECTION LIMIT -1`);
      await owner.$disconnect();
      await on.$disconnect().catch(() => undefined);
    }
  });
});

describe("errors that are not database timeouts", () => {
  it("stay what they are", async () => {
    const syntax = await db.$queryRawUnsafe("SELEC 1").then(
      () => null,
      (e: unknown) => e,
    );
    expect(syntax).not.toBeNull();
    expect(busyErrorFrom(syntax)).toBeNull();
    expect(busyErrorFrom(new Error("timeout exceeded"))).toBeNull();
    // A route that works answers as usual on the shared client.
    const explain = await reply(
      await handleRestRequest(
        request("GET", `/api/v1/tables/${versionId}/explain?srcAddr=198.51.100.9&srcPort=40000`, apiToken),
        { db },
      ),
    );
    expect(explain.status).toBe(200);
  });
});
