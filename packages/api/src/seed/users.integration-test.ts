import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
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

/** Run the seed command (`npm run -w @tide/api seed`) with `env`; resolves to its exit code and output. */
function runSeed(env: Record<string, string>): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      "npm",
      ["run", "--silent", "-w", "@tide/api", "seed"],
      { cwd: path.resolve(import.meta.dirname, "../../../.."), env: { ...process.env, ...env } },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
    );
  });
}

describe("seeded passwords meet the password policy (issue 27 item 8)", () => {
  it("ensureUser refuses a chosen password the policy refuses, and creates nobody", async () => {
    await expect(
      ensureUser(db, { email: "admin@example.com", name: "Admin", role: "admin", password: "aaaaaaaaaaaa" }),
    ).rejects.toThrow(
      "The password chosen for admin@example.com is refused: A password may not be one character or a short pattern repeated.",
    );
    expect(await db.user.count()).toBe(0);
  });

  it("the seed command refuses TIDE_ADMIN_PASSWORD=aaaaaaaaaaaa with the reason, and creates nobody", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "tide-seed-"));
    try {
      const run = await runSeed({
        DATABASE_URL: inject("databaseUrl"),
        TIDE_DATA_DIR: dataDir,
        TIDE_ADMIN_EMAIL: "weak@example.com",
        TIDE_ADMIN_PASSWORD: "aaaaaaaaaaaa",
        TIDE_SEED_DEMO: "0",
      });
      expect(run.code).toBe(1);
      expect(run.output.trim()).toBe(
        "seed failed: invalid environment for the seed:\n" +
          "  TIDE_ADMIN_PASSWORD: A password may not be one character or a short pattern repeated.",
      );
      expect(await db.user.count()).toBe(0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
