import { createDb, type Db } from "@tide/db";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { callerFor, makePool, makeUser, restCall, truncateAll } from "../testing/fixtures";

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

async function refusedWith(call: Promise<unknown>): Promise<string> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TRPCError);
  return (error as TRPCError).code;
}

describe("refused attempts in the audit log", () => {
  it("records a refused drain (409) and a forbidden drain (403) as refused, with the reason", async () => {
    const operator = await makeUser(db, "operator");
    const viewer = await makeUser(db, "viewer");
    const pool = await makePool(db, "web", 4);
    const [first, second] = pool.proxies;
    const ops = callerFor(db, operator);
    await ops.proxies.drain({ proxyId: first!.id, reason: "kernel upgrade" });

    // Draining a draining proxy again is a conflict; nothing changes but the log.
    expect(await refusedWith(ops.proxies.drain({ proxyId: first!.id, reason: "twice" }))).toBe("CONFLICT");
    // A viewer may not drain at all.
    expect(
      await refusedWith(callerFor(db, viewer).proxies.drain({ proxyId: second!.id, reason: "curious" })),
    ).toBe("FORBIDDEN");

    const refused = await ops.audit.list({ poolId: pool.id, outcome: "refused", limit: 10 });
    expect(refused.items.map((e) => [e.action, e.actor, e.targetId, e.targetName, e.reason])).toEqual([
      ["proxy.drain", viewer.email, second!.id, second!.hostname, "curious"],
      ["proxy.drain", operator.email, first!.id, first!.hostname, "twice"],
    ]);
    expect(refused.items.every((e) => e.refusal.length > 0)).toBe(true);
    expect(refused.items[0]!.refusal).toContain("'operate' scope");
    expect(refused.items.every((e) => e.tableVersionId === null)).toBe(true);

    // The done drain is still the only one that wrote a version.
    const done = await ops.audit.list({ poolId: pool.id, outcome: "done", action: "proxy.drain", limit: 10 });
    expect(done.items.map((e) => e.reason)).toEqual(["kernel upgrade"]);
    expect(done.items[0]!.tableVersion).toBe(2);
  });

  it("records a REST 403 on a mutation, and never an input's password", async () => {
    const admin = await makeUser(db, "admin");
    // An admin's token with only read+operate scope: creating users needs admin scope.
    const opToken = await callerFor(db, admin).tokens.create({
      name: "runbook",
      scopes: ["read", "operate"],
    });
    const secret = "a very secret password 42";
    const res = await restCall(db, "POST", "/users", {
      token: opToken.token,
      body: { email: "new@test.local", name: "New", role: "viewer", password: secret },
    });
    expect(res.status).toBe(403);

    const rows = await db.auditEvent.findMany({ where: { outcome: "refused" } });
    expect(rows.map((r) => [r.action, r.targetType, r.actorLabel, r.refusal.length > 0])).toEqual([
      ["user.create", "user", `token runbook (${admin.email})`, true],
    ]);
    expect(JSON.stringify(rows)).not.toContain(secret);
    expect(JSON.stringify(rows)).not.toContain("new@test.local");
  });

  it("does not record refused reads or invalid input", async () => {
    const viewer = await makeUser(db, "viewer");
    const pool = await makePool(db, "web", 2);
    const api = callerFor(db, viewer);
    expect(await refusedWith(api.users.list())).toBe("FORBIDDEN");
    expect(await refusedWith(api.proxies.drain({ proxyId: pool.proxies[0]!.id, reason: "" }))).toBe(
      "FORBIDDEN",
    );
    const before = await db.auditEvent.count({ where: { outcome: "refused" } });
    expect(before).toBe(1); // the forbidden drain, not the forbidden read
  });
});

describe("audit list filters", () => {
  it("filters by action, actor, target name and time range, and hides sign-ins unless asked", async () => {
    const operator = await makeUser(db, "operator");
    const pool = await makePool(db, "shop", 3);
    const other = await makePool(db, "mail", 3);
    const api = callerFor(db, operator);
    await api.proxies.drain({ proxyId: pool.proxies[0]!.id, reason: "a" });
    await api.proxies.drain({ proxyId: other.proxies[1]!.id, reason: "b" });
    await db.auditEvent.create({
      data: {
        id: "aud_session1",
        actorKind: "user",
        actorId: operator.userId,
        actorLabel: operator.email,
        action: "session.create",
        targetType: "user",
        targetId: operator.userId,
        createdAt: new Date(Date.now() - 3_600_000),
      },
    });

    const all = await api.audit.list({ limit: 50 });
    expect(all.items.some((e) => e.action === "session.create")).toBe(false);
    const withSessions = await api.audit.list({ limit: 50, sessions: "show" });
    expect(withSessions.items.some((e) => e.action === "session.create")).toBe(true);

    const drains = await api.audit.list({ limit: 50, action: "proxy.drain" });
    expect(drains.items.map((e) => e.reason)).toEqual(["b", "a"]);

    const byTarget = await api.audit.list({ limit: 50, target: "mail-proxy-2" });
    expect(byTarget.items.map((e) => [e.action, e.targetName])).toEqual([["proxy.drain", "mail-proxy-2"]]);
    const byPoolName = await api.audit.list({ limit: 50, target: "shop" });
    // "shop" is in the pool's name and in its proxies' host names.
    expect(byPoolName.items.map((e) => [e.action, e.targetName])).toEqual([
      ["proxy.drain", "shop-proxy-1"],
      ["pool.create", "shop"],
    ]);
    const byId = await api.audit.list({ limit: 50, target: pool.id });
    expect(byId.items.map((e) => [e.action, e.targetName])).toEqual([["pool.create", "shop"]]);

    const byActor = await api.audit.list({ limit: 50, actor: operator.email.toUpperCase() });
    expect(byActor.items.map((e) => e.reason)).toEqual(["b", "a"]);

    const earlier = await api.audit.list({
      limit: 50,
      sessions: "show",
      to: new Date(Date.now() - 60_000).toISOString(),
    });
    expect(earlier.items.map((e) => e.action)).toEqual(["session.create"]);

    const facets = await api.audit.facets();
    expect(facets.actions).toEqual(["pool.create", "proxy.drain", "session.create"]);
    expect(facets.actors).toContain(operator.email);

    const backwards = await restCall(
      db,
      "GET",
      `/audit?from=${encodeURIComponent(new Date().toISOString())}&to=${encodeURIComponent(new Date(0).toISOString())}`,
      {
        token: (
          await callerFor(db, await makeUser(db, "admin")).tokens.create({ name: "r", scopes: ["read"] })
        ).token,
      },
    );
    expect(backwards.status).toBe(400);
  });
});
