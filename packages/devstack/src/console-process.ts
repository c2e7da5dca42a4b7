/**
 * Test support: the real console (`tide-console serve`, the production server of the Debian
 * package, on apps/console's build) against a given database,
 * and packages/api's test fixtures. Shared by the agent's console-link integration tests, the lab's
 * console fleet and the system tests (packages/system-tests).
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import type { Db } from "@tide/db";
import { REPO_ROOT } from "./repo-root";
import { waitFor } from "./wait";

export const CONSOLE_DIR = path.join(REPO_ROOT, "apps/console");

/**
 * packages/api's test fixtures, imported at run time (loadApiFixtures): a static import would pull
 * the console's Next.js global types (NODE_ENV required in ProcessEnv) into the agent's type check.
 */
export interface ApiFixtures {
  truncateAll(db: Db): Promise<void>;
  makeUser(db: Db, role: "admin"): Promise<{ scopes: readonly string[] }>;
  callerFor(
    db: Db,
    actor: unknown,
  ): {
    hostTokens: { create(input: { hostname: string }): Promise<{ token: string }> };
    tokens: { create(input: { name: string; scopes: string[] }): Promise<{ token: string }> };
  };
}
const FIXTURES = path.join(REPO_ROOT, "packages/api/src/testing/fixtures.ts");

export async function loadApiFixtures(): Promise<ApiFixtures> {
  return (await import(FIXTURES)) as ApiFixtures;
}

export interface ConsoleProcess {
  child: ChildProcess;
  /** The last 8,000 characters the console printed (for failure messages). */
  output: () => string;
}

/**
 * `tide-console serve` (apps/console/dist/tide-console.mjs; `next start` does not serve standalone
 * output) in its own process group, like e2e's stack; resolves once /api/health says 200.
 */
export async function startConsole(port: number, databaseUrl: string): Promise<ConsoleProcess> {
  let output = "";
  const child = spawn(process.execPath, [path.join(CONSOLE_DIR, "dist/tide-console.mjs"), "serve"], {
    cwd: CONSOLE_DIR,
    env: {
      ...process.env,
      NODE_ENV: "production",
      PORT: String(port),
      TIDE_CONSOLE_HOST: "127.0.0.1",
      DATABASE_URL: databaseUrl,
      NEXT_TELEMETRY_DISABLED: "1",
    },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-8000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const handle = { child, output: () => output };
  try {
    await waitFor(
      "the console's /api/health to answer 200",
      async () => {
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`console exited:\n${output}`);
        try {
          const res = await fetch(`http://127.0.0.1:${port}/api/health`, {
            signal: AbortSignal.timeout(2000),
          });
          return res.status === 200;
        } catch {
          return false; // not listening yet
        }
      },
      { timeoutMs: 60_000, intervalMs: 200, detail: () => `console output:\n${output}` },
    );
    return handle;
  } catch (error) {
    await stopConsole(handle);
    throw error;
  }
}

/** SIGTERM to the console's process group, SIGKILL after 5 s. */
export async function stopConsole(c: ConsoleProcess | undefined): Promise<void> {
  const child = c?.child;
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  const pid = child.pid;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    process.kill(-pid, "SIGTERM");
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // gone
    }
  }, 5000);
  await exited;
  clearTimeout(timer);
}
