/**
 * Database schema and seed data through the project's own scripts: migrations with
 * packages/db/scripts/prisma.sh (Wasm schema engine, offline), the seed with its workspace script.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "./repo-root";

const PRISMA_SH = path.join(REPO_ROOT, "packages/db/scripts/prisma.sh");

/**
 * Runs a command from the repo root; rejects with its exit code (and, when quiet, its output).
 * Quiet: output is captured and resolved; otherwise it goes to our stdio.
 */
function run(command: string, args: string[], env: NodeJS.ProcessEnv, quiet: boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: quiet ? ["ignore", "pipe", "pipe"] : ["ignore", "inherit", "inherit"],
    });
    let output = "";
    child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(output);
      else
        reject(
          new Error(`${command} ${args.join(" ")} exited with ${code}${output ? `:\n${output.trim()}` : ""}`),
        );
    });
  });
}

export interface MigrateOptions {
  /** Capture the tools' output and only show it on failure (tests); default: print it. */
  quiet?: boolean;
}

/**
 * Applies prisma/migrations to the database at `url` (`prisma migrate deploy`). Resolves to the
 * tool's output when quiet.
 */
export function migrate(url: string, options: MigrateOptions = {}): Promise<string> {
  return run("bash", [PRISMA_SH, "migrate", "deploy"], { DATABASE_URL: url }, options.quiet ?? false);
}

/** The workspace whose package.json has the `seed` script (@tide/db, else @tide/api). */
export function seedWorkspace(): string {
  for (const [name, dir] of [
    ["@tide/db", "packages/db"],
    ["@tide/api", "packages/api"],
  ] as const) {
    const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, dir, "package.json"), "utf8")) as {
      scripts?: Record<string, string>;
    };
    if (manifest.scripts?.seed) return name;
  }
  throw new Error('no workspace has a "seed" script (expected in packages/db/package.json)');
}

export interface SeedOptions extends MigrateOptions {
  /** Where the seed writes admin-credentials (TIDE_DATA_DIR); default the seed's own (<repo>/.tide). */
  dataDir?: string;
  /** Extra environment for the seed (e.g. TIDE_SEED_DEMO, TIDE_ADMIN_PASSWORD). */
  env?: Record<string, string>;
}

/** Runs the seed against `url`. */
export function seed(url: string, options: SeedOptions = {}): Promise<string> {
  const env: Record<string, string> = { DATABASE_URL: url, ...options.env };
  if (options.dataDir) env.TIDE_DATA_DIR = options.dataDir;
  return run("npm", ["run", "--silent", "-w", seedWorkspace(), "seed"], env, options.quiet ?? false);
}

/** Migrates the database at `url`, then seeds it (e2e and `npm run up`). */
export async function migrateAndSeed(url: string, options: SeedOptions = {}): Promise<void> {
  await migrate(url, options);
  await seed(url, options);
}

/**
 * Drift check: do prisma/migrations produce exactly prisma/schema.prisma? Resolves to true when
 * they do, false on drift (the SQL that is missing is printed). Needs a database for the shadow
 * database (the role needs CREATEDB).
 */
export async function migrationsMatchSchema(
  url: string,
  files: { schema?: string; migrations?: string } = {},
): Promise<boolean> {
  const schema = files.schema ?? path.join(REPO_ROOT, "prisma/schema.prisma");
  const migrations = files.migrations ?? path.join(REPO_ROOT, "prisma/migrations");
  const args = [
    PRISMA_SH,
    "migrate",
    "diff",
    "--from-migrations",
    migrations,
    "--to-schema-datamodel",
    schema,
  ];
  try {
    await run("bash", [...args, "--exit-code", "--script"], { DATABASE_URL: url }, false);
    return true;
  } catch (e) {
    if (/exited with 2\b/.test((e as Error).message)) return false;
    throw e;
  }
}
