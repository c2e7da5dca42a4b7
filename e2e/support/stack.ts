/**
 * The stack e2e tests and the bench run against: a throwaway PostgreSQL cluster (migrated and
 * seeded with a known admin password) and the console's production build (`next start`) on a free
 * port. Nothing here touches the dev database or a dev console on port 3000.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort, migrateAndSeed, REPO_ROOT, startTempCluster, type TempCluster } from "@tide/devstack";

export const CONSOLE_DIR = path.join(REPO_ROOT, "apps/console");
export const ADMIN_EMAIL = "admin@tide.local";

export interface Stack {
  baseURL: string;
  email: string;
  password: string;
  /** Kills the console's process group and stops the cluster. Safe to call twice. */
  stop(): Promise<void>;
}

/** Hosts that count as "this machine" for a DATABASE_URL we would otherwise touch. */
const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "::1", "[::1]", ""]);

/** e2e owns its data: refuse to run next to a DATABASE_URL that points somewhere else. */
export function refuseRemoteDatabase(): void {
  const raw = process.env.DATABASE_URL;
  if (!raw) return;
  let host: string;
  try {
    host = new URL(raw).hostname;
  } catch {
    throw new Error("e2e: DATABASE_URL is set but is not a URL; unset it (e2e starts its own database)");
  }
  if (!LOCAL_HOSTS.has(host)) {
    throw new Error(
      `e2e: refusing to run with DATABASE_URL pointing at ${host}; e2e starts its own database. Unset DATABASE_URL.`,
    );
  }
}

/** Builds the console if there is no production build yet (the build tier normally made it). */
export function ensureConsoleBuild(log: (line: string) => void): void {
  if (fs.existsSync(path.join(CONSOLE_DIR, ".next/BUILD_ID"))) return;
  log("e2e: no console build (apps/console/.next/BUILD_ID); building it");
  const r = spawnSync("npx", ["turbo", "run", "build", "--filter=@tide/console"], {
    cwd: REPO_ROOT,
    stdio: "inherit",
  });
  if (r.status !== 0) throw new Error(`e2e: console build failed (exit ${r.status})`);
}

function killGroup(child: ChildProcess | undefined, signal: NodeJS.Signals): void {
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

async function stopServer(child: ChildProcess | undefined): Promise<void> {
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  killGroup(child, "SIGTERM");
  const timeout = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), 5000).unref());
  if ((await Promise.race([exited, timeout])) === "timeout") {
    killGroup(child, "SIGKILL");
    await exited;
  }
}

async function waitForHealth(url: string, server: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null || server.signalCode !== null) {
      throw new Error(`e2e: the console exited (${server.exitCode ?? server.signalCode}):\n${output()}`);
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`e2e: ${url} did not answer 200 within 60 s:\n${output()}`);
}

/** Starts cluster + console; on any failure cleans up what it started and rethrows. */
export async function startStack(log: (line: string) => void = console.log): Promise<Stack> {
  refuseRemoteDatabase();
  ensureConsoleBuild(log);

  let cluster: TempCluster | undefined;
  let server: ChildProcess | undefined;
  let dataDir: string | undefined;
  const stop = async () => {
    const s = server;
    const c = cluster;
    server = undefined;
    cluster = undefined;
    await stopServer(s);
    await c?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  };

  try {
    cluster = await startTempCluster();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tide-e2e-"));
    const password = `e2e-${randomBytes(12).toString("hex")}`;
    await migrateAndSeed(cluster.url, {
      dataDir,
      env: { TIDE_ADMIN_EMAIL: ADMIN_EMAIL, TIDE_ADMIN_PASSWORD: password, TIDE_SEED_DEMO: "1" },
      quiet: true,
    });

    const port = await freePort();
    const baseURL = `http://127.0.0.1:${port}`;
    let output = "";
    const next = path.join(REPO_ROOT, "node_modules/.bin/next");
    server = spawn(next, ["start", "-p", String(port), "-H", "127.0.0.1"], {
      cwd: CONSOLE_DIR,
      env: {
        ...process.env,
        NODE_ENV: "production",
        PORT: String(port),
        DATABASE_URL: cluster.url,
        NEXT_TELEMETRY_DISABLED: "1",
      },
      detached: true, // own process group: stop() kills next and its children together
      stdio: ["ignore", "pipe", "pipe"],
    });
    const keep = (d: Buffer) => {
      output = (output + d.toString()).slice(-8000);
    };
    server.stdout?.on("data", keep);
    server.stderr?.on("data", keep);
    await waitForHealth(`${baseURL}/api/health`, server, () => output);
    log(`e2e: console ${baseURL} (pid ${server.pid}), database on port ${cluster.port}`);
    return { baseURL, email: ADMIN_EMAIL, password, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
