import { createServer, type Server, type Socket } from "node:net";
import { createDb, type Db } from "@tide/db";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { SESSION_COOKIE } from "../auth/sessions";
import { busyErrorFrom, checkDatabase } from "../db";
import { hostFromToken } from "../auth/host-tokens.service";
import { callerFor, makePool, makeUser, restCall, truncateAll } from "../testing/fixtures";
import { sample } from "@tide/diagnostics/fixtures";
import { IngestAdmission } from "./ingest-admission";
import { ingestDirect } from "./ingest-route";
import { bodyLimitFor } from "./limits";
import { handleRestRequest, handleTrpcRequest, TRPC_MAX_BATCH_CALLS } from "./routes";

/** Issue 11 items 3, 5, 9 and the tRPC batch cap, through the handlers the console's routes call. */

let db: Db;

beforeAll(() => {
  db = createDb(inject("databaseUrl"), { max: 8 });
});
afterAll(async () => {
  await db.$disconnect();
});
beforeEach(async () => {
  await truncateAll(db);
});

interface Reply {
  status: number;
  headers: Headers;
  body: {
    message?: string;
    data?: { tideCode?: string };
    error?: { message?: string; data?: { tideCode?: string } };
  };
}

async function reply(res: Response): Promise<Reply> {
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Reply["body"]) : {} };
}

function request(
  method: string,
  path: string,
  opts: {
    token?: string;
    body?: string | Uint8Array | ReadableStream<Uint8Array> | null;
    contentType?: string | null;
    headers?: Record<string, string>;
    signal?: AbortSignal;
  } = {},
): Request {
  const headers = new Headers(opts.headers);
  if (opts.contentType !== null) headers.set("content-type", opts.contentType ?? "application/json");
  if (opts.token) headers.set("authorization", `Bearer ${opts.token}`);
  return new Request(`http://localhost${path}`, {
    method,
    headers,
    body: opts.body ?? null,
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.body instanceof ReadableStream ? { duplex: "half" } : {}),
  } as RequestInit);
}

const rest = async (method: string, path: string, opts: Parameters<typeof request>[2] = {}, restDb = db) =>
  reply(await handleRestRequest(request(method, `/api/v1${path}`, opts), { db: restDb }));

async function operateToken(): Promise<string> {
  const admin = await makeUser(db, "admin");
  return (await callerFor(db, admin).tokens.create({ name: "ops", scopes: ["read", "operate", "admin"] }))
    .token;
}

/** A body stream of `chunks` chunks of `chunkBytes`, counting how many were pulled. */
function countingStream(
  chunks: number,
  chunkBytes: number,
): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= chunks) return controller.close();
      pulled++;
      controller.enqueue(new Uint8Array(chunkBytes).fill(0x20));
    },
  });
  return { stream, pulled: () => pulled };
}

describe("odd input gets 400/415 with a plain message, never 500 (item 9)", () => {
  it("refuses NUL and lone surrogates in reasons, token names, PMTU reasons and audit filters", async () => {
    const token = await operateToken();
    const pool = await makePool(db, "web", 3);
    const proxy = pool.proxies[0]!;
    const host = await callerFor(db, await makeUser(db, "admin")).hostTokens.create({ hostname: "lb-odd-1" });
    const cases: [string, string, string, string][] = [
      ["POST", `/proxies/${proxy.id}/drain`, JSON.stringify({ reason: "kernel\u0000upgrade" }), "reason"],
      ["POST", `/proxies/${proxy.id}/drain`, '{"reason":"broken \\ud800 text"}', "reason"],
      ["POST", "/tokens", JSON.stringify({ name: "a\u0000b", scopes: ["read"] }), "name"],
      [
        "PUT",
        `/hosts/${host.summary.hostname}/pmtu-targets`,
        '{"targets":[],"reason":"\\udc00 lone"}',
        "reason",
      ],
    ];
    for (const [method, path, body, field] of cases) {
      const r = await rest(method, path, { token, body });
      expect(r.status, `${method} ${path} ${body}`).toBe(400);
      expect(r.body.data?.tideCode).toBe("bad_request");
      expect(r.body.message).toContain(field);
      expect(r.body.message).not.toMatch(/internal/i);
    }
    for (const query of ["targetId=%00", "targetId=a%00b", "cursor=%00"]) {
      const r = await rest("GET", `/audit?${query}`, { token, contentType: null });
      expect(r.status, query).toBe(400);
      expect(r.body.data?.tideCode).toBe("bad_request");
    }
    // Nothing was drained by any of them.
    expect(await db.proxy.findUniqueOrThrow({ where: { id: proxy.id } })).toMatchObject({ state: "active" });
  });

  it("refuses bodies that are not JSON objects and does not act on them", async () => {
    const token = await operateToken();
    const pool = await makePool(db, "web", 3);
    const proxy = pool.proxies[0]!;
    for (const body of ["null", "[1,2]", '"drain"', "42", "true"]) {
      const r = await rest("POST", `/proxies/${proxy.id}/drain`, { token, body });
      expect(r.status, body).toBe(400);
      expect(r.body.message).toMatch(/must be a JSON object/);
    }
    const invalid = await rest("POST", `/proxies/${proxy.id}/drain`, { token, body: "{reason:" });
    expect(invalid.status).toBe(400);
    expect(invalid.body.message).toMatch(/not valid JSON/);
    const notUtf8 = await rest("POST", `/proxies/${proxy.id}/drain`, {
      token,
      body: new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d]),
    });
    expect(notUtf8.status).toBe(400);
    expect(notUtf8.body.message).toMatch(/UTF-8/);
    expect(await db.proxy.findUniqueOrThrow({ where: { id: proxy.id } })).toMatchObject({ state: "active" });
  });

  it("answers a wrong method on an existing route with 405 and Allow, an unknown route with 404", async () => {
    const token = await operateToken();
    const get = await rest("GET", "/proxies/prx_abcdefabcdef00/drain", { token, contentType: null });
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    expect(get.body.message).toBe(
      "GET is not allowed on /api/v1/proxies/prx_abcdefabcdef00/drain; use POST.",
    );
    const del = await rest("DELETE", "/pools", { token, contentType: null });
    expect(del.status).toBe(405);
    expect(del.headers.get("allow")).toBe("GET, POST");
    const unknown = await rest("GET", "/no/such/route", { token, contentType: null });
    expect(unknown.status).toBe(404);
  });

  it("says what to send when a POST has no body or no JSON content type", async () => {
    const token = await operateToken();
    const pool = await makePool(db, "web", 3);
    const path = `/proxies/${pool.proxies[0]!.id}/drain`;
    const none = await rest("POST", path, { token, contentType: null });
    expect(none.status).toBe(400);
    expect(none.body.message).toMatch(/no body.*\{\} at least/);
    const empty = await rest("POST", path, { token, body: "" });
    expect(empty.status).toBe(400);
    const untyped = await rest("POST", path, { token, contentType: null, body: "{}" });
    expect(untyped.status).toBe(415);
    expect(untyped.body.data?.tideCode).toBe("unsupported_media_type");
    const text = await rest("POST", path, { token, contentType: "text/plain", body: "{}" });
    expect(text.status).toBe(415);
    expect(text.body.message).toMatch(/text\/plain/);
    // A JSON object with a charset is fine.
    const ok = await rest("POST", path, {
      token,
      contentType: "application/json; charset=utf-8",
      body: "{}",
    });
    expect(ok.status).toBe(200);
  });

  it("treats a session cookie with broken percent-encoding as no session, not a 500", async () => {
    const r = await rest("GET", "/pools", {
      contentType: null,
      headers: { cookie: `${SESSION_COOKIE}=%E0%A4%A` },
    });
    expect(r.status).toBe(401);
  });
});

describe("authentication before bodies, and body caps (item 3)", () => {
  it("answers 401 to an anonymous POST without reading its body", async () => {
    const big = countingStream(1000, 64 * 1024);
    const r = await rest("POST", "/pools", { body: big.stream });
    expect(r.status).toBe(401);
    expect(big.pulled()).toBeLessThanOrEqual(1);
    const revoked = await rest("POST", "/agent/observations", { token: "tide_host_nope", body: "{}" });
    expect(revoked.status).toBe(401);
    expect(revoked.body.message).toMatch(/host token/);

    const trpc = countingStream(1000, 64 * 1024);
    const t = await reply(
      await handleTrpcRequest(request("POST", "/api/trpc/pools.create", { body: trpc.stream }), { db }),
    );
    expect(t.status).toBe(401);
    expect(trpc.pulled()).toBeLessThanOrEqual(1);
  });

  it("answers 413 past the route's cap: by Content-Length at once, or while streaming", async () => {
    const token = await operateToken();
    const limit = bodyLimitFor("/pools");
    const declared = await rest("POST", "/pools", {
      token,
      body: "{}",
      headers: { "content-length": String(limit + 1) },
    });
    expect(declared.status).toBe(413);
    expect(declared.body.data?.tideCode).toBe("payload_too_large");
    expect(declared.body.message).toMatch(/1 MiB/);

    const chunkBytes = 64 * 1024;
    const streamed = countingStream(1000, chunkBytes);
    const r = await rest("POST", "/pools", { token, body: streamed.stream });
    expect(r.status).toBe(413);
    // Stopped reading just past the cap instead of taking all 64 MB.
    expect(streamed.pulled()).toBeLessThanOrEqual(limit / chunkBytes + 2);
  });

  it("gives agent ingest its own larger cap", async () => {
    const admin = await makeUser(db, "admin");
    const { token } = await callerFor(db, admin).hostTokens.create({ hostname: "lb-big-1" });
    expect(bodyLimitFor("/agent/observations")).toBeGreaterThan(bodyLimitFor("/pools"));
    // 2 MiB: over the general cap, under the agent's. It reaches validation (400), not 413.
    const padding = "x".repeat(2 * 1024 * 1024);
    const body = JSON.stringify({ padding });
    const agent = await rest("POST", "/agent/observations", { token, body });
    expect(agent.status).toBe(400);
    const adminToken = (await callerFor(db, admin).tokens.create({ name: "a", scopes: ["read", "admin"] }))
      .token;
    const general = await rest("POST", "/pools", { token: adminToken, body });
    expect(general.status).toBe(413);
  });

  it("caps tRPC batches", async () => {
    const admin = await makeUser(db, "admin");
    const token = (await callerFor(db, admin).tokens.create({ name: "a", scopes: ["read"] })).token;
    const batch = (n: number) =>
      request("GET", `/api/trpc/${Array.from({ length: n }, () => "auth.me").join(",")}?batch=1`, {
        token,
        contentType: null,
      });
    const over = await reply(await handleTrpcRequest(batch(TRPC_MAX_BATCH_CALLS + 1), { db }));
    expect(over.status).toBe(413);
    expect(over.body.error?.message).toMatch(/at most 50 calls/);
    const adminToken = (await callerFor(db, admin).tokens.create({ name: "b", scopes: ["read", "admin"] }))
      .token;
    const mutation = await handleTrpcRequest(
      request("POST", "/api/trpc/tokens.create", {
        token: adminToken,
        body: JSON.stringify({ name: "via trpc", scopes: ["read"] }),
      }),
      { db },
    );
    expect(mutation.status).toBe(200);
    const within = await handleTrpcRequest(batch(3), { db });
    expect(within.status).toBe(200);
    expect(((await within.json()) as unknown[]).length).toBe(3);
  });
});

describe("an agent's batch (items 6 and 7)", () => {
  const HOSTNAME = "lb-gone-1";
  async function batchBody() {
    const now = Math.floor(Date.now() / 1000) * 1000;
    const observations = Array.from({ length: 5 }, (_, i) => ({
      ...sample(i, { hostId: HOSTNAME }),
      sampledAt: new Date(now - (5 - i) * 1000).toISOString(),
    }));
    const dropped = { buffer_full: 12, refused: 1, in_future: 0, too_old: 3, spool_damaged: 0 };
    return JSON.stringify({ observations, dataPlane: [], replayed: true, dropped });
  }
  const stored = () => db.observationSample.count({ where: { host: { name: HOSTNAME } } });

  it("is not stored when its agent went away before the work began", async () => {
    const { token } = await callerFor(db, await makeUser(db, "admin")).hostTokens.create({
      hostname: HOSTNAME,
    });
    const bytes = new TextEncoder().encode(await batchBody());
    // The agent's timeout fires as the last byte arrives: the body is whole, its client is gone.
    const gone = new AbortController();
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes);
      },
      pull(c) {
        gone.abort();
        c.close();
      },
    });
    const r = await rest("POST", "/agent/observations", { token, body, signal: gone.signal });
    expect(r.status).toBe(499);
    expect(r.body.message).toMatch(/went away before its batch was stored; nothing was done/);
    expect(await stored()).toBe(0);

    // The same batch from an agent that waits is stored, with the agent's drop totals.
    const ok = await rest("POST", "/agent/observations", { token, body: bytes });
    expect(ok.status).toBe(200);
    expect(await stored()).toBe(5);
    const host = await db.host.findUniqueOrThrow({ where: { name: HOSTNAME } });
    expect(host.samplesDropped).toEqual({
      buffer_full: 12,
      refused: 1,
      in_future: 0,
      too_old: 3,
      spool_damaged: 0,
    });
    const seen = await rest("GET", `/hosts/${HOSTNAME}`, { token: await operateToken(), contentType: null });
    expect((seen.body as { samplesDropped?: unknown }).samplesDropped).toEqual(host.samplesDropped);
  });
});

describe("an agent's batch, answered directly or by the REST adapter", () => {
  const HOSTNAME = "lb-direct-1";
  function batch(from: number, to: number, hostId = HOSTNAME) {
    const now = Math.floor(Date.now() / 1000) * 1000;
    return {
      observations: Array.from({ length: to - from }, (_, i) => ({
        ...sample(from + i, { hostId }),
        sampledAt: new Date(now - (100 - from - i) * 1000).toISOString(),
      })),
      dataPlane: [],
      replayed: false,
    };
  }
  async function setup() {
    const { token } = await callerFor(db, await makeUser(db, "admin")).hostTokens.create({
      hostname: HOSTNAME,
    });
    const host = (await hostFromToken(db, token))!;
    return { token, ctx: { db, actor: null, host, hostTokenPresented: true } };
  }
  const stored = () => db.observationSample.count({ where: { host: { name: HOSTNAME } } });

  it("answers a valid batch directly, as the procedure would", async () => {
    const { token, ctx } = await setup();
    const first = batch(0, 5);
    const direct = await ingestDirect(ctx, first, JSON.stringify(first));
    expect(direct).not.toBeNull();
    const answered = await reply(direct!);
    expect(answered.status).toBe(200);
    expect(answered.headers.get("content-type")).toBe("application/json");
    expect(await stored()).toBe(5);
    // The REST adapter's answer to the next batch has the same shape.
    const adapter = await restCall(db, "POST", "/agent/observations", { token, body: batch(5, 10) });
    expect(adapter.status).toBe(200);
    expect(Object.keys(answered.body).sort()).toEqual(Object.keys(adapter.body!).sort());
    expect(answered.body).toMatchObject({ accepted: 5 });
    expect(adapter.body).toMatchObject({ accepted: 5 });
    // Through the route: stored, and a replay is refused sample by sample as duplicates.
    const routed = await rest("POST", "/agent/observations", { token, body: JSON.stringify(batch(10, 15)) });
    expect([routed.status, routed.body]).toMatchObject([200, { accepted: 5 }]);
    // Agents' answers are never compressed by the HTTP server (routes.ts notCompressed).
    expect(routed.headers.get("cache-control")).toBe("no-store, no-transform");
    const replay = await rest("POST", "/agent/observations", { token, body: JSON.stringify(batch(10, 15)) });
    expect(replay.body).toMatchObject({ accepted: 0 });
    expect((replay.body as { refused?: { reason: string }[] }).refused?.map((r) => r.reason)).toEqual(
      Array(5).fill("duplicate"),
    );
    expect(await stored()).toBe(15);
  });

  it("stores each sample kept as the agent sent it, also when the batch's first ones are refused", async () => {
    const { token } = await setup();
    const body = batch(0, 4);
    // Outside the retention window: refused, so the stored ones are the body's 2nd to 4th.
    body.observations[0]!.sampledAt = new Date(Date.now() - 2 * 86_400_000).toISOString();
    // Indented, as any JSON writer may send it.
    const routed = await rest("POST", "/agent/observations", { token, body: JSON.stringify(body, null, 2) });
    expect([routed.status, routed.body]).toMatchObject([200, { accepted: 3 }]);
    const rows = await db.observationSample.findMany({
      where: { host: { name: HOSTNAME } },
      orderBy: { sampledAt: "asc" },
      select: { sampledAt: true, payload: true },
    });
    expect(rows.map((r) => r.sampledAt.toISOString())).toEqual(
      body.observations.slice(1).map((o) => o.sampledAt),
    );
    expect(rows.map((r) => r.payload)).toEqual(body.observations.slice(1));
  });

  it("leaves every other batch to the REST adapter, which answers it word for word", async () => {
    const { token, ctx } = await setup();
    const bad = {
      invalid: { ...batch(0, 2), observations: [{ ...batch(0, 1).observations[0], sampledAt: 7 }] },
      unsafe: {
        ...batch(0, 2),
        observations: [{ ...batch(0, 1).observations[0], kernelRelease: "6.1\u0000" }],
      },
      surrogate: {
        ...batch(0, 2),
        observations: [{ ...batch(0, 1).observations[0], kernelRelease: "6.1\ud800" }],
      },
      foreign: batch(0, 2, "lb-someone-else"),
      empty: { dataPlane: [], replayed: false },
    };
    for (const [what, body] of Object.entries(bad)) {
      const text = JSON.stringify(body);
      expect(await ingestDirect(ctx, JSON.parse(text), text), what).toBeNull();
      const routed = await rest("POST", "/agent/observations", { token, body: text });
      const adapter = await restCall(db, "POST", "/agent/observations", { token, body: JSON.parse(text) });
      expect(routed.status, what).toBeGreaterThanOrEqual(400);
      expect([routed.status, routed.body], what).toEqual([adapter.status, adapter.body]);
    }
    expect(await stored()).toBe(0);
  });
});

describe("agent batches beyond what the console works on at once", () => {
  it("are answered 503 busy with Retry-After before their bodies are read, and nothing is stored", async () => {
    const { token } = await callerFor(db, await makeUser(db, "admin")).hostTokens.create({
      hostname: "lb-busy-1",
    });
    const admission = new IngestAdmission(1);
    // The first batch takes the only slot and stays in it while its body trickles in.
    let finish!: () => void;
    const open = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("{"));
        finish = () => {
          controller.enqueue(new TextEncoder().encode(' "observations": [] }'));
          controller.close();
        };
      },
    });
    const first = handleRestRequest(request("POST", "/api/v1/agent/observations", { token, body: open }), {
      db,
      admission,
    });
    await expect.poll(() => admission.active).toBe(1);

    const second = countingStream(4, 1024);
    const busy = await reply(
      await handleRestRequest(request("POST", "/api/v1/agent/observations", { token, body: second.stream }), {
        db,
        admission,
      }),
    );
    expect(busy.status).toBe(503);
    expect(busy.body.data?.tideCode).toBe("busy");
    expect(busy.body.message).toMatch(/busy.*1 agent batches.*retry/i);
    expect(Number(busy.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(second.pulled()).toBeLessThanOrEqual(1); // at most what the stream pre-fills
    expect(admission.refused).toBe(1);
    // Refused before the token is looked up (an overloaded console spends nothing on it): an
    // unknown host token is told busy now, and 401 once there is room (below).
    const unknown = await handleRestRequest(
      request("POST", "/api/v1/agent/observations", { token: "tide_host_unknown", body: "{}" }),
      { db, admission },
    );
    expect(unknown.status).toBe(503);
    expect(admission.refused).toBe(2);

    // Others than agents are not held up by it.
    const adminToken = await operateToken();
    expect((await rest("GET", "/hosts", { token: adminToken })).status).toBe(200);

    finish();
    expect((await reply(await first)).status).toBe(400); // an empty batch, validated as usual
    expect(admission.active).toBe(0);
    const third = await reply(
      await handleRestRequest(
        request("POST", "/api/v1/agent/observations", { token, body: '{"observations": []}' }),
        { db, admission },
      ),
    );
    expect(third.status).toBe(400);
    const unknownWithRoom = await handleRestRequest(
      request("POST", "/api/v1/agent/observations", { token: "tide_host_unknown", body: "{}" }),
      { db, admission },
    );
    expect(unknownWithRoom.status).toBe(401);
    expect(admission.active).toBe(0);
    expect(await db.observationSample.count()).toBe(0);
  });
});

describe("database timeouts (item 5)", () => {
  it("answers 503 busy with Retry-After when a pool row is locked, within the lock timeout", async () => {
    const token = await operateToken();
    const pool = await makePool(db, "web", 3);
    const holder = createDb(inject("databaseUrl"), { max: 1 });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const tx = holder.$transaction(
      async (t) => {
        await t.$queryRaw`SELECT id FROM pools WHERE id = ${pool.id} FOR UPDATE`;
        locked();
        await held;
      },
      { timeout: 30_000 },
    );
    try {
      await isLocked;
      const started = Date.now();
      const r = await rest("POST", `/proxies/${pool.proxies[0]!.id}/drain`, { token, body: "{}" });
      const waitedMs = Date.now() - started;
      expect(r.status).toBe(503);
      expect(r.body.data?.tideCode).toBe("busy");
      expect(r.body.message).toMatch(/busy.*retry/i);
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(waitedMs).toBeLessThan(10_000);
    } finally {
      release();
      await tx;
      await holder.$disconnect();
    }
    expect(await db.proxy.findUniqueOrThrow({ where: { id: pool.proxies[0]!.id } })).toMatchObject({
      state: "active",
    });
  });

  it("recognises a statement timeout as busy", async () => {
    const slow = createDb(inject("databaseUrl"), { max: 1, statementTimeoutMs: 100 });
    try {
      const error = await slow.$queryRaw`SELECT pg_sleep(2)`.then(
        () => null,
        (e: unknown) => e,
      );
      expect(busyErrorFrom(error)?.code).toBe("busy");
      expect(busyErrorFrom(new Error("syntax error"))).toBeNull();
    } finally {
      await slow.$disconnect();
    }
  });

  it("health says the database does not answer within its bound", async () => {
    // A server that accepts connections and never says a word, like a frozen PostgreSQL.
    const sockets: Socket[] = [];
    const server: Server = createServer((s) => sockets.push(s));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    const frozen = createDb(`postgresql://tide@127.0.0.1:${port}/tide`, { max: 1 });
    try {
      const started = Date.now();
      expect(await checkDatabase(frozen, 300)).toBe(false);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(await checkDatabase(db)).toBe(true);
    } finally {
      for (const s of sockets) s.destroy();
      server.close();
      await frozen.$disconnect().catch(() => undefined);
    }
  });
});
