/**
 * The project's own PostgreSQL: a cluster that Tide creates, starts and stops itself, with the
 * Debian PostgreSQL 15 binaries and no system service.
 *
 * Layout of a cluster home (default <repo>/.tide/postgres):
 *   credentials   root, 0600: generated passwords (superuser `postgres`, app role `tide`)
 *   pgdata/       owned by the server user, 0700 (PGDATA; `tide.conf` holds port/listen/socket)
 *   run/          owned by the server user, 0700: the Unix socket (nothing else may connect through it)
 *   log/          owned by the server user: postgres.log
 *
 * PostgreSQL refuses to run as root, so as root the server runs as the system user `tide`
 * (created if missing). The home stays root-owned with mode 0711: the server user may pass
 * through it but not list it, and cannot read `credentials`. Directories above the home that the
 * server user cannot traverse get the search bit for that user only (an ACL when `setfacl`
 * exists, else o+x); nothing else is widened. Not as root, everything runs as the current user.
 */
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";

/** Debian's PostgreSQL 15 server binaries (package postgresql-15). */
export const PG_BIN_DIR = process.env.TIDE_PG_BIN_DIR ?? "/usr/lib/postgresql/15/bin";
/** Default port of the dev cluster: not 5432, so it never collides with a system PostgreSQL. */
export const DEFAULT_PORT = 5433;
/** System user that runs the server when we are root. */
export const SERVER_USER = "tide";
/** App role and database (the role has CREATEDB: Prisma's shadow database needs it). */
export const APP_ROLE = "tide";
export const APP_DATABASE = "tide";
const SUPERUSER = "postgres";
/** pg_ctl's wait for start/stop, seconds. */
const PG_CTL_TIMEOUT_S = 60;
/** Prefix of throwaway clusters in os.tmpdir(); the sweep below only ever touches these. */
const TEMP_PREFIX = "tide-pg-";

type Log = (line: string) => void;

interface OsUser {
  name: string;
  uid: number;
  gid: number;
}

interface Layout {
  pgdata: string;
  socketDir: string;
  logFile: string;
}

interface Credentials {
  superuserPassword: string;
  appPassword: string;
}

const isRoot = () => process.getuid?.() === 0;

function layoutOf(home: string): Layout {
  return {
    pgdata: path.join(home, "pgdata"),
    socketDir: path.join(home, "run"),
    logFile: path.join(home, "log", "postgres.log"),
  };
}

const newPassword = () => randomBytes(24).toString("hex");

function urlOf(port: number, user: string, password: string, database: string): string {
  return `postgresql://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
}

// ---------------------------------------------------------------------------------------------
// Running things as the server user

function lookupUser(name: string): OsUser | null {
  const uid = spawnSync("id", ["-u", name], { encoding: "utf8" });
  const gid = spawnSync("id", ["-g", name], { encoding: "utf8" });
  if (uid.status !== 0 || gid.status !== 0) return null;
  return { name, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** The user the server runs as: `tide` (created if missing) when we are root, else ourselves. */
function serverUser(log: Log): OsUser {
  if (!isRoot()) {
    const me = os.userInfo();
    return { name: me.username, uid: me.uid, gid: me.gid };
  }
  let user = lookupUser(SERVER_USER);
  if (!user) {
    log(`creating system user ${SERVER_USER}`);
    const r = spawnSync(
      "useradd",
      [
        "--system",
        "--user-group",
        "--home-dir",
        "/nonexistent",
        "--no-create-home",
        "--shell",
        "/usr/sbin/nologin",
        SERVER_USER,
      ],
      { encoding: "utf8" },
    );
    if (r.status !== 0) throw new Error(`useradd ${SERVER_USER} failed: ${r.stderr.trim()}`);
    user = lookupUser(SERVER_USER);
    if (!user) throw new Error(`user ${SERVER_USER} still missing after useradd`);
  }
  return user;
}

/** Options that make a child run as `user` (libuv also drops root's supplementary groups). */
function asUser(user: OsUser) {
  const env = { PATH: `${PG_BIN_DIR}:/usr/bin:/bin`, LANG: "C.UTF-8", LC_ALL: "C.UTF-8", TZ: "UTC" };
  return isRoot() ? { uid: user.uid, gid: user.gid, env, cwd: "/" } : { env, cwd: "/" };
}

/** Runs a PostgreSQL binary as the server user; rejects with its output on failure. */
function runPg(user: OsUser, bin: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(PG_BIN_DIR, bin), args, {
      ...asUser(user),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(output);
      else reject(new Error(`${bin} ${args.join(" ")} exited with ${code}:\n${output.trim()}`));
    });
  });
}

function chownToUser(file: string, user: OsUser) {
  if (isRoot()) fs.chownSync(file, user.uid, user.gid);
}

/** Makes sure `user` can traverse every directory down to `dir` (see the header comment). */
function grantTraverse(dir: string, user: OsUser, log: Log) {
  if (!isRoot()) return;
  const parts = path.resolve(dir).split(path.sep).filter(Boolean);
  let current: string = path.sep;
  for (const part of ["", ...parts]) {
    current = path.join(current, part);
    const probe = spawnSync("test", ["-x", current], { uid: user.uid, gid: user.gid });
    if (probe.status === 0) continue;
    const acl = spawnSync("setfacl", ["-m", `u:${user.name}:x`, current]);
    if (acl.status !== 0) fs.chmodSync(current, fs.statSync(current).mode | 0o001);
    log(`granted ${user.name} search permission on ${current} (${acl.status === 0 ? "ACL" : "o+x"})`);
  }
}

// ---------------------------------------------------------------------------------------------
// Cluster state

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

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A TCP port on 127.0.0.1 that was free a moment ago (for throwaway servers). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        address && typeof address === "object" ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

const confQuote = (value: string) => `'${value.replaceAll("'", "''")}'`;

/** Settings Tide owns, rewritten before every start (so TIDE_PG_PORT changes take effect). */
function writeTideConf(layout: Layout, user: OsUser, port: number, extra: Record<string, string>) {
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

async function initCluster(layout: Layout, user: OsUser, credentials: Credentials, log: Log) {
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

function logTail(layout: Layout, lines = 20): string {
  try {
    return fs.readFileSync(layout.logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no server log)";
  }
}

async function startServer(layout: Layout, user: OsUser) {
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
async function ensureAppRole(port: number, credentials: Credentials) {
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

// ---------------------------------------------------------------------------------------------
// The dev cluster (npm run up / down)

function readCredentials(file: string): Credentials | null {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
  const values = new Map(
    text
      .split("\n")
      .filter((l) => l.includes("=") && !l.startsWith("#"))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)] as const),
  );
  const superuserPassword = values.get("SUPERUSER_PASSWORD");
  const appPassword = values.get("APP_PASSWORD");
  return superuserPassword && appPassword ? { superuserPassword, appPassword } : null;
}

function writeCredentials(file: string, credentials: Credentials) {
  const body = [
    "# Tide's embedded PostgreSQL (generated by packages/devstack). Keep this file mode 600.",
    `SUPERUSER=${SUPERUSER}`,
    `SUPERUSER_PASSWORD=${credentials.superuserPassword}`,
    `APP_ROLE=${APP_ROLE}`,
    `APP_DATABASE=${APP_DATABASE}`,
    `APP_PASSWORD=${credentials.appPassword}`,
    "",
  ].join("\n");
  fs.writeFileSync(file, body, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
}

export interface ClusterOptions {
  /** Cluster home; default: see defaultClusterHome(). */
  home?: string;
  /** Port to start on; default TIDE_PG_PORT or 5433. A cluster already running keeps its port. */
  port?: number;
  log?: Log;
}

export interface RunningCluster {
  /** URL of the app role's database. */
  url: string;
  port: number;
  home: string;
  /** false when the cluster was already running. */
  started: boolean;
}

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/** TIDE_PG_HOME, else <TIDE_DATA_DIR or <repo>/.tide>/postgres. */
export function defaultClusterHome(): string {
  const dataDir = process.env.TIDE_DATA_DIR ?? path.join(REPO_ROOT, ".tide");
  return path.resolve(process.env.TIDE_PG_HOME ?? path.join(dataDir, "postgres"));
}

function defaultPort(): number {
  const raw = process.env.TIDE_PG_PORT;
  const port = raw ? Number(raw) : DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(`TIDE_PG_PORT is not a port: ${raw}`);
  return port;
}

/**
 * Creates the dev cluster if needed, starts it unless it runs, ensures role and database `tide`.
 * Safe to call any number of times.
 */
export async function ensureCluster(options: ClusterOptions = {}): Promise<RunningCluster> {
  const log = options.log ?? (() => {});
  const home = path.resolve(options.home ?? defaultClusterHome());
  const layout = layoutOf(home);
  const user = serverUser(log);

  fs.mkdirSync(home, { recursive: true, mode: 0o711 });
  if (isRoot()) fs.chmodSync(home, 0o711);
  grantTraverse(home, user, log);

  const credentialsFile = path.join(home, "credentials");
  const initialized = fs.existsSync(path.join(layout.pgdata, "PG_VERSION"));
  let credentials = readCredentials(credentialsFile);
  if (initialized && !credentials) {
    throw new Error(
      `${layout.pgdata} exists but ${credentialsFile} is missing or unreadable, so nobody can log in.\n` +
        `Recreate the cluster (this deletes the dev database): npm run down && rm -rf ${home} && npm run up`,
    );
  }
  if (!initialized) {
    credentials = { superuserPassword: newPassword(), appPassword: newPassword() };
    writeCredentials(credentialsFile, credentials);
    await initCluster(layout, user, credentials, log);
  }
  if (!credentials) throw new Error("unreachable: credentials");

  let port = runningPort(layout.pgdata);
  let started = false;
  if (port !== null) {
    log(`PostgreSQL already running on 127.0.0.1:${port}`);
  } else {
    port = options.port ?? defaultPort();
    if (!(await portIsFree(port))) {
      throw new Error(
        `port ${port} on 127.0.0.1 is taken by another process; choose another with TIDE_PG_PORT=<port>`,
      );
    }
    writeTideConf(layout, user, port, {});
    log(`starting PostgreSQL on 127.0.0.1:${port} (log: ${layout.logFile})`);
    await startServer(layout, user);
    started = true;
  }
  await ensureAppRole(port, credentials);
  return { url: urlOf(port, APP_ROLE, credentials.appPassword, APP_DATABASE), port, home, started };
}

/** URL of the running dev cluster, or null if it is not running. */
export function clusterUrl(options: { home?: string } = {}): string | null {
  const home = path.resolve(options.home ?? defaultClusterHome());
  const port = runningPort(layoutOf(home).pgdata);
  const credentials = readCredentials(path.join(home, "credentials"));
  return port !== null && credentials ? urlOf(port, APP_ROLE, credentials.appPassword, APP_DATABASE) : null;
}

/** Stops the dev cluster (fast shutdown: sessions are disconnected, data is kept). */
export async function stopCluster(options: { home?: string; log?: Log } = {}): Promise<boolean> {
  const log = options.log ?? (() => {});
  const layout = layoutOf(path.resolve(options.home ?? defaultClusterHome()));
  if (runningPort(layout.pgdata) === null) return false;
  const user = serverUser(log);
  await runPg(user, "pg_ctl", [
    "stop",
    "--pgdata",
    layout.pgdata,
    "--mode",
    "fast",
    "--wait",
    "--timeout",
    String(PG_CTL_TIMEOUT_S),
  ]);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Throwaway clusters for tests

export interface TempCluster {
  /** URL of database `tide` as role `tide` (CREATEDB, not superuser), like the dev cluster. */
  url: string;
  /** Superuser URL of database `postgres`. */
  superuserUrl: string;
  port: number;
  dir: string;
  /** Stops the server and deletes every file of the cluster. */
  stop(): Promise<void>;
}

/** Stops the server of a temp cluster and removes its directory, synchronously (for exit hooks). */
function destroySync(dir: string) {
  const pgdata = path.join(dir, "pgdata");
  const pidLine = (() => {
    try {
      return fs.readFileSync(path.join(pgdata, "postmaster.pid"), "utf8").split("\n")[0];
    } catch {
      return undefined;
    }
  })();
  const pid = Number(pidLine);
  if (pid > 0 && runningPort(pgdata) !== null) {
    try {
      process.kill(pid, "SIGQUIT"); // immediate shutdown: the data is thrown away anyway
    } catch {
      // already gone
    }
    // The postmaster removes postmaster.pid as it exits (about a second); wait up to 10 s.
    const tick = new Int32Array(new SharedArrayBuffer(4));
    for (let i = 0; i < 500 && fs.existsSync(path.join(pgdata, "postmaster.pid")); i++)
      Atomics.wait(tick, 0, 0, 20);
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

const processAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** Removes temp clusters whose owning process died without cleaning up (kill -9, OOM). */
function sweepOrphans(log: Log) {
  const tmp = os.tmpdir();
  for (const name of fs.readdirSync(tmp)) {
    if (!name.startsWith(TEMP_PREFIX)) continue;
    const dir = path.join(tmp, name);
    let owner: number;
    try {
      owner = Number(fs.readFileSync(path.join(dir, "owner.pid"), "utf8").trim());
    } catch {
      // No owner.pid yet: another process may be creating this very cluster; judge it by age.
      const ageMs = Date.now() - fs.statSync(dir).mtimeMs;
      if (ageMs < 60_000) continue;
      owner = 0;
    }
    if (owner > 0 && processAlive(owner)) continue;
    log(`removing orphaned temp cluster ${dir}`);
    destroySync(dir);
  }
}

const liveTempClusters = new Set<string>();
let exitHookInstalled = false;

function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  const cleanup = () => {
    for (const dir of liveTempClusters) destroySync(dir);
    liveTempClusters.clear();
  };
  process.once("exit", cleanup);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      cleanup();
      // Nobody else handles the signal: restore the default behaviour (terminate).
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  }
}

/**
 * Starts a throwaway cluster in a fresh temp directory on a free port (role/database `tide` as in
 * the dev cluster, durability off for speed). Everything is removed on stop() and at process exit.
 */
export async function startTempCluster(options: { log?: Log } = {}): Promise<TempCluster> {
  const log = options.log ?? (() => {});
  sweepOrphans(log);
  const user = serverUser(log);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), TEMP_PREFIX));
  liveTempClusters.add(dir);
  installExitHook();
  const stop = async () => {
    destroySync(dir);
    liveTempClusters.delete(dir);
  };
  try {
    fs.writeFileSync(path.join(dir, "owner.pid"), `${process.pid}\n`);
    chownToUser(dir, user);
    grantTraverse(dir, user, log);
    const layout: Layout = {
      pgdata: path.join(dir, "pgdata"),
      socketDir: dir,
      logFile: path.join(dir, "log", "postgres.log"),
    };
    const credentials = { superuserPassword: newPassword(), appPassword: newPassword() };
    await initCluster(layout, user, credentials, log);
    const fastButUnsafe = { fsync: "off", synchronous_commit: "off", full_page_writes: "off" };
    // A free port can be taken between probing and binding; try a few.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      writeTideConf(layout, user, port, fastButUnsafe);
      try {
        await startServer(layout, user);
      } catch (e) {
        if (attempt >= 3) throw e;
        continue;
      }
      await ensureAppRole(port, credentials);
      return {
        url: urlOf(port, APP_ROLE, credentials.appPassword, APP_DATABASE),
        superuserUrl: urlOf(port, SUPERUSER, credentials.superuserPassword, "postgres"),
        port,
        dir,
        stop,
      };
    }
  } catch (e) {
    await stop();
    throw e;
  }
}
