import { isTideError, type TideError } from "@tide/contracts";
import { createDb, type Db } from "@tide/db";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { openApiDocument } from "../openapi";
import { callerFor, makeUser, restCall, truncateAll } from "../testing/fixtures";
import { actorFromSession, signIn } from "./sessions";

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

function tideError(e: unknown): TideError {
  const cause = e instanceof TRPCError ? e.cause : e;
  if (!isTideError(cause)) throw new Error(`expected a TideError, got ${String(e)}`);
  return cause;
}

const signInAs = (email: string, password: string) => signIn(db, { email, password, sessionHours: 1 });

async function usersSnapshot() {
  const [users, sessions, audit] = await Promise.all([
    db.user.findMany({
      select: { id: true, role: true, name: true, disabledAt: true, passwordHash: true },
      orderBy: { id: "asc" },
    }),
    db.session.count(),
    db.auditEvent.count({ where: { targetType: "user", outcome: "done" } }), // refusals are kept as refused
  ]);
  return { users, sessions, audit };
}

describe("users over the API", () => {
  it("creates a user with a generated password shown once, never returning hashes", async () => {
    const admin = await makeUser(db, "admin");
    const api = callerFor(db, admin);
    const created = await api.users.create({ email: " Ada@Example.NET ", name: "Ada", role: "operator" });
    expect(created.user).toMatchObject({ email: "ada@example.net", role: "operator", disabledAt: null });
    expect(created.password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    await expect(signInAs("ada@example.net", created.password!)).resolves.toMatchObject({
      user: { role: "operator" },
    });
    const chosen = await api.users.create({
      email: "bob@example.net",
      name: "Bob",
      role: "viewer",
      password: "a long enough password",
    });
    expect(chosen.password).toBeNull();
    const list = await api.users.list();
    expect(list.map((u) => u.email)).toEqual(["ada@example.net", admin.email, "bob@example.net"].sort());
    expect(JSON.stringify(list)).not.toMatch(/scrypt|passwordHash/);
    const audit = (await api.audit.list({ targetId: created.user.id, limit: 5 })).items;
    expect(audit.find((a) => a.action === "user.create")).toMatchObject({
      action: "user.create",
      after: { role: "operator", passwordGenerated: true },
    });
    expect(JSON.stringify(audit)).not.toContain(created.password);

    const before = await usersSnapshot();
    const dup = tideError(
      await api.users
        .create({ email: "ADA@example.net", name: "x", role: "viewer" })
        .catch((e: unknown) => e),
    );
    expect(dup.code).toBe("conflict");
    expect(dup.details).toMatchObject({ fields: { email: expect.any(String) } });
    expect(await usersSnapshot()).toEqual(before);
  });

  it("disables a user: sessions end, API tokens stop; enabling restores the tokens", async () => {
    const admin = await makeUser(db, "admin");
    const api = callerFor(db, admin);
    const { user, password } = await api.users.create({ email: "op@example.net", name: "Op", role: "admin" });
    const session = await signInAs(user.email, password!);
    expect(await actorFromSession(db, session.cookieValue)).not.toBeNull();
    const opApi = callerFor(db, (await actorFromSession(db, session.cookieValue))!);
    const token = (await opApi.tokens.create({ name: "runbook", scopes: ["read"] })).token;
    expect((await restCall(db, "GET", "/pools", { token })).status).toBe(200);

    const disabled = await api.users.disable({ userId: user.id });
    expect(disabled.disabledAt).not.toBeNull();
    expect(await actorFromSession(db, session.cookieValue)).toBeNull();
    expect(await db.session.count({ where: { userId: user.id } })).toBe(0);
    expect((await restCall(db, "GET", "/pools", { token })).status).toBe(401);
    await expect(signInAs(user.email, password!)).rejects.toThrow(/incorrect/);
    expect(tideError(await api.users.disable({ userId: user.id }).catch((e: unknown) => e)).code).toBe(
      "conflict",
    );

    await api.users.enable({ userId: user.id });
    expect((await restCall(db, "GET", "/pools", { token })).status).toBe(200);
  });

  it("resets a password (old one stops working, sessions end), and renames and changes roles", async () => {
    const admin = await makeUser(db, "admin");
    const api = callerFor(db, admin);
    const { user, password } = await api.users.create({ email: "v@example.net", name: "V", role: "viewer" });
    const session = await signInAs(user.email, password!);
    const reset = await api.users.resetPassword({ userId: user.id });
    expect(reset.password).not.toBe(password);
    expect(await actorFromSession(db, session.cookieValue)).toBeNull();
    await expect(signInAs(user.email, password!)).rejects.toThrow(/incorrect/);
    await expect(signInAs(user.email, reset.password!)).resolves.toBeDefined();
    const short = await api.users
      .resetPassword({ userId: user.id, password: "short" })
      .catch((e: unknown) => e);
    expect((short as TRPCError).code).toBe("BAD_REQUEST");
    await expect(signInAs(user.email, reset.password!)).resolves.toBeDefined();

    const updated = await api.users.update({ userId: user.id, name: "Vera", role: "operator" });
    expect(updated).toMatchObject({ name: "Vera", role: "operator" });
    const audit = (await api.audit.list({ targetId: user.id, limit: 1 })).items[0];
    expect(audit).toMatchObject({
      action: "user.update",
      before: { role: "viewer" },
      after: { role: "operator" },
    });
  });

  it("keeps the last enabled admin: no demotion or disabling, even concurrently", async () => {
    const admin = await makeUser(db, "admin");
    const api = callerFor(db, admin);
    const before = await usersSnapshot();
    for (const call of [
      () => api.users.update({ userId: admin.userId, role: "operator" }),
      () => api.users.disable({ userId: admin.userId }),
    ]) {
      const e = tideError(await call().catch((x: unknown) => x));
      expect(e.code).toBe("conflict");
      expect(e.message).toMatch(/last enabled admin/);
    }
    expect(await usersSnapshot()).toEqual(before);

    // Two admins demoting each other at the same time: exactly one succeeds.
    const other = (await api.users.create({ email: "a2@example.net", name: "A2", role: "admin" })).user;
    const results = await Promise.allSettled([
      api.users.update({ userId: other.id, role: "viewer" }),
      api.users.update({ userId: admin.userId, role: "viewer" }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(await db.user.count({ where: { role: "admin", disabledAt: null } })).toBe(1);
  });

  it("is admin only, over tRPC and REST, and listed in the OpenAPI document", async () => {
    const operator = await makeUser(db, "operator");
    const admin = await makeUser(db, "admin");
    const err = await callerFor(db, operator)
      .users.list()
      .catch((e: unknown) => e);
    expect((err as TRPCError).code).toBe("FORBIDDEN");
    const token = (
      await callerFor(db, admin).tokens.create({ name: "all", scopes: ["read", "operate", "admin"] })
    ).token;
    const bad = await restCall(db, "POST", "/users", {
      token,
      body: { email: "nope", name: "", role: "root" },
    });
    expect(bad.status).toBe(400);
    expect(
      Object.keys((bad.body as { data: { details: { fields: object } } }).data.details.fields).sort(),
    ).toEqual(["email", "name", "role"]);
    const created = await restCall(db, "POST", "/users", {
      token,
      body: { email: "rest@example.net", name: "Rest", role: "viewer" },
    });
    expect(created.status).toBe(200);
    const id = (created.body as { user: { id: string } }).user.id;
    expect((await restCall(db, "POST", `/users/${id}/disable`, { token, body: {} })).status).toBe(200);
    expect(
      (await restCall(db, "POST", `/users/${id}/reset-password`, { token, body: {} })).body,
    ).toMatchObject({
      password: expect.any(String),
    });
    const paths = Object.keys(openApiDocument().paths ?? {});
    for (const p of [
      "/users",
      "/users/{userId}",
      "/users/{userId}/disable",
      "/users/{userId}/enable",
      "/users/{userId}/reset-password",
    ]) {
      expect(paths, p).toContain(p);
    }
  });
});
