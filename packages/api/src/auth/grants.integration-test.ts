import type { Scope } from "@tide/contracts";
import { createDb, type Db } from "@tide/db";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { callerFor, makeUser, restCall, truncateAll } from "../testing/fixtures";

/**
 * Issue 27 item 8: a caller grants no more than it holds. An admin-only API token made a full
 * admin user (who holds read and operate, which the token lacks), and could then sign in as them.
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

async function tokenWith(scopes: Scope[]) {
  const admin = await makeUser(db, "admin");
  return (await callerFor(db, admin).tokens.create({ name: scopes.join("+"), scopes })).token;
}

const tideCode = (body: Record<string, unknown> | null) =>
  (body?.["data"] as { tideCode?: string })?.tideCode;

describe("a token grants no more than it holds", () => {
  it("an admin-only token cannot create an admin, operator or viewer user (403 saying why)", async () => {
    const token = await tokenWith(["admin"]);
    const users = await db.user.count();
    const refused = await restCall(db, "POST", "/users", {
      token,
      body: { email: "eve@example.net", name: "Eve", role: "admin" },
    });
    expect(refused.status).toBe(403);
    expect(tideCode(refused.body)).toBe("forbidden");
    expect(refused.body?.["message"]).toBe(
      "You cannot create a user with role admin: an admin holds read, operate, admin and this token holds only admin " +
        "(missing: read, operate). A caller can grant no more than it holds; use a session or a token with those scopes.",
    );
    for (const role of ["operator", "viewer"]) {
      const r = await restCall(db, "POST", "/users", {
        token,
        body: { email: `${role}@example.net`, name: role, role },
      });
      expect(r.status, role).toBe(403);
      expect(r.body?.["message"]).toMatch(/missing: read/);
    }
    expect(await db.user.count()).toBe(users);
  });

  it("a token creates users whose role it covers", async () => {
    const readAdmin = await tokenWith(["read", "admin"]);
    const operator = await restCall(db, "POST", "/users", {
      token: readAdmin,
      body: { email: "op@example.net", name: "Op", role: "operator" },
    });
    expect(operator.status).toBe(403);
    expect(operator.body?.["message"]).toMatch(/\(missing: operate\)/);
    const viewer = await restCall(db, "POST", "/users", {
      token: readAdmin,
      body: { email: "viewer@example.net", name: "Viewer", role: "viewer" },
    });
    expect(viewer.status).toBe(200);
    const all = await tokenWith(["read", "operate", "admin"]);
    const admin = await restCall(db, "POST", "/users", {
      token: all,
      body: { email: "second-admin@example.net", name: "Second", role: "admin" },
    });
    expect(admin.status).toBe(200);
  });

  it("a role change grants only what the new role adds; a demotion grants nothing", async () => {
    const token = await tokenWith(["read", "admin"]);
    const viewer = await makeUser(db, "viewer");
    const operator = await makeUser(db, "operator");
    const promote = await restCall(db, "PATCH", `/users/${viewer.userId}`, {
      token,
      body: { role: "admin" },
    });
    expect(promote.status).toBe(403);
    expect(promote.body?.["message"]).toMatch(/^You cannot make viewer-.* admin: .*\(missing: operate\)/);
    expect((await db.user.findUniqueOrThrow({ where: { id: viewer.userId } })).role).toBe("viewer");
    const demote = await restCall(db, "PATCH", `/users/${operator.userId}`, {
      token,
      body: { role: "viewer" },
    });
    expect(demote.status).toBe(200);
    const rename = await restCall(db, "PATCH", `/users/${viewer.userId}`, { token, body: { name: "Vera" } });
    expect(rename.status).toBe(200);
  });

  it("a token cannot set the password of a user who holds more than it (it could sign in as them)", async () => {
    const token = await tokenWith(["read", "admin"]);
    const admin = await makeUser(db, "admin");
    const viewer = await makeUser(db, "viewer");
    const before = (await db.user.findUniqueOrThrow({ where: { id: admin.userId } })).passwordHash;
    const refused = await restCall(db, "POST", `/users/${admin.userId}/reset-password`, { token, body: {} });
    expect(refused.status).toBe(403);
    expect(refused.body?.["message"]).toMatch(/^You cannot set the password of admin-.*\(missing: operate\)/);
    expect((await db.user.findUniqueOrThrow({ where: { id: admin.userId } })).passwordHash).toBe(before);
    const ok = await restCall(db, "POST", `/users/${viewer.userId}/reset-password`, { token, body: {} });
    expect(ok.status).toBe(200);
  });

  it("a token cannot make a token with scopes it lacks", async () => {
    const token = await tokenWith(["admin"]);
    const tokens = await db.apiToken.count();
    const r = await restCall(db, "POST", "/tokens", {
      token,
      body: { name: "wider", scopes: ["read", "operate", "admin"] },
    });
    expect(r.status).toBe(403);
    expect(r.body?.["message"]).toBe("You cannot grant scope(s) you do not hold: read, operate.");
    expect(await db.apiToken.count()).toBe(tokens);
    const same = await restCall(db, "POST", "/tokens", { token, body: { name: "same", scopes: ["admin"] } });
    expect(same.status).toBe(200);
  });
});
