import { createDb, type Db } from "@tide/db";
import { decodeGlbd } from "@tide/forwarding";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { callerFor, makePool, makeUser, truncateAll } from "../testing/fixtures";

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
    db.proxy.findMany({
      where: { poolId },
      orderBy: { slot: "asc" },
      select: { id: true, state: true, healthy: true },
    }),
    db.tableVersion.count({ where: { poolId } }),
    db.auditEvent.count({ where: { poolId, outcome: "done" } }), // refused attempts are recorded as refused
  ]);
  return { proxies, versions, audit };
}

describe("proxy drain/fill through tRPC against PostgreSQL", () => {
  it("drains a proxy: new immutable version, audit event with before/after, new SYNs avoid it", async () => {
    const operator = await makeUser(db, "operator");
    const pool = await makePool(db, "web", 4);
    const target = pool.proxies[1]!;
    const api = callerFor(db, operator);

    const preview = await api.proxies.preview({ proxyId: target.id, action: "drain" });
    expect(preview.allowed).toBe(true);
    expect(preview.to).toBe("draining");
    expect(preview.diff!.rowsPrimaryChanged).toBeGreaterThan(0);

    const result = await api.proxies.transition({
      proxyId: target.id,
      action: "drain",
      reason: "kernel upgrade",
    });
    expect(result.proxy.state).toBe("draining");
    expect(result.tableVersion!.version).toBe(2);
    expect(result.tableVersion!.actor).toBe(operator.email);
    expect(result.tableVersion!.reason).toBe("kernel upgrade");

    // The preview's diff is exactly what was applied.
    const diff = await api.tables.diff({
      fromVersionId: pool.currentVersion!.id,
      toVersionId: result.tableVersion!.id,
    });
    expect(diff.diff.rowsPrimaryChanged).toBe(preview.diff!.rowsPrimaryChanged);
    expect(diff.diff.rowsSecondaryChanged).toBe(preview.diff!.rowsSecondaryChanged);
    const share = diff.diff.shares.find((s) => s.address === target.address)!;
    expect(share.before.primary).toBeGreaterThan(0);
    expect(share.after.primary).toBe(0); // a draining proxy is never primary when its secondary is usable

    // The stored bytes decode, and the old version is untouched.
    const v1 = await db.tableVersion.findUniqueOrThrow({ where: { id: pool.currentVersion!.id } });
    expect(v1.contentHash).toBe(pool.currentVersion!.contentHash);
    const [decoded] = decodeGlbd(
      (await db.tableVersion.findUniqueOrThrow({ where: { id: result.tableVersion!.id } })).content,
    );
    expect(decoded).toBeDefined();

    const audit = await api.audit.list({ poolId: pool.id, limit: 10 });
    const drain = audit.items.find((a) => a.action === "proxy.drain")!;
    expect(drain.actor).toBe(operator.email);
    expect(drain.before).toEqual({ state: "active" });
    expect(drain.after).toMatchObject({ state: "draining", tableVersion: 2 });
    expect(drain.reason).toBe("kernel upgrade");
    expect(drain.tableVersionId).toBe(result.tableVersion!.id);
  });

  it("refuses invalid transitions with a reason and changes nothing", async () => {
    const operator = await makeUser(db, "operator");
    const pool = await makePool(db, "web", 3);
    const api = callerFor(db, operator);
    const before = await snapshot(pool.id);
    const cases = [
      { proxyId: pool.proxies[0]!.id, action: "fill" as const, code: "invalid_transition" },
      { proxyId: pool.proxies[0]!.id, action: "activate" as const, code: "invalid_transition" },
      { proxyId: pool.proxies[0]!.id, action: "deactivate" as const, code: "invalid_transition" },
    ];
    for (const c of cases) {
      const err = await api.proxies.transition(c).catch((e: unknown) => e);
      expect(tideCode(err), `${c.action}`).toBe(c.code);
      expect((err as Error).message).toMatch(/it is active/);
    }
    // Two of three: keep at least two eligible.
    const two = await makePool(db, "pair", 2, { served: true });
    const err = await api.proxies
      .transition({ proxyId: two.proxies[0]!.id, action: "drain" })
      .catch((e: unknown) => e);
    expect(tideCode(err)).toBe("invariant_violation");
    expect(await snapshot(pool.id)).toEqual(before);
    expect((await snapshot(two.id)).versions).toBe(1);
  });

  it("drains and deactivates every proxy of a pool no director serves; the last writes no version", async () => {
    const operator = await makeUser(db, "operator");
    const pool = await makePool(db, "retired", 3);
    const api = callerFor(db, operator);
    for (const p of pool.proxies) {
      const r = await api.proxies.transition({ proxyId: p.id, action: "drain", reason: "retire" });
      expect(r.proxy.state).toBe("draining");
      expect(r.tableVersion).not.toBeNull();
    }
    const detail = await api.pools.get({ poolId: pool.id });
    expect(detail.actions.filter((a) => a.action === "deactivate").every((a) => a.allowed)).toBe(true);
    const versions: (number | null)[] = [];
    for (const p of pool.proxies) {
      const preview = await api.proxies.preview({ proxyId: p.id, action: "deactivate" });
      expect(preview.allowed).toBe(true);
      const r = await api.proxies.transition({ proxyId: p.id, action: "deactivate" });
      versions.push(r.tableVersion?.version ?? null);
    }
    // v1 + 3 drains = v4; two deactivations v5, v6; the last leaves nothing to build.
    expect(versions).toEqual([5, 6, null]);
    expect((await snapshot(pool.id)).proxies.every((p) => p.state === "inactive")).toBe(true);
    const audit = await api.audit.list({ targetId: pool.proxies[2]!.id, outcome: "done", limit: 1 });
    expect(audit.items[0]).toMatchObject({ action: "proxy.deactivate" });
  });

  it("lets exactly one of two concurrent conflicting drains win; the other gets a conflict", async () => {
    const operator = await makeUser(db, "operator");
    const pool = await makePool(db, "web", 5, { served: true });
    const api = callerFor(db, operator);
    for (let round = 0; round < 5; round++) {
      const [a, b] = [pool.proxies[round % 5]!, pool.proxies[(round + 1) % 5]!];
      const results = await Promise.allSettled([
        api.proxies.transition({ proxyId: a.id, action: "drain" }),
        api.proxies.transition({ proxyId: b.id, action: "drain" }),
      ]);
      const won = results.filter((r) => r.status === "fulfilled");
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(tideCode(lost[0]!.reason)).toBe("conflict");
      expect((lost[0]!.reason as Error).message).toMatch(/only one proxy that is not active/);
      const states = await db.proxy.findMany({ where: { poolId: pool.id }, select: { state: true } });
      expect(states.filter((s) => s.state !== "active")).toHaveLength(1);
      // Undo for the next round: abort the drain that won.
      const winner = (won[0] as PromiseFulfilledResult<{ proxy: { id: string } }>).value.proxy.id;
      await api.proxies.transition({ proxyId: winner, action: "activate" });
    }
    // Same proxy twice at once: one wins, the other sees it already draining.
    const target = pool.proxies[0]!;
    const same = await Promise.allSettled([
      api.proxies.transition({ proxyId: target.id, action: "drain" }),
      api.proxies.transition({ proxyId: target.id, action: "drain" }),
    ]);
    expect(same.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const versions = await db.tableVersion.findMany({
      where: { poolId: pool.id },
      select: { version: true },
    });
    const numbers = versions.map((v) => v.version).sort((x, y) => x - y);
    expect(numbers).toEqual(numbers.map((_, i) => i + 1)); // no gaps, no duplicates
  });

  it("refuses every mutation without the right scope and changes nothing", async () => {
    const viewer = await makeUser(db, "viewer");
    const operator = await makeUser(db, "operator");
    const pool = await makePool(db, "web", 3);
    const before = await snapshot(pool.id);
    const p = pool.proxies[0]!.id;
    const asViewer = callerFor(db, viewer);
    const asNobody = callerFor(db, null);
    const asOperator = callerFor(db, operator);
    const operateCalls = (api: typeof asViewer) => [
      () => api.proxies.drain({ proxyId: p }),
      () => api.proxies.fill({ proxyId: p }),
      () => api.proxies.activate({ proxyId: p }),
      () => api.proxies.deactivate({ proxyId: p }),
      () => api.proxies.transition({ proxyId: p, action: "drain" }),
      () => api.proxies.setHealth({ proxyId: p, healthy: false, reason: "x" }),
    ];
    const adminCalls = (api: typeof asViewer) => [
      () => api.proxies.create({ poolId: pool.id, address: "10.1.1.1", hostname: "new" }),
      () => api.proxies.remove({ proxyId: p }),
      () => api.tokens.create({ name: "t", scopes: ["read"] }),
      () => api.tokens.list(),
    ];
    for (const call of [...operateCalls(asViewer), ...adminCalls(asViewer), ...adminCalls(asOperator)]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TRPCError);
      expect((err as TRPCError).code).toBe("FORBIDDEN");
    }
    for (const call of [...operateCalls(asNobody), ...adminCalls(asNobody), () => asNobody.pools.list()]) {
      const err = await call().catch((e: unknown) => e);
      expect((err as TRPCError).code).toBe("UNAUTHORIZED");
    }
    expect(await snapshot(pool.id)).toEqual(before);
    expect(await db.apiToken.count()).toBe(0);
  });

  it("adds a proxy inactive to a served pool, fills it, removes only inactive proxies (new version)", async () => {
    const admin = await makeUser(db, "admin");
    const pool = await makePool(db, "web", 3);
    const api = callerFor(db, admin);
    const director = await api.directors.register({ hostname: "director-01.test" });
    await api.directors.assignPool({ directorId: director.id, poolId: pool.id });
    const added = await api.proxies.create({ poolId: pool.id, address: "10.50.0.9", hostname: "proxy-new" });
    expect(added.state).toBe("inactive");
    expect(added.tableVersion).toBeNull();
    expect(await db.tableVersion.count({ where: { poolId: pool.id } })).toBe(1);
    const err = await api.proxies.remove({ proxyId: pool.proxies[0]!.id }).catch((e: unknown) => e);
    expect(tideCode(err)).toBe("invalid_transition");
    const filled = await api.proxies.fill({ proxyId: added.id });
    expect(filled.proxy.state).toBe("filling");
    const diff = await api.tables.diff({
      fromVersionId: pool.currentVersion!.id,
      toVersionId: filled.tableVersion!.id,
    });
    expect(diff.diff.shares.find((s) => s.address === "10.50.0.9")!.after.primary).toBeGreaterThan(0);
    await api.proxies.abort({ proxyId: added.id }); // abort the fill
    const removed = await api.proxies.remove({ proxyId: added.id, reason: "wrong rack" });
    expect(removed.removed.id).toBe(added.id);
    expect(await db.proxy.count({ where: { poolId: pool.id } })).toBe(3);
    // The removal wrote a version whose backend list no longer holds the proxy.
    expect(removed.tableVersion).toMatchObject({ version: 4, reason: "wrong rack" });
    const last = await db.tableVersion.findUniqueOrThrow({ where: { id: removed.tableVersion!.id } });
    expect(decodeGlbd(last.content)[0]!.backends.map((b) => b.address)).toEqual(
      pool.proxies.map((p) => p.address),
    );
  });

  it("soft-drains an unhealthy proxy and explains flows consistently with the stored table", async () => {
    const operator = await makeUser(db, "operator");
    const pool = await makePool(db, "web", 4);
    const api = callerFor(db, operator);
    const sick = pool.proxies[2]!;
    const res = await api.proxies.setHealth({ proxyId: sick.id, healthy: false, reason: "http check 503" });
    const rows = await api.tables.rows({ versionId: res.tableVersion!.id });
    const primary = Buffer.from(rows.primary, "base64");
    expect(primary).toHaveLength(65536);
    const sickSlot = rows.backends.find((b) => b.proxyId === sick.id)!.slot;
    expect(primary.includes(sickSlot)).toBe(false);
    for (const src of ["198.51.100.7", "2001:db8::77"]) {
      const e = await api.tables.explain({ versionId: res.tableVersion!.id, srcAddr: src });
      const slot = primary[e.row]!;
      expect(e.primary.address).toBe(rows.backends[slot]!.address);
      expect(e.outerSourcePort).toBeGreaterThanOrEqual(0x8000);
    }
    const bad = await api.tables
      .explain({ versionId: res.tableVersion!.id, srcAddr: "not-an-ip" })
      .catch((e: unknown) => e);
    expect(tideCode(bad)).toBe("bad_request");
  });
});
