/**
 * The migrations on disk and what `prisma migrate deploy` (Prisma 6.19) would do with them, as pure
 * functions: migrate.ts applies the plan. Kept to Prisma's own rules so the two are interchangeable
 * on one database and `prisma migrate status` agrees with us:
 *  - a migration is a directory of prisma/migrations holding migration.sql, applied in name order;
 *  - its checksum is the SHA-256 of migration.sql's bytes, lower-case hex (what Prisma stores);
 *  - one applied unless a row of _prisma_migrations names it and was not rolled back;
 *  - a row neither finished nor rolled back is a failed migration: nothing more is applied (P3009);
 *  - the script runs as Prisma's Wasm engine runs it through @prisma/adapter-pg (executeScript):
 *    split at every semicolon, each trimmed non-empty piece one statement, in autocommit. This is
 *    why prisma/migrations write semicolons inside function bodies as \073; a migration the dev
 *    stack applied with Prisma applies here statement for statement the same way.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

export interface LocalMigration {
  name: string;
  script: string;
  checksum: string;
}

/** A row of _prisma_migrations, the columns the plan reads. */
export interface AppliedMigration {
  migrationName: string;
  checksum: string;
  finishedAt: Date | null;
  rolledBackAt: Date | null;
}

export interface MigrationPlan {
  /** To apply, in order. */
  pending: LocalMigration[];
  /** Applied, but migration.sql changed since (Prisma's deploy ignores this too; we warn). */
  modified: string[];
  /** In the database but not on disk: the database was migrated by a newer Tide. */
  unknown: string[];
}

/** The provider migration_lock.toml must name (Prisma refuses a directory made for another). */
export const MIGRATION_PROVIDER = "postgresql";

export const checksumOf = (script: string | Buffer): string =>
  createHash("sha256").update(script).digest("hex");

/** The migrations in `dir`, in the order Prisma applies them. */
export function readMigrations(dir: string): LocalMigration[] {
  const lock = path.join(dir, "migration_lock.toml");
  const provider = /^\s*provider\s*=\s*"([^"]*)"/m.exec(fs.readFileSync(lock, "utf8"))?.[1];
  if (provider !== MIGRATION_PROVIDER) {
    throw new Error(`${lock} names provider ${provider ?? "(none)"}, not ${MIGRATION_PROVIDER}`);
  }
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const file = path.join(dir, name, "migration.sql");
      if (!fs.existsSync(file)) throw new Error(`migration ${name} has no migration.sql (${file})`);
      const bytes = fs.readFileSync(file);
      return { name, script: bytes.toString("utf8"), checksum: checksumOf(bytes) };
    });
}

/** A failed migration blocks every later one until an operator resolves it, as in Prisma. */
export function failedMigration(applied: AppliedMigration[]): string | null {
  return applied.find((m) => m.finishedAt === null && m.rolledBackAt === null)?.migrationName ?? null;
}

export function planMigrations(local: LocalMigration[], applied: AppliedMigration[]): MigrationPlan {
  const live = applied.filter((m) => m.rolledBackAt === null);
  const liveNames = new Set(live.map((m) => m.migrationName));
  const localNames = new Set(local.map((m) => m.name));
  return {
    pending: local.filter((m) => !liveNames.has(m.name)),
    modified: local
      .filter((m) => live.some((a) => a.migrationName === m.name && a.checksum !== m.checksum))
      .map((m) => m.name),
    unknown: [...new Set(live.map((m) => m.migrationName).filter((n) => !localNames.has(n)))],
  };
}

/** The statements of a script as @prisma/adapter-pg 6.19's executeScript runs them. */
export function scriptStatements(script: string): string[] {
  return script
    .split(";")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
