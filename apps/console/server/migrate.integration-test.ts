/**
 * tide-console migrate against `prisma migrate deploy`, on real PostgreSQL: a database migrated by
 * either is the same database (schema dump and _prisma_migrations), `prisma migrate status` agrees
 * with ours, either takes over from the other, re-running changes nothing, and a failed migration
 * is recorded and blocks the next run as Prisma's does.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { migrate as prismaMigrateDeploy, REPO_ROOT } from "@tide/devstack";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { migrateDatabase, MigrationError } from "./migrate";

declare module "vitest" {
  /** From packages/devstack's integration global setup: a fresh, migrated database. */
  interface ProvidedContext {
    databaseUrl: string;
  }
}

const run = promisify(execFile);
const MIGRATIONS = path.join(REPO_ROOT, "prisma/migrations");
const PG_DUMP = path.join(process.env.TIDE_PG_BIN_DIR ?? "/usr/lib/postgresql/15/bin", "pg_dump");
const PRISMA_SH = path.join(REPO_ROOT, "packages/db/scripts/prisma.sh");

const baseUrl = inject("databaseUrl");
const suffix = `${process.pid}_${Date.now()}`;
const created: string[] = [];

function urlOf(database: string): string {
  const u = new URL(baseUrl);
  u.pathname = `/${database}`;
  return u.toString();
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: baseUrl });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function freshDatabase(tag: string): Promise<string> {
  const name = `tide_mig_${tag}_${suffix}`;
  await admin((c) => c.query(`CREATE DATABASE ${c.escapeIdentifier(name)}`));
  created.push(name);
  return urlOf(name);
}

/** The schema as pg_dump prints it, minus the lines that differ between any two dumps. */
async function schemaDump(url: string): Promise<string> {
  const { stdout } = await run(PG_DUMP, ["--schema-only", "--no-owner", "--no-privileges", url], {
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout
    .split("\n")
    .filter((l) => !/^\\(un)?restrict |^-- Dumped (from|by) /.test(l))
    .join("\n");
}

interface MigrationRow {
  id: string;
  migration_name: string;
  checksum: string;
  logs: string | null;
  applied_steps_count: number;
  started_at: Date;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

async function migrationRows(url: string): Promise<MigrationRow[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (
      await c.query<MigrationRow>("SELECT * FROM _prisma_migrations ORDER BY migration_name, started_at")
    ).rows;
  } finally {
    await c.end();
  }
}

/** What `prisma migrate deploy` decides from: the same for two databases in the same state. */
const ledger = (rows: MigrationRow[]) =>
  rows.map((r) => ({
    name: r.migration_name,
    checksum: r.checksum,
    logs: r.logs,
    steps: r.applied_steps_count,
    finished: r.finished_at !== null,
    rolledBack: r.rolled_back_at !== null,
  }));

/** prisma/migrations with only its first `count` migrations (and the lock file), plus `extra`. */
function migrationsDir(count: number, extra: Record<string, string> = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tide-migrations-"));
  fs.copyFileSync(path.join(MIGRATIONS, "migration_lock.toml"), path.join(dir, "migration_lock.toml"));
  const names = fs
    .readdirSync(MIGRATIONS, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()
    .slice(0, count);
  for (const name of names) fs.cpSync(path.join(MIGRATIONS, name), path.join(dir, name), { recursive: true });
  for (const [name, sql] of Object.entries(extra)) {
    fs.mkdirSync(path.join(dir, name));
    fs.writeFileSync(path.join(dir, name, "migration.sql"), sql);
  }
  return dir;
}

const migrationCount = fs
  .readdirSync(MIGRATIONS, { withFileTypes: true })
  .filter((d) => d.isDirectory()).length;

let prismaUrl: string;
let prismaDump: string;
let prismaLedger: ReturnType<typeof ledger>;

beforeAll(async () => {
  prismaUrl = await freshDatabase("prisma");
  await prismaMigrateDeploy(prismaUrl, { quiet: true });
  prismaDump = await schemaDump(prismaUrl);
  prismaLedger = ledger(await migrationRows(prismaUrl));
}, 120_000);

afterAll(async () => {
  await admin(async (c) => {
    for (const name of created)
      await c.query(`DROP DATABASE IF EXISTS ${c.escapeIdentifier(name)} WITH (FORCE)`);
  });
});

describe("tide-console migrate", () => {
  it("makes the database prisma migrate deploy makes, and prisma migrate status agrees", async () => {
    expect(migrationCount).toBeGreaterThan(5);
    const url = await freshDatabase("ours");
    const result = await migrateDatabase(url, MIGRATIONS);
    expect(result.applied).toHaveLength(migrationCount);
    expect(result.warnings).toEqual([]);

    expect(await schemaDump(url)).toBe(prismaDump);
    expect(ledger(await migrationRows(url))).toEqual(prismaLedger);
    const status = await run("bash", [PRISMA_SH, "migrate", "status"], {
      cwd: REPO_ROOT,
      env: { ...process.env, DATABASE_URL: url },
    });
    expect(status.stdout).toContain("Database schema is up to date!");
  }, 120_000);

  it("changes nothing when run again", async () => {
    const url = await freshDatabase("rerun");
    await migrateDatabase(url, MIGRATIONS);
    const dump = await schemaDump(url);
    const rows = await migrationRows(url);

    const again = await migrateDatabase(url, MIGRATIONS);
    expect(again.applied).toEqual([]);
    expect(await schemaDump(url)).toBe(dump);
    // Every column, ids and timestamps included.
    expect(await migrationRows(url)).toEqual(rows);
  }, 60_000);

  it("brings an older database forward, and Prisma takes over from it as well", async () => {
    const older = migrationsDir(5);
    try {
      const ours = await freshDatabase("forward");
      expect((await migrateDatabase(ours, older)).applied).toHaveLength(5);
      expect((await migrateDatabase(ours, MIGRATIONS)).applied).toHaveLength(migrationCount - 5);
      expect(await schemaDump(ours)).toBe(prismaDump);
      expect(ledger(await migrationRows(ours))).toEqual(prismaLedger);

      const handedOver = await freshDatabase("handover");
      await migrateDatabase(handedOver, older);
      await prismaMigrateDeploy(handedOver, { quiet: true });
      expect(await schemaDump(handedOver)).toBe(prismaDump);
      expect(ledger(await migrationRows(handedOver))).toEqual(prismaLedger);
    } finally {
      fs.rmSync(older, { recursive: true, force: true });
    }
  }, 120_000);

  it("records a failed migration and refuses to go on until it is resolved", async () => {
    const broken = "99990101000000_broken";
    const dir = migrationsDir(migrationCount, {
      [broken]: 'CREATE TABLE "half_done" ("id" TEXT);\nALTER TABLE "no_such_table" ADD COLUMN "x" TEXT;\n',
    });
    try {
      const url = await freshDatabase("failed");
      await expect(migrateDatabase(url, dir)).rejects.toThrow(MigrationError);
      const row = (await migrationRows(url)).find((r) => r.migration_name === broken);
      expect(row).toMatchObject({ finished_at: null, rolled_back_at: null, applied_steps_count: 0 });
      expect(row?.logs).toContain("no_such_table");

      await expect(migrateDatabase(url, dir)).rejects.toThrow(
        /migration 99990101000000_broken failed before/,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
