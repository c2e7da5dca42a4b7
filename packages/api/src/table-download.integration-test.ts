import { decodeGlbd, tableContentHash } from "@tide/forwarding";
import { createDb, type Db } from "@tide/db";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { handleTableDownload } from "./http/table-download";
import { callerFor, makePool, makeUser, truncateAll } from "./testing/fixtures";

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

/** Byte offset of the first table's hash key in a GLBD file: 24-byte header + 13,320. */
const HASH_KEY_AT = 13_344;

async function setup() {
  const admin = await makeUser(db, "admin");
  const api = callerFor(db, admin);
  const token = async (scopes: ("read" | "operate")[]) =>
    (await api.tokens.create({ name: scopes.join("+"), scopes })).token;
  const director = await db.director.create({ data: { id: "dir_dl000001", hostname: "director-01.test" } });
  const pool = await makePool(db, "web", 3);
  await db.pool.update({ where: { id: pool.id }, data: { directors: { connect: [{ id: director.id }] } } });
  const { hashKey } = await db.pool.findUniqueOrThrow({ where: { id: pool.id }, select: { hashKey: true } });
  return {
    pool,
    hashKey: new Uint8Array(hashKey),
    read: await token(["read"]),
    operate: await token(["read", "operate"]),
    director: (await api.hostTokens.create({ hostname: "director-01.test" })).token,
  };
}

async function download(poolId: string, bearer: string, version = "1") {
  const res = await handleTableDownload({
    headers: new Headers({ authorization: `Bearer ${bearer}` }),
    poolId,
    version,
    db,
  });
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
}

describe("GLBD table download and the hash key", () => {
  it("gives read scope the file with the hash key zeroed, and says so", async () => {
    const s = await setup();
    expect(s.hashKey.some((b) => b !== 0)).toBe(true);
    const { res, bytes } = await download(s.pool.id, s.read);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-tide-hash-key")).toBe("redacted");
    expect(res.headers.get("x-tide-content-hash")).toBeNull();
    expect([...bytes.subarray(HASH_KEY_AT, HASH_KEY_AT + 16)]).toEqual(new Array(16).fill(0));
    const [table] = decodeGlbd(bytes);
    expect([...table!.hashKey]).toEqual(new Array(16).fill(0));
    // Everything else is the stored file.
    const full = (await download(s.pool.id, s.operate)).bytes;
    expect(bytes.length).toBe(full.length);
    const differing = [...bytes.keys()].filter((i) => bytes[i] !== full[i]);
    expect(differing.every((i) => i >= HASH_KEY_AT && i < HASH_KEY_AT + 16)).toBe(true);
  });

  it("gives operate scope and the pool's director agent the exact stored bytes with the key", async () => {
    const s = await setup();
    for (const bearer of [s.operate, s.director]) {
      const { res, bytes } = await download(s.pool.id, bearer);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-tide-hash-key")).toBe("included");
      expect(tableContentHash(bytes)).toBe(s.pool.currentVersion!.contentHash);
      expect(res.headers.get("x-tide-content-hash")).toBe(s.pool.currentVersion!.contentHash);
      expect([...bytes.subarray(HASH_KEY_AT, HASH_KEY_AT + 16)]).toEqual([...s.hashKey]);
      expect([...decodeGlbd(bytes)[0]!.hashKey]).toEqual([...s.hashKey]);
    }
  });

  it("refuses a version that is not a plain positive number with 400, not 500", async () => {
    const s = await setup();
    for (const version of ["1e20", "99999999999999999999", "0", "-1", "1.5", "0x1", " 1"]) {
      const { res } = await download(s.pool.id, s.operate, version);
      expect(res.status, version).toBe(400);
    }
    expect((await download(s.pool.id, s.operate, "999999999")).res.status).toBe(404);
  });
});
