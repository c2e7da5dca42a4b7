import { newId } from "@tide/contracts";
import { createDb, type Db } from "@tide/db";
import { decodeGlbd, encodeGlbd, explainFlow, tableContentHash } from "@tide/forwarding";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { callerFor, makePool, makeUser, truncateAll } from "../testing/fixtures";
import { TABLE_FORMAT_CAUSE, upgradeTableFormats } from "./table-format";

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

async function decoded(versionId: string) {
  const row = await db.tableVersion.findUniqueOrThrow({ where: { id: versionId } });
  return { row, table: decodeGlbd(row.content)[0]! };
}

const flow = { srcAddr: "198.51.100.23", srcPort: 40123 };

describe("tables carry their pool's hash fields", () => {
  it("a hash-field change writes a version whose file carries the new fields, and explain follows it", async () => {
    const admin = await makeUser(db, "admin");
    const api = callerFor(db, admin);
    const pool = await makePool(db, "dns", 4);
    const v1 = await decoded(pool.currentVersion!.id);
    expect(v1.table.hashFields).toEqual(["src_addr"]);

    const changed = await api.pools.setHashFields({ poolId: pool.id, hashFields: ["src_addr", "src_port"] });
    const v2 = await decoded(changed.tableVersion!.id);
    expect(v2.table.hashFields).toEqual(["src_addr", "src_port"]);
    expect(v2.row.contentHash).not.toBe(v1.row.contentHash);
    expect(v2.row.contentHash).toBe(tableContentHash(v2.row.content));
    expect(Buffer.from(v2.table.primary.buffer).equals(Buffer.from(v1.table.primary.buffer))).toBe(true);

    // Each version is explained with its own fields (find a flow whose row differs between them).
    let port = flow.srcPort;
    while (
      explainFlow(v1.table, { ...flow, srcPort: port }, ["src_addr"]).row ===
      explainFlow(v2.table, { ...flow, srcPort: port }, ["src_addr", "src_port"]).row
    ) {
      port += 1;
    }
    const e1 = await api.tables.explain({ versionId: v1.row.id, ...flow, srcPort: port });
    const e2 = await api.tables.explain({ versionId: v2.row.id, ...flow, srcPort: port });
    expect(e1.hashFields).toEqual(["src_addr"]);
    expect(e2.hashFields).toEqual(["src_addr", "src_port"]);
    expect(e1.row).toBe(explainFlow(v1.table, { ...flow, srcPort: port }, ["src_addr"]).row);
    expect(e2.row).toBe(explainFlow(v2.table, { ...flow, srcPort: port }, ["src_addr", "src_port"]).row);
    expect(e2.row).not.toBe(e1.row);
  });

  it("the seed writes one v3 version for a pool still on a v2 table, once; v2 versions explain with the pool's fields", async () => {
    const admin = await makeUser(db, "admin");
    const api = callerFor(db, admin);
    const pool = await makePool(db, "dns", 3);
    await db.pool.update({ where: { id: pool.id }, data: { hashFields: ["src_addr", "src_port"] } });
    // A version as written before tables carried hash fields: the same table as GLBD v2.
    const { table } = await decoded(pool.currentVersion!.id);
    const v2bytes = encodeGlbd([{ ...table, hashFields: undefined }]);
    expect(v2bytes[4]).toBe(2);
    const legacy = await db.tableVersion.create({
      data: {
        id: newId("tableVersion"),
        poolId: pool.id,
        version: 2,
        contentHash: tableContentHash(v2bytes),
        content: Buffer.from(v2bytes),
        backends: (await db.tableVersion.findUniqueOrThrow({ where: { id: pool.currentVersion!.id } }))
          .backends!,
        cause: "legacy",
        actorKind: "system",
        actorLabel: "test",
      },
    });
    const other = await makePool(db, "www", 2);

    const legacyExplain = await api.tables.explain({ versionId: legacy.id, ...flow });
    expect(legacyExplain.hashFields).toEqual(["src_addr", "src_port"]);

    expect(await upgradeTableFormats(db)).toEqual(["dns"]);
    const versions = await api.tables.versions({ poolId: pool.id, limit: 10 });
    expect(versions.items[0]).toMatchObject({ version: 3, cause: TABLE_FORMAT_CAUSE, actor: "seed" });
    const upgraded = await decoded(versions.items[0]!.id);
    expect(upgraded.table.hashFields).toEqual(["src_addr", "src_port"]);
    expect(upgraded.row.content[4]).toBe(3);
    expect(await db.tableVersion.count({ where: { poolId: other.id } })).toBe(1);

    expect(await upgradeTableFormats(db)).toEqual([]);
    expect(await db.tableVersion.count({ where: { poolId: pool.id } })).toBe(3);
  });
});
