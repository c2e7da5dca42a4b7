import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { ENROLLMENT_TOKEN_PREFIX, type AgentHello } from "@tide/contracts";
import { createDb, type Db } from "@tide/db";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { handleRestRequest } from "../http/routes";
import { ENROLL_BODY_BYTES } from "../http/limits";
import { openApiDocument } from "../openapi";
import { callerFor, makeUser, truncateAll } from "../testing/fixtures";

/**
 * Enrollment in one command, server side: an admin makes a one-time token, a host trades it for its
 * own host token over POST /api/v1/enroll (no other credential), and the admin can remove the host
 * again. Everything goes through the handler the console's /api/v1 route calls, with real PostgreSQL.
 */

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
  body: Record<string, unknown> & { message?: string; data?: { tideCode?: string; details?: unknown } };
}

async function rest(
  method: string,
  path: string,
  opts: {
    token?: string;
    body?: unknown;
    rawBody?: string;
    contentType?: string;
    headers?: Record<string, string>;
  } = {},
): Promise<Reply> {
  const headers = new Headers(opts.headers);
  headers.set("content-type", opts.contentType ?? "application/json");
  if (opts.token) headers.set("authorization", `Bearer ${opts.token}`);
  const body = opts.rawBody ?? (opts.body === undefined ? null : JSON.stringify(opts.body));
  const req = new Request(`http://localhost:3000/api/v1${path}`, { method, headers, body });
  const res = await handleRestRequest(req, { db });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Reply["body"]) : {} };
}

const ROOT_VERSION = (
  JSON.parse(readFileSync(new URL("../../../../package.json", import.meta.url), "utf8")) as {
    version: string;
  }
).version;

function hello(hostname: string): AgentHello {
  return {
    protocolVersion: 1,
    agentVersion: "0.1.0",
    hostname,
    kernelRelease: "6.12.48-tide",
    roles: ["proxy"],
    probes: [],
    dataPlane: [],
  };
}

const enrollBody = (token: string) => ({ token, agentVersion: "0.1.0", kernelRelease: "6.12.48-tide" });

async function setup() {
  const admin = await makeUser(db, "admin");
  const api = callerFor(db, admin);
  const adminToken = (await api.tokens.create({ name: "admin", scopes: ["read", "operate", "admin"] })).token;
  const readToken = (await api.tokens.create({ name: "ro", scopes: ["read", "operate"] })).token;
  return { admin, adminToken, readToken };
}

interface Created {
  token: string;
  command: string;
  summary: { id: string; state: string; prefix: string; hostname: string; roles: string[] };
}

async function addHost(adminToken: string, hostname: string, roles = ["proxy"]): Promise<Created> {
  const r = await rest("POST", "/enrollment-tokens", {
    token: adminToken,
    body: { hostname, roles, expiresInMinutes: 30 },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as unknown as Created;
}

describe("create -> enroll -> the host token works", () => {
  it("issues a host token for the host name that /agent/hello accepts, and sets the host's roles", async () => {
    const { adminToken } = await setup();
    const created = await addHost(adminToken, "lb-fra-07", ["proxy", "director"]);
    expect(created.token.startsWith(ENROLLMENT_TOKEN_PREFIX)).toBe(true);
    expect(created.command).toBe(`tide-agent enroll http://localhost:3000 --token ${created.token}`);
    expect(created.summary).toMatchObject({
      hostname: "lb-fra-07",
      roles: ["proxy", "director"],
      state: "pending",
      prefix: created.token.slice(0, ENROLLMENT_TOKEN_PREFIX.length + 6),
    });

    // No Authorization header: the token in the body is the credential.
    const enrolled = await rest("POST", "/enroll", { body: enrollBody(created.token) });
    expect(enrolled.status, JSON.stringify(enrolled.body)).toBe(200);
    expect(enrolled.body).toMatchObject({
      hostname: "lb-fra-07",
      roles: ["proxy", "director"],
      consoleVersion: ROOT_VERSION,
    });
    const hostToken = enrolled.body.hostToken as string;
    expect(hostToken).toMatch(/^tide_host_/);

    const ok = await rest("POST", "/agent/hello", { token: hostToken, body: hello("lb-fra-07") });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    // The token speaks for that host only.
    const other = await rest("POST", "/agent/hello", { token: hostToken, body: hello("lb-fra-08") });
    expect(other.status).toBe(403);

    const host = await db.host.findUniqueOrThrow({ where: { name: "lb-fra-07" } });
    expect(host.id).toBe(enrolled.body.hostId);
    const row = await db.enrollmentToken.findUniqueOrThrow({ where: { id: created.summary.id } });
    expect(row.usedByHostId).toBe(host.id);
    expect(row.usedAt).not.toBeNull();
    const issued = await db.hostToken.findFirstOrThrow({ where: { hostId: host.id } });
    expect(issued.createdById).toBe(row.createdById);
  });

  it("sets the roles the admin chose on the host record", async () => {
    const { adminToken } = await setup();
    const created = await addHost(adminToken, "dir-ams-01", ["director"]);
    const enrolled = await rest("POST", "/enroll", { body: enrollBody(created.token) });
    expect(enrolled.status).toBe(200);
    const host = await db.host.findUniqueOrThrow({ where: { name: "dir-ams-01" } });
    expect(host.roles).toEqual(["director"]);
    expect(host.agentVersion).toBe("0.1.0");
    expect(host.kernelRelease).toBe("6.12.48-tide");
  });

  it("puts the console's URL as a TLS proxy in front of it was asked into the command", async () => {
    const { adminToken } = await setup();
    const r = await rest("POST", "/enrollment-tokens", {
      token: adminToken,
      body: { hostname: "web-1", roles: ["proxy"] },
      headers: { "x-forwarded-proto": "https", "x-forwarded-host": "console.example.net" },
    });
    expect(r.status).toBe(200);
    const created = r.body as unknown as Created;
    expect(created.command).toBe(`tide-agent enroll https://console.example.net --token ${created.token}`);
    // The default lifetime: 60 minutes.
    const row = await db.enrollmentToken.findUniqueOrThrow({ where: { id: created.summary.id } });
    expect(row.expiresAt.getTime() - row.createdAt.getTime()).toBe(60 * 60_000);
  });
});

describe("a token that cannot be used gets a plain refusal", () => {
  it("refuses a second use, naming the host and when", async () => {
    const { adminToken } = await setup();
    const created = await addHost(adminToken, "lb-fra-09");
    expect((await rest("POST", "/enroll", { body: enrollBody(created.token) })).status).toBe(200);
    const again = await rest("POST", "/enroll", { body: enrollBody(created.token) });
    expect(again.status).toBe(409);
    expect(again.body.message).toMatch(
      /^This enrollment token was already used by lb-fra-09 at \d{4}-\d\d-\d\dT[\d:.]+Z; .*tidectl host add lb-fra-09 --role proxy$/,
    );
    expect(again.body.data).toMatchObject({ tideCode: "conflict", details: { enrollment: "used" } });
    expect(JSON.stringify(again.body)).not.toContain(created.token.slice(ENROLLMENT_TOKEN_PREFIX.length));
    // Only one host token was issued.
    expect(await db.hostToken.count()).toBe(1);
  });

  it("refuses an expired token with the time it expired and the command for a new one", async () => {
    const { adminToken } = await setup();
    const created = await addHost(adminToken, "lb-fra-10");
    await db.enrollmentToken.update({
      where: { id: created.summary.id },
      data: { expiresAt: new Date(Date.now() - 1_000) },
    });
    const r = await rest("POST", "/enroll", { body: enrollBody(created.token) });
    expect(r.status).toBe(401);
    expect(r.body.message).toMatch(
      /^This enrollment token for lb-fra-10 expired at .*Z; make a new one: tidectl host add lb-fra-10 --role proxy$/,
    );
    expect(await db.host.count()).toBe(0);
    const list = await rest("GET", "/enrollment-tokens", { token: adminToken });
    expect((list.body as unknown as Created["summary"][])[0]?.state).toBe("expired");
  });

  it("refuses a revoked token; revoking twice or a used token is a 409 with the reason", async () => {
    const { adminToken } = await setup();
    const created = await addHost(adminToken, "lb-fra-11");
    const revoked = await rest("DELETE", `/enrollment-tokens/${created.summary.id}`, { token: adminToken });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expect(revoked.body).toMatchObject({ state: "revoked", hostname: "lb-fra-11" });
    const r = await rest("POST", "/enroll", { body: enrollBody(created.token) });
    expect(r.status).toBe(401);
    expect(r.body.message).toMatch(/^This enrollment token for lb-fra-11 was revoked at .*Z; ask an admin/);
    const twice = await rest("DELETE", `/enrollment-tokens/${created.summary.id}`, { token: adminToken });
    expect(twice.status).toBe(409);
    expect(twice.body.message).toMatch(/was already revoked at/);

    const used = await addHost(adminToken, "lb-fra-12");
    expect((await rest("POST", "/enroll", { body: enrollBody(used.token) })).status).toBe(200);
    const late = await rest("DELETE", `/enrollment-tokens/${used.summary.id}`, { token: adminToken });
    expect(late.status).toBe(409);
    expect(late.body.message).toMatch(
      /was already used at .*; to take the host out, remove host lb-fra-12\.$/,
    );
  });

  it("refuses an unknown token as not valid, and a token of another kind as bad input", async () => {
    const unknown = await rest("POST", "/enroll", { body: enrollBody(`${ENROLLMENT_TOKEN_PREFIX}nope`) });
    expect(unknown.status).toBe(401);
    expect(unknown.body.message).toMatch(/^This is not a valid enrollment token/);
    const hostToken = await rest("POST", "/enroll", { body: enrollBody("tide_host_abc") });
    expect(hostToken.status).toBe(400);
    // trpc-to-openapi's validation answer: the schema's own words in `issues`.
    expect(JSON.stringify(hostToken.body.issues)).toContain("is not an enrollment token (tide_enroll_…)");
  });
});

describe("two hosts racing with one token", () => {
  it("gives exactly one of them a host token", async () => {
    const { adminToken } = await setup();
    for (let round = 0; round < 5; round++) {
      const created = await addHost(adminToken, `race-${round}`);
      const replies = await Promise.all(
        [0, 1, 2].map(() => rest("POST", "/enroll", { body: enrollBody(created.token) })),
      );
      const statuses = replies.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 409, 409]);
      const host = await db.host.findUniqueOrThrow({ where: { name: `race-${round}` } });
      expect(await db.hostToken.count({ where: { hostId: host.id } })).toBe(1);
    }
  });
});

describe("who may make tokens, and what is kept", () => {
  it("refuses an operator's session and a token without the admin scope", async () => {
    const { readToken } = await setup();
    const operator = await makeUser(db, "operator");
    await expect(
      callerFor(db, operator).enrollmentTokens.create({
        hostname: "x-1",
        roles: ["proxy"],
        expiresInMinutes: 60,
      }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    const r = await rest("POST", "/enrollment-tokens", {
      token: readToken,
      body: { hostname: "x-1", roles: ["proxy"] },
    });
    expect(r.status).toBe(403);
    expect((await rest("GET", "/enrollment-tokens", { token: readToken })).status).toBe(403);
    expect((await rest("GET", "/enrollment-tokens")).status).toBe(401);
    expect(await db.enrollmentToken.count()).toBe(0);
  });

  it("stores only the token's sha256 and never lists the secret", async () => {
    const { adminToken } = await setup();
    const created = await addHost(adminToken, "lb-fra-13");
    const secret = created.token.slice(ENROLLMENT_TOKEN_PREFIX.length);
    const rows = await db.$queryRawUnsafe<Record<string, unknown>[]>("SELECT * FROM enrollment_tokens");
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(secret);
    expect(rows[0]?.token_hash).toBe(createHash("sha256").update(created.token).digest("hex"));
    const list = await rest("GET", "/enrollment-tokens", { token: adminToken });
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toContain(secret);
    expect(list.body).toEqual([created.summary]);
    const audit = await db.auditEvent.findMany();
    expect(JSON.stringify(audit)).not.toContain(secret);
  });

  it("audits create, redeem (the token's creator accountable), revoke and host removal", async () => {
    const { admin, adminToken } = await setup();
    const created = await addHost(adminToken, "lb-fra-14");
    const enrolled = await rest("POST", "/enroll", { body: enrollBody(created.token) });
    const other = await addHost(adminToken, "lb-fra-15");
    await rest("DELETE", `/enrollment-tokens/${other.summary.id}`, { token: adminToken });
    expect((await rest("DELETE", "/hosts/lb-fra-14", { token: adminToken })).status).toBe(200);

    const events = await db.auditEvent.findMany({ orderBy: { createdAt: "asc" } });
    const by = (action: string) => events.filter((e) => e.action === action);
    expect(by("enrollment_token.create")).toHaveLength(2);
    const [redeem] = by("enrollment_token.redeem");
    expect(redeem).toMatchObject({
      actorKind: "user",
      actorId: admin.userId,
      actorLabel: `${admin.email} (enrollment token ${created.summary.id})`,
      targetType: "enrollment_token",
      targetId: created.summary.id,
    });
    expect(redeem?.after).toMatchObject({ hostname: "lb-fra-14", hostId: enrolled.body.hostId });
    expect(by("host_token.create")[0]?.actorId).toBe(admin.userId);
    expect(by("enrollment_token.revoke")[0]?.targetId).toBe(other.summary.id);
    expect(by("host.remove")[0]).toMatchObject({ targetType: "host", targetId: enrolled.body.hostId });
  });
});

describe("removing a host", () => {
  it("makes its host token fail at once, on this console process too", async () => {
    const { adminToken } = await setup();
    const created = await addHost(adminToken, "lb-fra-16");
    const enrolled = await rest("POST", "/enroll", { body: enrollBody(created.token) });
    const hostToken = enrolled.body.hostToken as string;
    // Resolved once: this process now trusts the token from memory (host-token-cache.ts).
    expect((await rest("POST", "/agent/hello", { token: hostToken, body: hello("lb-fra-16") })).status).toBe(
      200,
    );
    const removed = await rest("DELETE", `/hosts/${enrolled.body.hostId as string}`, { token: adminToken });
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(removed.body).toMatchObject({ removed: { name: "lb-fra-16" } });
    const after = await rest("POST", "/agent/hello", { token: hostToken, body: hello("lb-fra-16") });
    expect(after.status).toBe(401);
    expect(await db.host.count()).toBe(0);
    // The enrollment token keeps its history; a second use still names the host it was for.
    const row = await db.enrollmentToken.findUniqueOrThrow({ where: { id: created.summary.id } });
    expect(row.usedAt).not.toBeNull();
    expect(row.usedByHostId).toBeNull();
    const again = await rest("POST", "/enroll", { body: enrollBody(created.token) });
    expect(again.status).toBe(409);
    expect(again.body.message).toContain("already used by lb-fra-16");
  });

  it("is refused while a director has the host's name, naming the director", async () => {
    const { adminToken } = await setup();
    const created = await addHost(adminToken, "dir-fra-01", ["director"]);
    expect((await rest("POST", "/enroll", { body: enrollBody(created.token) })).status).toBe(200);
    const dir = await rest("POST", "/directors", { token: adminToken, body: { hostname: "dir-fra-01" } });
    expect(dir.status).toBe(200);
    const r = await rest("DELETE", "/hosts/dir-fra-01", { token: adminToken });
    expect(r.status).toBe(409);
    expect(r.body.message).toBe(
      `Host dir-fra-01 is registered as director dir-fra-01 (${dir.body.id as string}); remove the director first (Directors in the console, or tidectl director remove dir-fra-01), then the host.`,
    );
    expect(await db.host.count()).toBe(1);
  });

  it("is admin only, and an unknown host is a 404", async () => {
    const { adminToken, readToken } = await setup();
    expect((await rest("DELETE", "/hosts/nope", { token: readToken })).status).toBe(403);
    const r = await rest("DELETE", "/hosts/nope", { token: adminToken });
    expect(r.status).toBe(404);
    expect(r.body.message).toBe("Host nope does not exist.");
  });
});

describe("POST /enroll keeps the body rules without a caller", () => {
  it("needs a JSON object body and caps it at a few KiB", async () => {
    const notJson = await rest("POST", "/enroll", { rawBody: "token=x", contentType: "text/plain" });
    expect(notJson.status).toBe(415);
    const big = await rest("POST", "/enroll", {
      rawBody: JSON.stringify({ ...enrollBody("tide_enroll_x"), pad: "x".repeat(ENROLL_BODY_BYTES) }),
    });
    expect(big.status).toBe(413);
    const array = await rest("POST", "/enroll", { rawBody: "[]" });
    expect(array.status).toBe(400);
  });

  it("leaves every other anonymous POST refused before its body is read", async () => {
    const r = await rest("POST", "/enrollment-tokens", { body: { hostname: "x-1", roles: ["proxy"] } });
    expect(r.status).toBe(401);
  });

  it("is documented as needing no Authorization", () => {
    const doc = openApiDocument();
    expect(doc.paths?.["/enroll"]?.post?.security).toBeUndefined();
    expect(doc.paths?.["/enrollment-tokens"]?.post?.security).toBeDefined();
  });
});
