import { TideError } from "@tide/contracts";
import { createDb, type Db } from "@tide/db";
import { MAX_BACKENDS } from "@tide/forwarding";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { systemActorRef } from "../../auth/actor";
import { makePool, makeUser, truncateAll } from "../../testing/fixtures";
import { createProxy } from "../transitions/proxy-lifecycle.service";
import { createPool } from "./pool.service";

/**
 * The services' own checks of pool names, proxy addresses and the proxy limit: the contract's
 * schemas (PoolName, GLBD's MAX_BACKENDS) are what the API checks first, and these services check
 * the same facts again for callers that skip the API (seed, lab, tests). Each refusal changes
 * nothing.
 */
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

async function refusal(p: Promise<unknown>): Promise<TideError> {
  const e = await p.then(
    () => null,
    (error: unknown) => error,
  );
  expect(e).toBeInstanceOf(TideError);
  return e as TideError;
}

describe("pool and proxy limits in the services", () => {
  it("refuses a pool name the contract's PoolName refuses, and stores no pool", async () => {
    for (const name of ["Web", "-web", "web_1", "a".repeat(64), ""]) {
      const e = await refusal(
        createPool(db, systemActorRef("test"), {
          name,
          binds: [{ address: "203.0.113.10", proto: "tcp", portStart: 443 }],
        }),
      );
      expect(e.code).toBe("bad_request");
      expect(Object.keys(e.details?.fields ?? {})).toEqual(["name"]);
    }
    expect(await db.pool.count()).toBe(0);
    // The longest name the pattern allows is taken.
    await createPool(db, systemActorRef("test"), {
      name: "a".repeat(63),
      binds: [{ address: "203.0.113.10", proto: "tcp", portStart: 443 }],
    });
    expect(await db.pool.count()).toBe(1);
  });

  it(`refuses more than ${MAX_BACKENDS} initial proxies`, async () => {
    const proxies = Array.from({ length: MAX_BACKENDS + 1 }, (_, i) => ({
      address: `10.${40 + (i >> 8)}.${i & 255}.1`,
      hostname: `p${i}`,
    }));
    const e = await refusal(
      createPool(db, systemActorRef("test"), {
        name: "big",
        binds: [{ address: "203.0.113.10", proto: "tcp", portStart: 443 }],
        proxies,
      }),
    );
    expect(e.code).toBe("unprocessable");
    expect(e.message).toContain(`at most ${MAX_BACKENDS} proxies`);
    expect(await db.pool.count()).toBe(0);
  });

  it("adds a proxy only at an IPv4 address in dotted-quad form", async () => {
    const admin = await makeUser(db, "admin");
    const pool = await makePool(db, "web", 2);
    for (const address of ["2001:db8::1", "10.0.0.256", "01.2.3.4", "10.0.0", "10.0.0.1.2", "host"]) {
      const e = await refusal(createProxy(db, admin, { poolId: pool.id, address, hostname: "p3" }));
      expect(e.code).toBe("bad_request");
      expect(e.message).toContain(`got "${address}"`);
    }
    expect(await db.proxy.count({ where: { poolId: pool.id } })).toBe(2);
    await createProxy(db, admin, { poolId: pool.id, address: "10.0.0.255", hostname: "p3" });
    expect(await db.proxy.count({ where: { poolId: pool.id } })).toBe(3);
  });
});
