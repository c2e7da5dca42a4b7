import { newId } from "@tide/contracts";
import {
  bindSelect,
  createDb,
  fleetRevision,
  poolPublicSelect,
  poolSummaries,
  proxySelect,
  tableVersionSummarySelect,
  type Db,
} from "@tide/db";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { makePool, truncateAll } from "../../testing/fixtures";
import pg from "pg";
import { listPools } from "./fleet.service";
import { PoolListCache } from "./pool-list-cache";
import { insertCurrentTableVersion } from "../tables/table.service";

let db: Db;

beforeAll(() => {
  db = createDb(inject("databaseUrl"), { max: 4 });
});
afterAll(async () => {
  await db.$disconnect();
});
beforeEach(async () => {
  await truncateAll(db);
});

/** What the pools page read through Prisma before poolSummaries (fleet.service.ts, issue 28). */
function prismaSummaries(poolId?: string) {
  return db.pool.findMany({
    where: poolId ? { id: poolId } : {},
    select: {
      ...poolPublicSelect,
      binds: { select: bindSelect, orderBy: { createdAt: "asc" } },
      proxies: { select: proxySelect, orderBy: { slot: "asc" } },
      directors: { select: { id: true, hostname: true }, orderBy: { hostname: "asc" } },
      tableVersions: { select: tableVersionSummarySelect, orderBy: { version: "desc" }, take: 1 },
    },
    orderBy: { name: "asc" },
  });
}

describe("poolSummaries: every pool with its lists in one statement", () => {
  it("reads what Prisma's nested query read, field for field, instants included", async () => {
    // Pools of every shape: served by two directors or none, with and without proxies, several
    // table versions, a hash-field migration, a pinned and an unhealthy proxy, several binds.
    const web = await makePool(db, "web", 3, { served: true });
    const api = await makePool(db, "api", 0);
    const dns = await makePool(db, "dns", 2, { served: true });
    const second = await db.director.create({ data: { id: newId("director"), hostname: "a-director" } });
    await db.pool.update({ where: { id: web.id }, data: { directors: { connect: { id: second.id } } } });
    await db.bind.create({
      data: {
        id: newId("bind"),
        poolId: web.id,
        address: "2001:db8::10",
        prefixBits: 128,
        proto: "udp",
        portStart: 53,
        portEnd: 60,
      },
    });
    const [p0, p1] = await db.proxy.findMany({ where: { poolId: web.id }, orderBy: { slot: "asc" } });
    await db.proxy.update({
      where: { id: p0!.id },
      data: { state: "draining", healthy: false, healthReason: "tcp 443: refused", healthPinned: true },
    });
    await db.proxy.update({ where: { id: p1!.id }, data: { healthPinned: false, state: "filling" } });
    await db.pool.update({
      where: { id: dns.id },
      data: {
        hashFields: ["src_addr", "src_port"],
        altHashFields: ["src_addr"],
        hashMigrationStartedAt: new Date("2026-11-28T10:11:12.345Z"),
        healthCheck: { kind: "tcp", port: 53 },
        description: "resolvers",
      },
    });
    for (let i = 0; i < 3; i++) {
      await db.$transaction((tx) =>
        insertCurrentTableVersion(tx, web.id, "manual", `rebuild ${i}`, {
          actorKind: "system",
          actorId: null,
          actorLabel: "test",
        }),
      );
    }

    const expected = await prismaSummaries();
    const got = await poolSummaries(db);
    expect(got.map((p) => p.name)).toEqual(["api", "dns", "web"]);
    expect(got).toEqual(expected);
    expect(got.find((p) => p.id === web.id)!.tableVersions[0]!.reason).toBe("rebuild 2");
    expect(got.find((p) => p.id === api.id)!.tableVersions).toEqual([]);

    // One pool by id reads the same as the whole list's entry.
    expect(await poolSummaries(db, dns.id)).toEqual(await prismaSummaries(dns.id));
    expect(await poolSummaries(db, "pool_missing")).toEqual([]);
  });

  it("reads no pools as an empty list", async () => {
    expect(await poolSummaries(db)).toEqual([]);
  });
});

describe("the pools list kept under the fleet's revision", () => {
  it("reads the list again after any committed change, whoever wrote it, and not before", async () => {
    const web = await makePool(db, "web", 2, { served: true });
    let loads = 0;
    const cache = new PoolListCache(
      () => fleetRevision(db),
      async () => {
        loads++;
        return listPools(db);
      },
    );
    await cache.get();
    await cache.get();
    expect(loads).toBe(1);

    // Plain SQL on another connection, as another console or an operator would: the next read
    // sees it, with no notification to wait for.
    const other = new pg.Client({ connectionString: inject("databaseUrl") });
    await other.connect();
    try {
      await other.query("BEGIN");
      await other.query("UPDATE proxies SET healthy = false WHERE pool_id = $1 AND slot = 0", [web.id]);
      // Not committed: the list (and the revision) are as before.
      expect((await cache.get()).find((p) => p.id === web.id)!.proxyCounts.unhealthy).toBe(0);
      expect(loads).toBe(1);
      await other.query("COMMIT");
      expect((await cache.get()).find((p) => p.id === web.id)!.proxyCounts.unhealthy).toBe(1);
      expect(loads).toBe(2);

      // Each table the list shows raises the revision.
      const changes = [
        ["UPDATE pools SET description = 'x' WHERE id = $1", [web.id]],
        ["UPDATE binds SET port_end = 444 WHERE pool_id = $1", [web.id]],
        [`DELETE FROM "_DirectorToPool" WHERE "B" = $1`, [web.id]],
        ["UPDATE directors SET hostname = 'renamed-director'", []],
        ["DELETE FROM table_versions WHERE pool_id = $1", [web.id]],
      ] as const;
      for (const [sql, params] of changes) {
        const before = await fleetRevision(db);
        await other.query(sql, [...params]);
        expect(await fleetRevision(db), sql).toBeGreaterThan(before!);
        await cache.get();
      }
      expect(loads).toBe(2 + changes.length);
      const read = (await cache.get()).find((p) => p.id === web.id)!;
      expect(read.description).toBe("x");
      expect(read.directorIds).toEqual([]);
      expect(read.currentVersion).toBeNull();
      expect(loads).toBe(2 + changes.length);
    } finally {
      await other.end();
    }
  });
});
