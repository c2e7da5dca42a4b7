import { isTideError, type TideError } from "@tide/contracts";
import { createDb, type Db } from "@tide/db";
import { decodeGlbd } from "@tide/forwarding";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { callerFor, makePool, makeUser, restCall, truncateAll } from "../../testing/fixtures";
import { HASH_MIGRATION_MIN_MS } from "./hash-migration.plan";
import { finishQuietMigrations } from "./hash-migration.service";

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
  if (!isTideError(cause)) throw e;
  return cause;
}

async function tableOf(poolId: string, version: number) {
  const row = await db.tableVersion.findUniqueOrThrow({ where: { poolId_version: { poolId, version } } });
  return decodeGlbd(row.content)[0]!;
}

describe("hash-field migration", () => {
  it("keeps the old fields as the alternate hash until finished, one migration at a time", async () => {
    const admin = await makeUser(db, "admin");
    const api = callerFor(db, admin);
    const pool = await makePool(db, "web", 3, { served: true });

    const preview = await api.pools.previewHashFields({ poolId: pool.id, hashFields: "src_addr,src_port" });
    expect(preview).toMatchObject({ migrates: true, refusal: null });
    expect(preview.flowsMoved).toBeGreaterThan(0);

    const changed = await api.pools.setHashFields({
      poolId: pool.id,
      hashFields: ["src_port", "src_addr"],
      reason: "spread NAT clients",
    });
    expect(changed.pool.hashFields).toEqual(["src_addr", "src_port"]);
    expect(changed.pool.hashMigration).toMatchObject({ from: ["src_addr"], to: ["src_addr", "src_port"] });
    expect(changed.tableVersion!.cause).toContain("migrating");
    // The table the directors get hashes on the new fields and carries the old ones as alt.
    const v2 = await tableOf(pool.id, 2);
    expect(v2.hashFields).toEqual(["src_addr", "src_port"]);
    expect(v2.altHashFields).toEqual(["src_addr"]);
    // Rows do not move: only which row a flow hashes to.
    expect(
      Buffer.from(v2.primary.buffer).equals(Buffer.from((await tableOf(pool.id, 1)).primary.buffer)),
    ).toBe(true);

    // A second change is refused while this one migrates, in the preview and the change.
    const during = await api.pools.previewHashFields({ poolId: pool.id, hashFields: "src_addr" });
    expect(during.refusal).toMatch(/still migrating from src_addr to src_addr\+src_port/);
    const refused = tideError(
      await api.pools.setHashFields({ poolId: pool.id, hashFields: ["src_addr"] }).catch((e: unknown) => e),
    );
    expect(refused.code).toBe("conflict");
    expect(refused.message).toContain("Finish that migration first");
    expect(await db.tableVersion.count({ where: { poolId: pool.id } })).toBe(2);

    // A drain meanwhile keeps the alternate hash in its table.
    await api.proxies.drain({ proxyId: pool.proxies[0]!.id });
    expect((await tableOf(pool.id, 3)).altHashFields).toEqual(["src_addr"]);
    await api.proxies.abort({ proxyId: pool.proxies[0]!.id });

    const finished = await api.pools.finishHashMigration({ poolId: pool.id, reason: "done" });
    expect(finished.pool.hashMigration).toBeNull();
    const last = finished.tableVersion!.version;
    expect((await tableOf(pool.id, last)).altHashFields ?? []).toEqual([]);
    expect((await tableOf(pool.id, last)).hashFields).toEqual(["src_addr", "src_port"]);
    const audit = (await api.audit.list({ poolId: pool.id, outcome: "done", limit: 10 })).items;
    expect(audit.find((a) => a.action === "pool.finish_hash_migration")).toMatchObject({
      reason: "done",
      before: { migrating: { from: ["src_addr"], to: ["src_addr", "src_port"] } },
    });
    const twice = tideError(
      await api.pools.finishHashMigration({ poolId: pool.id }).catch((e: unknown) => e),
    );
    expect(twice.code).toBe("conflict");
    expect(twice.message).toContain("no hash-field migration in progress");
  });

  it("changes at once, without a migration, on a pool no director serves", async () => {
    const api = callerFor(db, await makeUser(db, "admin"));
    const pool = await makePool(db, "spare", 2);
    expect(
      (await api.pools.previewHashFields({ poolId: pool.id, hashFields: "src_addr,dst_port" })).migrates,
    ).toBe(false);
    const changed = await api.pools.setHashFields({ poolId: pool.id, hashFields: ["src_addr", "dst_port"] });
    expect(changed.pool.hashMigration).toBeNull();
    expect((await tableOf(pool.id, 2)).altHashFields ?? []).toEqual([]);
  });

  it("finishes by itself only after the minimum time, once every proxy saw none through the old fields", async () => {
    const api = callerFor(db, await makeUser(db, "admin"));
    const pool = await makePool(db, "web", 3, { served: true });
    await api.pools.setHashFields({ poolId: pool.id, hashFields: ["src_addr", "src_port"] });
    const { hashMigrationStartedAt } = await db.pool.findUniqueOrThrow({ where: { id: pool.id } });
    const at = (ms: number) => new Date(hashMigrationStartedAt!.getTime() + ms);
    const quiet = async () => ({ acceptedAlternateHashPerS: 0, reportingProxies: 3, proxies: 3 });
    const busy = async () => ({ acceptedAlternateHashPerS: 2.5, reportingProxies: 3, proxies: 3 });

    expect((await finishQuietMigrations(db, at(10_000), quiet))[0]).toMatchObject({ finished: false });
    expect((await finishQuietMigrations(db, at(HASH_MIGRATION_MIN_MS * 2), busy))[0]).toMatchObject({
      finished: false,
      plan: { why: "2.5 packets/s still reach their proxy by the old fields" },
    });
    expect(await db.tableVersion.count({ where: { poolId: pool.id } })).toBe(2);

    const done = await finishQuietMigrations(db, at(HASH_MIGRATION_MIN_MS * 2), quiet);
    expect(done).toEqual([expect.objectContaining({ poolId: pool.id, finished: true })]);
    const after = await api.pools.get({ poolId: pool.id });
    expect(after.hashMigration).toBeNull();
    expect(after.currentVersion!.actor).toBe("hash migration");
    expect(after.currentVersion!.reason).toMatch(/^finished automatically: no packet reached a proxy/);
    expect(await finishQuietMigrations(db, at(HASH_MIGRATION_MIN_MS * 3), quiet)).toEqual([]);
  });

  it("finishes over REST with an admin token and refuses a read token", async () => {
    const admin = await makeUser(db, "admin");
    const api = callerFor(db, admin);
    const pool = await makePool(db, "web", 3, { served: true });
    await api.pools.setHashFields({ poolId: pool.id, hashFields: ["src_addr", "src_port"] });
    const tokenOf = async (scopes: ("read" | "operate" | "admin")[]) =>
      (await api.tokens.create({ name: scopes.join("-"), scopes })).token;
    const path = `/pools/${pool.id}/hash-fields/migration/finish`;
    const read = await restCall(db, "POST", path, { token: await tokenOf(["read"]), body: {} });
    expect(read.status).toBe(403);
    expect((await api.pools.get({ poolId: pool.id })).hashMigration).not.toBeNull();
    const ok = await restCall(db, "POST", path, {
      token: await tokenOf(["read", "operate", "admin"]),
      body: {},
    });
    expect(ok.status).toBe(200);
    expect((ok.body!.pool as { hashMigration: unknown }).hashMigration).toBeNull();
  });
});
