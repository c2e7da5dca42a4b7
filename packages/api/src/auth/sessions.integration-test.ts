import { createDb, type Db } from "@tide/db";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { createContext } from "../context";
import { seedDemoFleet } from "../seed/demo-fleet";
import { makeUser, truncateAll } from "../testing/fixtures";
import { SESSION_COOKIE, signIn, signOut } from "./sessions";

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

const cookieHeaders = (value: string) => new Headers({ cookie: `other=1; ${SESSION_COOKIE}=${value}` });

describe("sessions", () => {
  it("signs in with the right password only, and the cookie identifies the user until sign-out", async () => {
    const user = await makeUser(db, "operator");
    const wrong = await signIn(db, { email: user.email, password: "nope", sessionHours: 1 }).catch(
      (e: Error) => e,
    );
    expect((wrong as Error).message).toMatch(/incorrect/);
    const unknown = await signIn(db, { email: "ghost@test.local", password: "x", sessionHours: 1 }).catch(
      (e: Error) => e,
    );
    expect((unknown as Error).message).toBe((wrong as Error).message); // no user enumeration

    const session = await signIn(db, {
      email: user.email.toUpperCase(),
      password: user.password,
      sessionHours: 1,
    });
    const ctx = await createContext({ headers: cookieHeaders(session.cookieValue), db });
    expect(ctx.actor?.email).toBe(user.email);
    expect(ctx.actor?.scopes).toEqual(["read", "operate"]);
    // The cookie itself is not stored.
    const stored = await db.session.findMany({ select: { tokenHash: true } });
    expect(stored.map((s) => s.tokenHash)).not.toContain(session.cookieValue);

    await signOut(db, session.cookieValue);
    expect((await createContext({ headers: cookieHeaders(session.cookieValue), db })).actor).toBeNull();
  });

  it("rejects expired sessions", async () => {
    const user = await makeUser(db, "viewer");
    const session = await signIn(db, { email: user.email, password: user.password, sessionHours: 1 });
    await db.session.updateMany({ data: { expiresAt: new Date(Date.now() - 1000) } });
    expect((await createContext({ headers: cookieHeaders(session.cookieValue), db })).actor).toBeNull();
  });
});

describe("demo seed", () => {
  it("creates the demo fleet once and is safe to run again", async () => {
    const first = await seedDemoFleet(db);
    expect(first.sort()).toEqual(["api", "dns", "www"]);
    const versionsBefore = await db.tableVersion.count();
    expect(await seedDemoFleet(db)).toEqual([]);
    expect(await db.pool.count()).toBe(3);
    expect(await db.tableVersion.count()).toBe(versionsBefore);
    expect(await db.director.count()).toBe(2);
  });
});
