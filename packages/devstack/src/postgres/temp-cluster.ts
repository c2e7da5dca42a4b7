/** Throwaway clusters for tests: one per test run, removed on stop, at exit, or by the next run. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chownToUser, grantTraverse, serverUser, type Log } from "./os-user";
import { freePort } from "./ports";
import {
  APP_DATABASE,
  APP_ROLE,
  ensureAppRole,
  initCluster,
  newPassword,
  runningPort,
  startServer,
  SUPERUSER,
  TEMP_PREFIX,
  socketUrlOf,
  urlOf,
  writeTideConf,
  type Layout,
} from "./server";

export interface TempCluster {
  /** URL of database `tide` as role `tide` (CREATEDB, not superuser), like the dev cluster. */
  url: string;
  /** `url` over the server's Unix socket (socketUrlOf), for a client on this machine. */
  socketUrl: string;
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
        socketUrl: socketUrlOf(layout.socketDir, port, APP_ROLE, credentials.appPassword, APP_DATABASE),
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
