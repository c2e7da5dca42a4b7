/**
 * The stack the console benches run against: a throwaway PostgreSQL cluster, migrated and seeded,
 * and the console's production build via `next start` (like e2e/support/stack.ts, but it keeps the
 * database URL: benches count what was stored), or via `tide-console serve` (server: "serve"), the
 * production server. Used by ingest.bench.ts and hardening-load.bench.ts.
 */
import { freePort, migrateAndSeed, REPO_ROOT, startTempCluster, type TempCluster } from "@tide/devstack";
import { ADMIN_EMAIL, CONSOLE_DIR, ensureConsoleBuild, refuseRemoteDatabase } from "../support/stack";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export interface BenchStack {
  baseURL: string;
  dbUrl: string;
  password: string;
  /** The console's process id, also its process group (it is started detached): its CPU is that group's. */
  pid: number;
  /** The console's last output (stdout + stderr, up to 64 kB). */
  log(): string;
  stop(): Promise<void>;
}

export interface BenchStackOptions {
  /** Names the temp data directory (tide-bench-<name>-…) and the log lines. */
  name: string;
  /** A built copy of apps/console to run instead (TIDE_BENCH_CONSOLE_DIR); default apps/console. */
  consoleDir?: string;
  /** Extra seed environment (e.g. TIDE_SEED_DEMO). */
  seedEnv?: Record<string, string>;
  /**
   * "serve": `tide-console serve` (dist/tide-console.mjs of the console directory), as installed;
   * it passes the socket's peer address to sign-in throttling, which `next start` cannot.
   * Default "next-start".
   */
  server?: "next-start" | "serve";
  /** Extra console environment (e.g. TIDE_TRUSTED_PROXIES). */
  consoleEnv?: Record<string, string>;
}

export async function startBenchStack(o: BenchStackOptions): Promise<BenchStack> {
  refuseRemoteDatabase();
  const consoleDir = o.consoleDir ?? CONSOLE_DIR;
  if (consoleDir === CONSOLE_DIR) ensureConsoleBuild(console.log);
  let cluster: TempCluster | undefined;
  let server: ChildProcess | undefined;
  let dataDir: string | undefined;
  const stop = async () => {
    const s = server;
    server = undefined;
    if (s?.pid && s.exitCode === null && s.signalCode === null) {
      const exited = new Promise<void>((r) => s.once("exit", () => r()));
      const kill = (sig: NodeJS.Signals) => {
        try {
          process.kill(-s.pid!, sig);
        } catch {
          // gone
        }
      };
      kill("SIGTERM");
      // A console writing its CPU profile needs to exit on its own: give it longer.
      const waitMs = process.env.TIDE_BENCH_CONSOLE_CPU_PROF ? 60_000 : 5000;
      const t = new Promise<"t">((r) => setTimeout(() => r("t"), waitMs).unref());
      if ((await Promise.race([exited, t])) === "t") kill("SIGKILL");
    }
    const c = cluster;
    cluster = undefined;
    await c?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    cluster = await startTempCluster();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `tide-bench-${o.name}-`));
    const password = `bench-${randomBytes(12).toString("hex")}`;
    await migrateAndSeed(cluster.url, {
      dataDir,
      env: { TIDE_ADMIN_EMAIL: ADMIN_EMAIL, TIDE_ADMIN_PASSWORD: password, ...o.seedEnv },
      quiet: true,
    });
    const port = await freePort();
    const baseURL = `http://127.0.0.1:${port}`;
    let output = "";
    // TIDE_BENCH_CONSOLE_CPU_PROF=<dir>: the console writes a V8 CPU profile there when it stops
    // (node --cpu-prof; NODE_OPTIONS may not carry it), to see where a bench's time goes.
    const cpuProfDir = process.env.TIDE_BENCH_CONSOLE_CPU_PROF;
    const nextArgs =
      o.server === "serve"
        ? [path.join(consoleDir, "dist/tide-console.mjs"), "serve"]
        : [
            path.join(REPO_ROOT, "node_modules/next/dist/bin/next"),
            "start",
            "-p",
            String(port),
            "-H",
            "127.0.0.1",
          ];
    // TIDE_BENCH_CONSOLE_NODE_ARGS="--flag …": node options for the console alone (V8 heap sizes, GC
    // tracing), to compare runtime settings without changing the bench's own process.
    const nodeArgs = (process.env.TIDE_BENCH_CONSOLE_NODE_ARGS ?? "").split(/\s+/).filter(Boolean);
    server = spawn(
      process.execPath,
      [...nodeArgs, ...(cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${cpuProfDir}`] : []), ...nextArgs],
      {
        cwd: consoleDir,
        env: {
          ...process.env,
          NODE_ENV: "production",
          PORT: String(port),
          // As a console beside its database should connect: over the Unix socket (socketUrlOf).
          // TIDE_BENCH_PG_TCP=1 takes loopback TCP instead, to compare.
          DATABASE_URL: process.env.TIDE_BENCH_PG_TCP === "1" ? cluster.url : cluster.socketUrl,
          NEXT_TELEMETRY_DISABLED: "1",
          TIDE_CONSOLE_HOST: "127.0.0.1", // tide-console serve's address (next start takes -H)
          ...o.consoleEnv,
        },
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const keep = (d: Buffer) => {
      output = (output + d.toString()).slice(-64_000);
    };
    server.stdout?.on("data", keep);
    server.stderr?.on("data", keep);
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (server.exitCode !== null || server.signalCode !== null)
        throw new Error(`bench: the console exited:\n${output}`);
      const ok = await fetch(`${baseURL}/api/health`, { signal: AbortSignal.timeout(2000) })
        .then((r) => r.status === 200)
        .catch(() => false);
      if (ok) break;
      if (Date.now() > deadline) throw new Error(`bench: console not healthy within 60 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    console.log(
      `bench: console ${baseURL} (pid ${server.pid}), database on port ${cluster.port}, the console connected over ${process.env.TIDE_BENCH_PG_TCP === "1" ? "loopback TCP" : "its Unix socket"}`,
    );
    return { baseURL, dbUrl: cluster.url, password, pid: server.pid!, log: () => output, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
