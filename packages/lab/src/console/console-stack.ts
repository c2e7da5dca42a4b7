/**
 * The real console on a throwaway database, for tests and benches, from nothing: PostgreSQL
 * (migrated), an admin and its tRPC caller (packages/api's fixtures), `next start` of the console's
 * production build on a free port. close() stops all of it, each step whatever the others did.
 * The one way to stand a console up for the lab (ConsoleLab: the lab in console mode) and for the
 * system tests' end-to-end harness (an in-process agent); exported as `@tide/lab/testing`.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { createDb, type Db } from "@tide/db";
import {
  CONSOLE_DIR,
  freePort,
  loadApiFixtures,
  migrate,
  startConsole,
  startTempCluster,
  stopConsole,
  type ApiFixtures,
  type ConsoleProcess,
  type TempCluster,
} from "@tide/devstack";

export interface ConsoleStack {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** An admin's tRPC caller: host tokens, API tokens. */
  readonly api: ReturnType<ApiFixtures["callerFor"]>;
  /** The admin's scopes (for an API token that can do everything). */
  readonly adminScopes: readonly string[];
  /** The last of the console's output (for failure messages). */
  output(): string;
  close(): Promise<void>;
}

/**
 * Runs every step, each whatever the others did, and throws the first error after all of them:
 * how a test's teardown stops what it started.
 */
export async function everyStep(steps: readonly (() => unknown)[]): Promise<void> {
  const errors: unknown[] = [];
  for (const step of steps) {
    try {
      await step();
    } catch (e) {
      errors.push(e);
    }
  }
  if (errors.length > 0) throw errors[0];
}

/** Starts PostgreSQL and the console; on failure whatever was started is stopped before it throws. */
export async function startConsoleStack(): Promise<ConsoleStack> {
  const buildId = path.join(CONSOLE_DIR, ".next/BUILD_ID");
  if (!existsSync(buildId)) throw new Error(`${buildId} is missing: npm run build -w @tide/console`);
  let cluster: TempCluster | undefined;
  let db: Db | undefined;
  let server: ConsoleProcess | undefined;
  const close = () => everyStep([() => stopConsole(server), () => db?.$disconnect(), () => cluster?.stop()]);
  try {
    cluster = await startTempCluster();
    await migrate(cluster.url, { quiet: true });
    db = createDb(cluster.url, { max: 2 });
    const { makeUser, callerFor } = await loadApiFixtures();
    const admin = await makeUser(db, "admin");
    const port = await freePort();
    server = await startConsole(port, cluster.url);
    const console = server;
    return {
      url: `http://127.0.0.1:${port}`,
      api: callerFor(db, admin),
      adminScopes: admin.scopes,
      output: () => console.output(),
      close,
    };
  } catch (e) {
    await close().catch(() => undefined);
    throw e;
  }
}
