import { createDb, type Db } from "@tide/db";
import { decodeGlbd, tableContentHash } from "@tide/forwarding";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { handleTableDownload } from "../http/table-download";
import { openApiDocument } from "../openapi";
import { callerFor, makePool, makeUser, truncateAll, restCall } from "../testing/fixtures";

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

const rest = (method: string, path: string, opts: { token?: string; body?: unknown } = {}) =>
  restCall(db, method, path, opts);

async function tokens() {
  const admin = await makeUser(db, "admin");
  const api = callerFor(db, admin);
  const make = async (scopes: ("read" | "operate" | "admin")[]) =>
    (await api.tokens.create({ name: scopes.join("+"), scopes })).token;
  return {
    admin,
    read: await make(["read"]),
    operate: await make(["read", "operate"]),
    all: await make(["read", "operate", "admin"]),
  };
}

describe("REST /api/v1 generated from the tRPC procedures", () => {
  it("serves reads with a read token and refuses requests without one", async () => {
    const t = await tokens();
    const pool = await makePool(db, "web", 3);
    const list = await rest("GET", "/pools", { token: t.read });
    expect(list.status).toBe(200);
    expect((list.body as unknown as { name: string }[]).map((p) => p.name)).toEqual(["web"]);
    // Secrets never leave the server.
    expect(JSON.stringify(list.body)).not.toMatch(/hashKey|seed/);
    const detail = await rest("GET", `/pools/${pool.id}`, { token: t.read });
    expect(detail.status).toBe(200);
    expect(JSON.stringify(detail.body)).not.toMatch(/hashKey|"seed"/);

    const anonymous = await rest("GET", "/pools");
    expect(anonymous.status).toBe(401);
    const garbage = await rest("GET", "/pools", { token: "tide_not-a-real-token" });
    expect(garbage.status).toBe(401);
  });

  it("drains and fills through REST with an operate token; read-only tokens get 403 and nothing changes", async () => {
    const t = await tokens();
    const pool = await makePool(db, "web", 4);
    const p = pool.proxies[0]!;
    for (const action of ["drain", "fill", "activate", "deactivate", "abort"]) {
      const refused = await rest("POST", `/proxies/${p.id}/${action}`, { token: t.read, body: {} });
      expect(refused.status, action).toBe(403);
      expect(String(refused.body?.message)).toMatch(/operate/);
    }
    expect(await db.tableVersion.count({ where: { poolId: pool.id } })).toBe(1);

    const drained = await rest("POST", `/proxies/${p.id}/drain`, {
      token: t.operate,
      body: { reason: "rack move" },
    });
    expect(drained.status).toBe(200);
    expect(drained.body).toMatchObject({
      proxy: { state: "draining" },
      tableVersion: { version: 2, reason: "rack move" },
    });
    expect((drained.body as { tableVersion: { actor: string } }).tableVersion.actor).toMatch(
      /^token read\+operate/,
    );

    const again = await rest("POST", `/proxies/${p.id}/drain`, { token: t.operate, body: {} });
    expect(again.status).toBe(409);
    expect((again.body as { data: { tideCode: string } }).data.tideCode).toBe("invalid_transition");
    expect(String(again.body?.message)).toMatch(/draining/);

    const bad = await rest("POST", `/proxies/${p.id}/transition`, {
      token: t.operate,
      body: { action: "explode" },
    });
    expect(bad.status).toBe(400);

    const versions = await rest("GET", `/pools/${pool.id}/tables`, { token: t.read });
    const items = (versions.body as { items: { id: string; version: number }[] }).items;
    expect(items.map((v) => v.version)).toEqual([2, 1]);
    const diff = await rest("GET", `/tables/${items[1]!.id}/diff/${items[0]!.id}`, { token: t.read });
    expect(diff.status).toBe(200);
    expect((diff.body as { diff: { rowsPrimaryChanged: number } }).diff.rowsPrimaryChanged).toBeGreaterThan(
      0,
    );
    const explain = await rest("GET", `/tables/${items[0]!.id}/explain?srcAddr=198.51.100.9&srcPort=40000`, {
      token: t.read,
    });
    expect(explain.status).toBe(200);
    expect((explain.body as { primary: { address: string } }).primary.address).not.toBe(p.address);
    // A destination that is not one of the pool's binds never reaches its table: refused, plainly.
    const atBind = await rest(
      "GET",
      `/tables/${items[0]!.id}/explain?srcAddr=198.51.100.9&srcPort=40000&dstAddr=203.0.113.10&dstPort=443`,
      { token: t.read },
    );
    expect(atBind.status).toBe(200);
    const elsewhere = await rest(
      "GET",
      `/tables/${items[0]!.id}/explain?srcAddr=198.51.100.9&srcPort=40000&dstAddr=192.0.2.99&dstPort=443`,
      { token: t.read },
    );
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body!.message).toBe(
      "192.0.2.99:443 is not a bind of pool web, so its packets never reach this table (its binds: tcp/203.0.113.10:443). Leave the destination empty or use one of them.",
    );
  });

  it("downloads a version as the exact GLBD bytes, with its hash", async () => {
    const t = await tokens();
    const pool = await makePool(db, "web", 3);
    // Operate scope gets the exact bytes with the hash key (read gets it zeroed: table-download test).
    const res = await handleTableDownload({
      headers: new Headers({ authorization: `Bearer ${t.operate}` }),
      poolId: pool.id,
      version: "1",
      db,
    });
    expect(res.status).toBe(200);
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(res.headers.get("x-tide-content-hash")).toBe(tableContentHash(bytes));
    expect(tableContentHash(bytes)).toBe(pool.currentVersion!.contentHash);
    expect(decodeGlbd(bytes)[0]!.backends.map((b) => b.address)).toEqual(pool.proxies.map((x) => x.address));
    const anonymous = await handleTableDownload({
      headers: new Headers(),
      poolId: pool.id,
      version: "1",
      db,
    });
    expect(anonymous.status).toBe(401);
    const missing = await handleTableDownload({
      headers: new Headers({ authorization: `Bearer ${t.read}` }),
      poolId: pool.id,
      version: "9",
      db,
    });
    expect(missing.status).toBe(404);
  });

  it("shows a token once, stores only its hash, and stops accepting it once revoked", async () => {
    const admin = await makeUser(db, "admin");
    const api = callerFor(db, admin);
    const created = await api.tokens.create({ name: "runbook", scopes: ["read"] });
    expect(created.token).toMatch(/^tide_/);
    const row = await db.apiToken.findUniqueOrThrow({ where: { id: created.summary.id } });
    expect(row.tokenHash).not.toContain(created.token);
    expect(JSON.stringify(await api.tokens.list())).not.toContain(created.token);
    expect((await rest("GET", "/pools", { token: created.token })).status).toBe(200);
    await api.tokens.revoke({ tokenId: created.summary.id });
    expect((await rest("GET", "/pools", { token: created.token })).status).toBe(401);

    const limited = await callerFor(db, { ...admin, scopes: ["read", "admin"] })
      .tokens.create({ name: "y", scopes: ["operate"] })
      .catch((e: Error) => e.message);
    expect(limited).toMatch(/cannot grant/);
  });

  it("publishes an OpenAPI document covering the runbook endpoints", () => {
    const doc = openApiDocument();
    const paths = Object.keys(doc.paths ?? {});
    for (const p of [
      "/pools",
      "/proxies",
      "/directors",
      "/proxies/{proxyId}/drain",
      "/proxies/{proxyId}/fill",
      "/proxies/{proxyId}/activate",
      "/proxies/{proxyId}/deactivate",
      "/proxies/{proxyId}/abort",
      "/pools/{poolId}/tables",
      "/pools/{poolId}/tables/current",
      "/tables/{fromVersionId}/diff/{toVersionId}",
      "/tables/{versionId}/explain",
      "/pools/{poolId}/tables/{version}/glbd",
      "/pools/{poolId}/binds",
      "/pools/{poolId}/hash-fields",
      "/pools/{poolId}/hash-fields/preview",
      "/pools/{poolId}/proxies",
      "/proxies/{proxyId}",
      "/directors/{directorId}",
      "/directors/{directorId}/pools/{poolId}",
      "/users",
      "/users/{userId}",
      "/users/{userId}/disable",
      "/users/{userId}/enable",
      "/users/{userId}/reset-password",
    ]) {
      expect(paths, p).toContain(p);
    }
    const ops = doc.paths ?? {};
    expect(Object.keys(ops["/pools"] ?? {}).sort()).toEqual(["get", "post"]);
    expect(Object.keys(ops["/pools/{poolId}"] ?? {}).sort()).toEqual(["delete", "get", "patch"]);
    expect(Object.keys(ops["/directors/{directorId}/pools/{poolId}"] ?? {}).sort()).toEqual([
      "delete",
      "put",
    ]);
    // Every operation has a tag the document declares and a summary.
    const declared = new Set((doc.tags ?? []).map((t) => t.name));
    for (const [path, item] of Object.entries(ops)) {
      for (const [method, op] of Object.entries(item ?? {})) {
        const o = op as { tags?: string[]; summary?: string };
        expect(o.summary, `${method} ${path}`).toBeTruthy();
        for (const tag of o.tags ?? []) expect(declared.has(tag), `${method} ${path} tag ${tag}`).toBe(true);
      }
    }
  });
});
