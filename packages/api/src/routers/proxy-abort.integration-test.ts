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

function tideCode(e: unknown): string | undefined {
  if (!(e instanceof TRPCError)) return undefined;
  const cause = e.cause as { code?: string } | undefined;
  return cause?.code ?? e.code;
}

async function snapshot(poolId: string) {
  const [proxies, versions, audit] = await Promise.all([
    db.proxy.findMany({ where: { poolId }, orderBy: { slot: "asc" }, select: { id: true, state: true } }),
    db.tableVersion.count({ where: { poolId } }),
    db.auditEvent.count({ where: { poolId, outcome: "done" } }), // refusals are recorded, as refused
  ]);
  return { proxies, versions, audit };
}

describe("abort drain through the API against PostgreSQL", () => {
  it("the pool says what is in progress and what is refused; abort puts the drained proxy back", async () => {
    const operator = await makeUser(db, "operator");
    const pool = await makePool(db, "web", 4, { served: true });
    const api = callerFor(db, operator);
    const [first, target] = [pool.proxies[0]!, pool.proxies[1]!];
    await api.proxies.drain({ proxyId: target.id, reason: "kernel upgrade" });

    const during = await api.pools.get({ poolId: pool.id });
    expect(during.changeInProgress).toMatchObject({
      proxyId: target.id,
      hostname: target.hostname,
      state: "draining",
    });
    const offered = during.actions.filter((a) => a.proxyId === target.id);
    expect(offered.map((a) => [a.action, a.label, a.allowed])).toEqual([
      ["deactivate", "Deactivate", true],
      ["abort", "Abort drain", true],
    ]);
    const blocked = during.actions.find((a) => a.proxyId === first.id && a.action === "drain")!;
    expect(blocked.allowed).toBe(false);
    expect(blocked.refusal).toMatchObject({
      code: "conflict",
      blockingProxyId: target.id,
      blockingHostname: target.hostname,
    });
    // The action itself refuses with the same words the pool showed.
    const refused = await api.proxies.drain({ proxyId: first.id }).catch((e: unknown) => e);
    expect(tideCode(refused)).toBe("conflict");
    expect((refused as Error).message).toBe(blocked.refusal!.message);

    const aborted = await api.proxies.abort({
      proxyId: target.id,
      reason: "wrong proxy",
      expectedVersion: 2,
    });
    expect(aborted.proxy.state).toBe("active");
    expect(aborted.tableVersion).toMatchObject({ version: 3, reason: "wrong proxy" });
    expect(aborted.tableVersion!.cause).toContain("abort");

    // Back to the table before the drain: the same rows as v1.
    const diff = await api.tables.diff({
      fromVersionId: pool.currentVersion!.id,
      toVersionId: aborted.tableVersion!.id,
    });
    expect(diff.diff.rowsChanged).toBe(0);

    const audit = await api.audit.list({ poolId: pool.id, limit: 10 });
    const event = audit.items.find((a) => a.action === "proxy.abort")!;
    expect(event).toMatchObject({
      actor: operator.email,
      targetId: target.id,
      before: { state: "draining" },
      after: { state: "active", tableVersion: 3 },
      reason: "wrong proxy",
      tableVersionId: aborted.tableVersion!.id,
    });

    const after = await api.pools.get({ poolId: pool.id });
    expect(after.changeInProgress).toBeNull();
    expect(after.actions.every((a) => a.action === "drain" && a.allowed)).toBe(true);
  });

  it("refuses abort without the operate scope, on an active proxy, and against a stale preview; nothing changes", async () => {
    const viewer = await makeUser(db, "viewer");
    const operator = await makeUser(db, "operator");
    const pool = await makePool(db, "web", 4);
    const target = pool.proxies[2]!;
    await callerFor(db, operator).proxies.drain({ proxyId: target.id });
    const before = await snapshot(pool.id);

    const forbidden = await callerFor(db, viewer)
      .proxies.abort({ proxyId: target.id })
      .catch((e: unknown) => e);
    expect(tideCode(forbidden)).toBe("FORBIDDEN");

    const api = callerFor(db, operator);
    const active = await api.proxies.abort({ proxyId: pool.proxies[0]!.id }).catch((e: unknown) => e);
    expect(tideCode(active)).toBe("invalid_transition");
    expect((active as Error).message).toContain("it is active");

    // Previewed at v1; the drain since made v2.
    const stale = await api.proxies
      .abort({ proxyId: target.id, expectedVersion: 1 })
      .catch((e: unknown) => e);
    expect(tideCode(stale)).toBe("conflict");
    expect((stale as Error).message).toContain("computed against v1, the current version is v2");

    expect(await snapshot(pool.id)).toEqual(before);
    // The three refused calls are in the audit log, as refused, each with its reason.
    const refused = await db.auditEvent.findMany({
      where: { poolId: pool.id, outcome: "refused", action: "proxy.abort" },
      select: { refusal: true },
    });
    expect(refused).toHaveLength(3);
    expect(refused.every((r) => (r.refusal ?? "").length > 0)).toBe(true);
  });

  it("REST: POST /proxies/{id}/abort with an operate token; the older activate spelling is recorded as abort", async () => {
    const admin = await makeUser(db, "admin");
    const { token } = await callerFor(db, admin).tokens.create({ name: "ops", scopes: ["read", "operate"] });
    const pool = await makePool(db, "web", 4);
    const target = pool.proxies[3]!;
    const post = (action: string, body: unknown) =>
      restCall(db, "POST", `/proxies/${target.id}/${action}`, { token, body });

    expect((await post("drain", { reason: "rack move" })).status).toBe(200);
    const aborted = await post("abort", { reason: "rack move cancelled" });
    expect(aborted.status).toBe(200);
    expect(aborted.body).toMatchObject({ proxy: { state: "active" }, tableVersion: { version: 3 } });

    expect((await post("drain", {})).status).toBe(200);
    const alias = await post("activate", { reason: "old runbook" });
    expect(alias.status).toBe(200);
    expect(alias.body).toMatchObject({ proxy: { state: "active" } });
    const events = await db.auditEvent.findMany({
      where: { poolId: pool.id, action: { startsWith: "proxy." } },
      orderBy: { createdAt: "asc" },
      select: { action: true, reason: true },
    });
    expect(events.map((e) => e.action)).toEqual(["proxy.drain", "proxy.abort", "proxy.drain", "proxy.abort"]);
    expect(events.at(-1)!.reason).toBe("old runbook");
  });
});
