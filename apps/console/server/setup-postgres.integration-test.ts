/**
 * tide-console setup-postgres on a real PostgreSQL that authenticates its socket by peer, as
 * Debian's does: a throwaway cluster of our own whose pg_hba.conf puts `local all all peer` first
 * (its server user `tide` mapped to the superuser and to itself, standing in for Debian's postgres
 * and tide-console users). It creates the role and the database, writes DATABASE_URL over the socket
 * into the env file (0640 root:<the service's group>), migrates as the service's user, and a second
 * run changes nothing. Root only (runuser; the cluster runs as `tide`): it throws otherwise.
 * Needs the console built (`npm run build -w @tide/console`): its bundle is what runs.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT, startTempCluster, type TempCluster } from "@tide/devstack";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const BUNDLE = path.join(REPO_ROOT, "apps/console/dist/tide-console.mjs");
/** The temp cluster's server user (packages/devstack os-user.ts), here also the service's user. */
const SERVICE_USER = "tide";

let cluster: TempCluster;
let tmp: string;

beforeAll(async () => {
  if (process.getuid?.() !== 0)
    throw new Error("setup-postgres's test needs root (runuser, peer authentication)");
  if (!fs.existsSync(BUNDLE))
    throw new Error(`no ${BUNDLE}: build first with npm run build -w @tide/console`);
  cluster = await startTempCluster();
  const su = new pg.Client({ connectionString: cluster.superuserUrl });
  await su.connect();
  try {
    // Start from a cluster without Tide's role and database, as a fresh Debian postgresql is.
    await su.query("DROP DATABASE tide WITH (FORCE)");
    await su.query("DROP ROLE tide");
    const pgdata = path.join(cluster.dir, "pgdata");
    fs.writeFileSync(
      path.join(pgdata, "pg_ident.conf"),
      `debian ${SERVICE_USER} postgres\ndebian ${SERVICE_USER} ${SERVICE_USER}\n`,
    );
    const hba = fs.readFileSync(path.join(pgdata, "pg_hba.conf"), "utf8");
    fs.writeFileSync(path.join(pgdata, "pg_hba.conf"), `local all all peer map=debian\n${hba}`);
    await su.query("SELECT pg_reload_conf()");
  } finally {
    await su.end();
  }
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tide-setup-postgres-"));
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

async function setupPostgres(envFile: string) {
  const args = [BUNDLE, "setup-postgres", "--config-file", envFile, "--socket-dir", cluster.dir];
  args.push("--port", String(cluster.port), "--postgres-user", SERVICE_USER);
  // PGUSER: psql as the superuser role (Debian's postgres OS user has it by name).
  const env = {
    ...process.env,
    PGUSER: "postgres",
    TIDE_CONSOLE_USER: SERVICE_USER,
    TIDE_CONSOLE_ENV_FILE: "",
  };
  return run(process.execPath, args, { env, cwd: "/" });
}

describe("tide-console setup-postgres", () => {
  it("creates the role and database, writes DATABASE_URL, migrates; a second run changes nothing", async () => {
    const envFile = path.join(tmp, "etc-tide/console.env");
    const first = await setupPostgres(envFile);
    expect(first.stderr).toContain(`role ${SERVICE_USER} created`);
    expect(first.stderr).toContain("database tide created");

    const content = fs.readFileSync(envFile, "utf8");
    const url = /^DATABASE_URL=(.*)$/m.exec(content)?.[1];
    expect(url).toBe(`postgresql://${SERVICE_USER}@localhost/tide?host=${cluster.dir}&port=${cluster.port}`);
    const stat = fs.statSync(envFile);
    expect(stat.mode & 0o777).toBe(0o640);
    expect([stat.uid, stat.gid]).toEqual([0, Number((await run("id", ["-g", SERVICE_USER])).stdout.trim())]);

    // Migrated by the service's user over the socket, with no password.
    const migrated = await run("runuser", [
      "-u",
      SERVICE_USER,
      "--",
      "psql",
      "-XAt",
      "-d",
      url ?? "",
      "-c",
      "SELECT count(*) FROM _prisma_migrations WHERE finished_at IS NOT NULL",
    ]);
    const migrations = fs.readdirSync(path.join(REPO_ROOT, "prisma/migrations"), { withFileTypes: true });
    expect(Number(migrated.stdout.trim())).toBe(migrations.filter((d) => d.isDirectory()).length);

    const second = await setupPostgres(envFile);
    expect(second.stderr).toContain(`role ${SERVICE_USER} exists`);
    expect(second.stderr).toContain("database tide exists");
    expect(second.stderr).toContain("already has this DATABASE_URL");
    expect(fs.readFileSync(envFile, "utf8")).toBe(content);
  }, 120_000);

  it("never overwrites a DATABASE_URL that points elsewhere (exit 2)", async () => {
    const envFile = path.join(tmp, "other.env");
    fs.writeFileSync(envFile, "DATABASE_URL=postgresql://db.example.net/tide\n");
    await expect(setupPostgres(envFile)).rejects.toMatchObject({ code: 2 });
    expect(fs.readFileSync(envFile, "utf8")).toBe("DATABASE_URL=postgresql://db.example.net/tide\n");
  }, 60_000);
});
