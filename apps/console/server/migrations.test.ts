import path from "node:path";
import { REPO_ROOT } from "@tide/devstack";
import { describe, expect, it } from "vitest";
import {
  checksumOf,
  failedMigration,
  planMigrations,
  readMigrations,
  scriptStatements,
  type AppliedMigration,
  type LocalMigration,
} from "./migrations";

const local = (name: string, script = `-- ${name}\nSELECT 1;`): LocalMigration => ({
  name,
  script,
  checksum: checksumOf(script),
});
const applied = (m: LocalMigration, over: Partial<AppliedMigration> = {}): AppliedMigration => ({
  migrationName: m.name,
  checksum: m.checksum,
  finishedAt: new Date(0),
  rolledBackAt: null,
  ...over,
});

describe("migrations as prisma migrate deploy sees them", () => {
  it("checksums migration.sql as Prisma stored it (SHA-256 of the bytes, hex)", () => {
    const init = readMigrations(path.join(REPO_ROOT, "prisma/migrations"))[0];
    expect(init?.name).toBe("20261122052831_init");
    // The checksum prisma migrate deploy wrote into _prisma_migrations for this file.
    expect(init?.checksum).toBe("947dbb7926fff31494cdb7676bf744c1e75ae18a90b90b74c7c87393f4f6eac4");
  });

  it("applies what is missing, in name order, and re-applies a rolled-back one", () => {
    const [a, b, c] = [local("20260101000000_a"), local("20260102000000_b"), local("20260103000000_c")];
    const plan = planMigrations([a, b, c], [applied(a), applied(b, { rolledBackAt: new Date(1) })]);
    expect(plan.pending.map((m) => m.name)).toEqual([b.name, c.name]);
    expect(plan.modified).toEqual([]);
    expect(plan.unknown).toEqual([]);
  });

  it("warns of a changed file and of a migration only the database knows", () => {
    const a = local("20260101000000_a");
    const plan = planMigrations(
      [a],
      [applied(a, { checksum: "0".repeat(64) }), applied(local("20270101000000_newer"))],
    );
    expect(plan.pending).toEqual([]);
    expect(plan.modified).toEqual([a.name]);
    expect(plan.unknown).toEqual(["20270101000000_newer"]);
  });

  it("finds a migration that failed (neither finished nor rolled back)", () => {
    const a = local("20260101000000_a");
    expect(failedMigration([applied(a)])).toBeNull();
    expect(failedMigration([applied(a, { finishedAt: null })])).toBe(a.name);
    expect(failedMigration([applied(a, { finishedAt: null, rolledBackAt: new Date(1) })])).toBeNull();
  });

  it("splits a script at every semicolon, as @prisma/adapter-pg's executeScript does", () => {
    expect(scriptStatements("CREATE TABLE a (x int);\n\n  ALTER TABLE a ADD y int ;\n;\n")).toEqual([
      "CREATE TABLE a (x int)",
      "ALTER TABLE a ADD y int",
    ]);
    // Why prisma/migrations write semicolons inside function bodies as \073.
    expect(scriptStatements("AS $$ BEGIN PERFORM 1; END $$;")).toHaveLength(2);
  });
});
