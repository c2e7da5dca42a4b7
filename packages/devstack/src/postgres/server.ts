/**
 * One PostgreSQL cluster on disk and its server: layout, settings Tide owns, initdb, start, the
 * app role. Shared by the dev cluster (dev-cluster.ts) and throwaway clusters (temp-cluster.ts).
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { chownToUser, runPg, type Log, type OsUser } from "./os-user";

/** Default port of the dev cluster: not 5432, so it never collides with a system PostgreSQL. */
export const DEFAULT_PORT = 5433;
/** App role and database (the role has CREATEDB: Prisma's shadow database needs it). */
export const APP_ROLE = "tide";
export const APP_DATABASE = "tide";
export const SUPERUSER = "postgres";
/** pg_ctl's wait for start/stop, seconds. */
export const PG_CTL_TIMEOUT_S = 60;
/** Prefix of throwaway clusters in os.tmpdir(); the sweep below only ever touches these. */
export const TEMP_PREFIX = "tide-pg-";

export interface Layout {
  pgdata: string;
  socketDir: string;
  logFile: string;
}

export interface Credentials {
  superuserPassword: string;
  appPassword: string;
}

export function layoutOf(home: string): Layout {
  return {
    pgdata: path.join(home, "pgdata"),
    socketDir: path.join(home, "run"),
    logFile: path.join(home, "log", "postgres.log"),
  };
}

export const newPassword = () => randomBytes(24).toString("hex");

export function urlOf(port: number, user: string, password: string, database: string): string {
  return `postgresql://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
}

/**
 * The same database over the server's Unix socket in `socketDir` (libpq's and Prisma's `host`
 * parameter): for a client on the same machine it skips loopback TCP, whose cost the sender pays in
 * its write() (a console storing agent batches spent 8 % of its CPU there in issue 16's bench).
 */
export function socketUrlOf(
  socketDir: string,
  port: number,
  user: string,
  password: string,
  database: string,
): string {
  return `postgresql://${encodeURIComponent(user)}:${encodeURIComponent(password)}@localhost/${encodeURIComponent(database)}?host=${encodeURIComponent(socketDir)}&port=${port}`;
}

/**
 * The port of the server running on `pgdata`, or null. A postmaster.pid left by a crash (its pid
 * gone, or reused by an unrelated process) is removed so that the next start succeeds.
 */
export function runningPort(pgdata: string): number | null {
  const pidFile = path.join(pgdata, "postmaster.pid");
  let lines: string[];
  try {
    lines = fs.readFileSync(pidFile, "utf8").split("\n");
  } catch {
    return null;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  let alive = false;
  try {
    // The postmaster chdirs into its data directory: a live pid whose cwd is elsewhere is reuse.
    alive =
      Number.isInteger(pid) && pid > 0 && fs.realpathSync(`/proc/${pid}/cwd`) === fs.realpathSync(pgdata);
  } catch {
    alive = false;
  }
  if (alive && Number.isInteger(port)) return port;
  fs.rmSync(pidFile, { force: true });
  return null;
}

export const confQuote = (value: string) => `'${value.replaceAll("'", "''")}'`;

/** Settings Tide owns, rewritten before every start (so TIDE_PG_PORT changes take effect). */
export function writeTideConf(layout: Layout, user: OsUser, port: number, extra: Record<string, string>) {
  const settings: Record<string, string> = {
    listen_addresses: confQuote("127.0.0.1"),
    port: String(port),
    unix_socket_directories: confQuote(layout.socketDir),
    unix_socket_permissions: "0700",
    ...extra,
  };
  const file = path.join(layout.pgdata, "tide.conf");
  const body = Object.entries(settings)
    .map(([k, v]) => `${k} = ${v}`)
    .join("\n");
  fs.writeFileSync(
    file,
    `# Written by packages/devstack before each start; edits are overwritten.\n${body}\n`,
    {
      mode: 0o600,
    },
  );
  chownToUser(file, user);
}

export async function initCluster(layout: Layout, user: OsUser, credentials: Credentials, log: Log) {
  log(`initdb ${layout.pgdata}`);
  fs.rmSync(layout.pgdata, { recursive: true, force: true });
  for (const dir of [layout.pgdata, layout.socketDir, path.dirname(layout.logFile)]) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    chownToUser(dir, user);
  }
  // initdb reads the superuser password from a file the server user can read; it lives in the
  // 0700 socket directory for the few seconds initdb runs.
  const pwfile = path.join(layout.socketDir, "initdb-pwfile");
  fs.writeFileSync(pwfile, `${credentials.superuserPassword}\n`, { mode: 0o600 });
  chownToUser(pwfile, user);
  try {
    await runPg(user, "initdb", [
      "--pgdata",
      layout.pgdata,
      "--username",
      SUPERUSER,
      "--pwfile",
      pwfile,
      "--auth",
      "scram-sha-256",
      "--encoding",
      "UTF8",
      "--locale",
      "C.UTF-8",
    ]);
  } catch (e) {
    fs.rmSync(layout.pgdata, { recursive: true, force: true });
    throw e;
  } finally {
    fs.rmSync(pwfile, { force: true });
  }
  fs.appendFileSync(path.join(layout.pgdata, "postgresql.conf"), "\ninclude_if_exists = 'tide.conf'\n");
}

export function logTail(layout: Layout, lines = 20): string {
  try {
    return fs.readFileSync(layout.logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no server log)";
  }
}

export async function startServer(layout: Layout, user: OsUser) {
  try {
    await runPg(user, "pg_ctl", [
      "start",
      "--pgdata",
      layout.pgdata,
      "--log",
      layout.logFile,
      "--wait",
      "--timeout",
      String(PG_CTL_TIMEOUT_S),
    ]);
  } catch (e) {
    throw new Error(`${(e as Error).message}\n--- ${layout.logFile} (tail) ---\n${logTail(layout)}`);
  }
}

/** Creates (or re-passwords) the app role and creates its database if missing. */
export async function ensureAppRole(port: number, credentials: Credentials) {
  const client = new pg.Client({
    host: "127.0.0.1",
    port,
    user: SUPERUSER,
    password: credentials.superuserPassword,
    database: "postgres",
  });
  await client.connect();
  try {
    const role = client.escapeIdentifier(APP_ROLE);
    const password = client.escapeLiteral(credentials.appPassword);
    const exists = await client.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [APP_ROLE]);
    await client.query(
      `${exists.rowCount ? "ALTER" : "CREATE"} ROLE ${role} WITH LOGIN CREATEDB NOSUPERUSER PASSWORD ${password}`,
    );
    const db = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [APP_DATABASE]);
    if (!db.rowCount)
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(APP_DATABASE)} OWNER ${role}`);
  } finally {
    await client.end();
  }
}
