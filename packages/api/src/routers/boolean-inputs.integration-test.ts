import { createDb, type Db } from "@tide/db";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { callerFor, makePool, makeUser, restCall, truncateAll } from "../testing/fixtures";

/**
 * Issue 27 item 4: the string "false" was true. The REST adapter coerced strings to booleans
 * (Boolean("false") is true) and, as it did so by changing the shared schema, tRPC calls after
 * the first REST call did too. Booleans are booleans: anything else is a 400 naming the field,
 * and nothing changes.
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

async function operateToken() {
  const admin = await makeUser(db, "admin");
  return (await callerFor(db, admin).tokens.create({ name: "ops", scopes: ["read", "operate"] })).token;
}

/**
 * The fields a 400 names (data.details.fields: field path -> what is wrong). Over REST the adapter
 * sets the top-level message of every input error to "Input validation failed"; tRPC's message
 * says the same per field in a sentence.
 */
const fields = (body: Record<string, unknown> | null) =>
  (body?.["data"] as { details?: { fields?: Record<string, string> } } | undefined)?.details?.fields ?? {};

const proxyHealth = (id: string) =>
  db.proxy.findUniqueOrThrow({ where: { id }, select: { healthy: true, healthPinned: true } });

describe("booleans are booleans (REST and tRPC)", () => {
  it('refuses {"pinned":"false"} with 400 naming the field, then pins with true/false', async () => {
    const token = await operateToken();
    const pool = await makePool(db, "web", 3);
    const p = pool.proxies[0]!.id;
    const audits = await db.auditEvent.count();
    for (const pinned of ["false", "true", "", "0", 0, 1, "False"]) {
      const r = await restCall(db, "PUT", `/proxies/${p}/health-pin`, {
        token,
        body: { pinned, reason: "probe" },
      });
      expect(r.status, JSON.stringify(pinned)).toBe(400);
      expect(fields(r.body)).toEqual({ pinned: expect.stringMatching(/^must be true or false, not the /) });
    }
    expect(await proxyHealth(p)).toEqual({ healthy: true, healthPinned: null });
    expect(await db.auditEvent.count()).toBe(audits);

    const down = await restCall(db, "PUT", `/proxies/${p}/health-pin`, {
      token,
      body: { pinned: false, reason: "kernel upgrade" },
    });
    expect(down.status).toBe(200);
    expect(await proxyHealth(p)).toEqual({ healthy: false, healthPinned: false });
    const unpinned = await restCall(db, "PUT", `/proxies/${p}/health-pin`, {
      token,
      body: { pinned: null, reason: "done" },
    });
    expect(unpinned.status).toBe(200);
    expect((await proxyHealth(p)).healthPinned).toBeNull();
    const up = await restCall(db, "PUT", `/proxies/${p}/health-pin`, {
      token,
      body: { pinned: true, reason: "checks are wrong" },
    });
    expect(up.status).toBe(200);
    expect(await proxyHealth(p)).toEqual({ healthy: true, healthPinned: true });
  });

  it('refuses {"healthy":"false"} over REST and then over tRPC; true and false still work', async () => {
    const token = await operateToken();
    const operator = await makeUser(db, "operator");
    const pool = await makePool(db, "web", 4);
    const p = pool.proxies[1]!.id;
    const versions = await db.tableVersion.count({ where: { poolId: pool.id } });

    const refused = await restCall(db, "POST", `/proxies/${p}/health`, {
      token,
      body: { healthy: "false", reason: "http check 503" },
    });
    expect(refused.status).toBe(400);
    expect(fields(refused.body)).toEqual({ healthy: 'must be true or false, not the string "false"' });
    // The REST call above used to switch coercion on in the schema tRPC shares.
    const api = callerFor(db, operator);
    await expect(
      api.proxies.setHealth({ proxyId: p, healthy: "false" as unknown as boolean, reason: "x" }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(
      api.proxies.setHealthPin({ proxyId: p, pinned: "true" as unknown as boolean, reason: "x" }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(await proxyHealth(p)).toEqual({ healthy: true, healthPinned: null });
    expect(await db.tableVersion.count({ where: { poolId: pool.id } })).toBe(versions);

    const down = await restCall(db, "POST", `/proxies/${p}/health`, {
      token,
      body: { healthy: false, reason: "http check 503" },
    });
    expect(down.status).toBe(200);
    expect((await proxyHealth(p)).healthy).toBe(false);
    await api.proxies.setHealth({ proxyId: p, healthy: true, reason: "recovered" });
    expect((await proxyHealth(p)).healthy).toBe(true);
  });

  it("refuses a health check whose enabled or gue is a string", async () => {
    const admin = await makeUser(db, "admin");
    const token = (
      await callerFor(db, admin).tokens.create({ name: "all", scopes: ["read", "operate", "admin"] })
    ).token;
    const pool = await makePool(db, "web", 2);
    const before = await db.pool.findUniqueOrThrow({ where: { id: pool.id }, select: { healthCheck: true } });
    for (const healthCheck of [{ enabled: "false" }, { enabled: true, gue: "false" }]) {
      const r = await restCall(db, "PUT", `/pools/${pool.id}/health-check`, {
        token,
        body: { healthCheck, reason: "probe" },
      });
      expect(r.status, JSON.stringify(healthCheck)).toBe(400);
      expect(Object.values(fields(r.body))).toEqual(['must be true or false, not the string "false"']);
    }
    expect(
      await db.pool.findUniqueOrThrow({ where: { id: pool.id }, select: { healthCheck: true } }),
    ).toEqual(before);
    const off = await restCall(db, "PUT", `/pools/${pool.id}/health-check`, {
      token,
      body: { healthCheck: { enabled: false }, reason: "maintenance" },
    });
    expect(off.status).toBe(200);
  });
});
