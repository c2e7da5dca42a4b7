import { createDb, type Db } from "@tide/db";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { hashPassword } from "../auth/secrets";
import { signIn } from "../auth/sessions";
import { truncateAll } from "../testing/fixtures";
import { ensureUser } from "./users";

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

const PASSWORD = "violet-kettle-harbour";

describe("seeded users and email case", () => {
  it("a seeded admin whose email has capitals signs in with any case", async () => {
    const admin = await ensureUser(db, {
      email: " Admin@Example.COM ",
      name: "Administrator",
      role: "admin",
      password: PASSWORD,
    });
    expect(admin.created).toBe(true);
    for (const email of ["Admin@Example.COM", "admin@example.com", " ADMIN@EXAMPLE.COM"]) {
      const session = await signIn(db, { email, password: PASSWORD, sessionHours: 1 });
      expect(session.user.email).toBe("admin@example.com");
    }
    // Seeding again with another case finds the same user.
    expect(await ensureUser(db, { email: "ADMIN@example.com", name: "x", role: "admin" })).toEqual({
      id: admin.id,
      created: false,
      password: null,
    });
    expect(await db.user.count()).toBe(1);
  });

  it("repairs an admin an older seed stored with capitals, so they can sign in", async () => {
    await db.user.create({
      data: {
        id: "user_legacy",
        email: "Ops.Lead@Example.com",
        name: "Ops",
        role: "admin",
        passwordHash: await hashPassword(PASSWORD),
      },
    });
    const again = await ensureUser(db, { email: "Ops.Lead@Example.com", name: "Ops", role: "admin" });
    expect(again).toEqual({ id: "user_legacy", created: false, password: null });
    const session = await signIn(db, { email: "Ops.Lead@Example.com", password: PASSWORD, sessionHours: 1 });
    expect(session.user.id).toBe("user_legacy");
  });
});
