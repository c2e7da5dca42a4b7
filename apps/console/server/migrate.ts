/**
 * `tide-console migrate`: brings the database forward to this release's migrations, never resets
 * it. A small runner instead of the Prisma CLI in the release tree (the CLI with the config loader
 * and Wasm schema engine it needs offline is ~60 MB, the tree's largest part by far). It records
 * each migration in Prisma's own _prisma_migrations table exactly as `prisma migrate deploy` does
 * (same table, checksums, row updates, advisory lock), so either tool can take over from the other
 * and `prisma migrate status` agrees: migrate.integration-test.ts compares the two on real
 * PostgreSQL. The rules are in migrations.ts.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import {
  failedMigration,
  planMigrations,
  readMigrations,
  scriptStatements,
  type AppliedMigration,
} from "./migrations";

/** Prisma's migration lock (pg_advisory_lock key of its schema engine): one migrator at a time, theirs or ours. */
export const PRISMA_ADVISORY_LOCK = 72707369;

/** The table as Prisma's schema engine creates it (PostgreSQL connector), column for column. */
const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS _prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
)`;

export interface MigrateResult {
  applied: string[];
  /** Warnings for the operator (changed or unknown migrations); nothing was refused for them. */
  warnings: string[];
}

export class MigrationError extends Error {
  override name = "MigrationError";
}

/** Applies the pending migrations of `migrationsDir` to the database at `url`. */
export async function migrateDatabase(
  url: string,
  migrationsDir: string,
  log: (line: string) => void = () => {},
): Promise<MigrateResult> {
  const local = readMigrations(migrationsDir);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`SELECT pg_advisory_lock(${PRISMA_ADVISORY_LOCK})`);
    try {
      await client.query(CREATE_MIGRATIONS_TABLE);
      const applied = (
        await client.query<{
          migration_name: string;
          checksum: string;
          finished_at: Date | null;
          rolled_back_at: Date | null;
        }>(
          "SELECT migration_name, checksum, finished_at, rolled_back_at FROM _prisma_migrations ORDER BY started_at",
        )
      ).rows.map((r): AppliedMigration => ({
        migrationName: r.migration_name,
        checksum: r.checksum,
        finishedAt: r.finished_at,
        rolledBackAt: r.rolled_back_at,
      }));
      const failed = failedMigration(applied);
      if (failed) {
        throw new MigrationError(
          `migration ${failed} failed before and blocks the others (its error is in _prisma_migrations.logs). ` +
            `Repair what it left half done, then mark it rolled back: UPDATE _prisma_migrations SET rolled_back_at = now() ` +
            `WHERE migration_name = '${failed}' AND finished_at IS NULL; and run tide-console migrate again ` +
            `(as prisma migrate resolve --rolled-back ${failed} would).`,
        );
      }
      const plan = planMigrations(local, applied);
      const warnings = [
        ...plan.modified.map((m) => `migration ${m} was applied but its migration.sql has changed since`),
        ...plan.unknown.map(
          (m) => `the database has migration ${m}, which this release does not know (a newer Tide?)`,
        ),
      ];
      for (const m of plan.pending) {
        log(`applying ${m.name}`);
        const id = randomUUID();
        await client.query(
          "INSERT INTO _prisma_migrations (id, checksum, started_at, migration_name, applied_steps_count) VALUES ($1, $2, now(), $3, 0)",
          [id, m.checksum, m.name],
        );
        try {
          for (const statement of scriptStatements(m.script)) await client.query(statement);
        } catch (e) {
          const message = e instanceof Error ? e.message : String(e);
          await client.query("UPDATE _prisma_migrations SET logs = $1 WHERE id = $2", [message, id]);
          throw new MigrationError(`migration ${m.name} failed: ${message}`);
        }
        await client.query(
          "UPDATE _prisma_migrations SET applied_steps_count = applied_steps_count + 1 WHERE id = $1",
          [id],
        );
        await client.query("UPDATE _prisma_migrations SET finished_at = now() WHERE id = $1", [id]);
      }
      return { applied: plan.pending.map((m) => m.name), warnings };
    } finally {
      await client.query(`SELECT pg_advisory_unlock(${PRISMA_ADVISORY_LOCK})`);
    }
  } finally {
    await client.end();
  }
}
