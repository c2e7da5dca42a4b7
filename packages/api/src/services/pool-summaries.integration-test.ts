import { newId } from "@tide/contracts";
import {
  bindSelect,
  createDb,
  poolPublicSelect,
  poolSummaries,
  proxySelect,
  tableVersionSummarySelect,
  type Db,
} from "@tide/db";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { makePool, truncateAll } from "../testing/fixtures";
import { insertCurrentTableVersion } from "./table.service";

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
