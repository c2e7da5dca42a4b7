/**
 * The real agent against a real console: `next start` of apps/console's production build (the way
 * e2e/support/stack.ts starts it) on a free port, against the integration tier's throwaway
 * PostgreSQL. The agent runs in-process (Agent: real sampling, real ConsoleLink over HTTP).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createDb, type Db } from "@tide/db";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freePort, REPO_ROOT } from "../../../../packages/devstack/src/postgres-cluster";
import { Agent } from "../agent";
import { resolveConfig } from "../config";

declare module "vitest" {
  /** From packages/devstack's integration global setup: a fresh, migrated database. */
  interface ProvidedContext {
    databaseUrl: string;
  }
}

const CONSOLE_DIR = path.join(REPO_ROOT, "apps/console");

/**
 * packages/api's test fixtures, imported at run time: a static import would pull the console's
 * Next.js global types (NODE_ENV required in ProcessEnv) into the agent's type check.
 */
interface ApiFixtures {
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
const HOST = "agent-it-01";

interface Console {
  child: ChildProcess;
  output: () => string;
}

/** `next start` in its own process group, like e2e's stack; resolves once /api/health says 200. */
async function startConsole(port: number, databaseUrl: string): Promise<Console> {
  let output = "";
  const child = spawn(
    path.join(REPO_ROOT, "node_modules/.bin/next"),
    ["start", "-p", String(port), "-H", "127.0.0.1"],
    {
      cwd: CONSOLE_DIR,
      env: {
        ...process.env,
        NODE_ENV: "production",
        PORT: String(port),
        DATABASE_URL: databaseUrl,
        NEXT_TELEMETRY_DISABLED: "1",
      },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-8000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`console exited:\n${output}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/health`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) return { child, output: () => output };
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  await stopConsole({ child, output: () => output });
  throw new Error(`console did not become healthy:\n${output}`);
}

async function stopConsole(c: Console | undefined): Promise<void> {
  const child = c?.child;
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // gone
    }
  }, 5000);
  await exited;
  clearTimeout(timer);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(
  what: string,
  cond: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await cond()) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

let db: Db;
let databaseUrl: string;
let port: number;
let consoleUrl: string;
let server: Console | undefined;
let dir: string;
let hostToken: string;
let apiToken: string;

function agentFor(token: string, logs: string[], hooks: ConstructorParameters<typeof Agent>[2] = {}): Agent {
  const tokenFile = path.join(dir, `token-${randomBytes(4).toString("hex")}`);
  writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  const config = resolveConfig([
    {
      consoleUrl,
      hostTokenFile: tokenFile,
      hostname: HOST,
      roles: ["proxy"],
      metricsListen: "",
      sampleIntervalMs: 1000,
      tableDir: path.join(dir, "tables"),
    },
  ]);
  return new Agent(config, (line) => logs.push(line), hooks);
}

beforeAll(async () => {
  if (!existsSync(path.join(CONSOLE_DIR, ".next/BUILD_ID"))) {
    throw new Error(
      "no console build (apps/console/.next/BUILD_ID): run `npx turbo run build --filter=@tide/console`",
    );
  }
  databaseUrl = inject("databaseUrl");
  db = createDb(databaseUrl, { max: 4 });
  const { truncateAll, makeUser, callerFor } = (await import(FIXTURES)) as ApiFixtures;
  await truncateAll(db);
  const admin = await makeUser(db, "admin");
  const api = callerFor(db, admin);
  hostToken = (await api.hostTokens.create({ hostname: HOST })).token;
  apiToken = (await api.tokens.create({ name: "agent-it", scopes: [...admin.scopes] })).token;
  dir = mkdtempSync(path.join(tmpdir(), "tide-agent-it-"));
  port = await freePort();
  consoleUrl = `http://127.0.0.1:${port}`;
  server = await startConsole(port, databaseUrl);
});

afterAll(async () => {
  await stopConsole(server);
  await db?.$disconnect();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("agent <-> real console", () => {
  it("hello registers the host, batches arrive, an outage is buffered and replayed in order without gaps", async () => {
    let buffered = 0;
    let replayLength = 0;
    const logs: string[] = [];
    const delivered: { sampledAt: string[]; replayed: boolean; accepted: number }[] = [];
    const agent = agentFor(hostToken, logs, { onDelivered: (b) => delivered.push(b) });
    const count = () => delivered.reduce((n, b) => n + b.sampledAt.length, 0);
    await agent.start();
    try {
      // hello + live batches
      await until("3 delivered samples", () => count() >= 3);
      expect(agent.consoleLink?.connected).toBe(true);
      const hosts = await fetch(`${consoleUrl}/api/v1/hosts`, {
        headers: { authorization: `Bearer ${apiToken}` },
      });
      expect(hosts.status).toBe(200);
      const host = (
        (await hosts.json()) as { name: string; roles: string[]; lastSeenAt: string | null }[]
      ).find((h) => h.name === HOST);
      expect(host).toMatchObject({ name: HOST, roles: ["proxy"] });
      expect(host?.lastSeenAt).not.toBeNull();
      expect(delivered.every((b) => !b.replayed)).toBe(true);

      // outage: stop the console, keep sampling
      await stopConsole(server);
      server = undefined;
      const outageStart = Date.now();
      await until("the agent to notice the outage", () =>
        logs.some((l) => l.startsWith("console unreachable")),
      );
      await until("4 buffered samples", () => (agent.consoleLink?.buffer.size ?? 0) >= 4);
      buffered = agent.consoleLink!.buffer.size;
      expect(Date.now() - outageStart).toBeGreaterThan(2000);

      // back: the buffer drains oldest first with replayed: true
      server = await startConsole(port, databaseUrl);
      await until("a replayed batch", () => delivered.some((b) => b.replayed), 45_000);
      const replay = delivered.find((b) => b.replayed)!;
      replayLength = replay.sampledAt.length;
      expect(replayLength).toBeGreaterThanOrEqual(buffered);
      expect(logs).toContain("console reachable again");
      const after = count();
      await until("2 more live samples", () => count() >= after + 2);
    } finally {
      agent.stop();
    }

    // everything the agent delivered is stored, in increasing time order, without a gap
    // (a batch whose reply was lost to the shutdown is sent again; the console ignores the duplicate)
    const sent = [...new Set(delivered.flatMap((b) => b.sampledAt))];
    for (let i = 1; i < sent.length; i++)
      expect(Date.parse(sent[i]!)).toBeGreaterThan(Date.parse(sent[i - 1]!));
    const rows = await db.observationSample.findMany({
      where: { host: { name: HOST } },
      select: { sampledAt: true },
      orderBy: { sampledAt: "asc" },
    });
    const stored = rows.map((r) => r.sampledAt.toISOString());
    expect(stored).toEqual(sent);
    const gaps = stored.slice(1).map((t, i) => Date.parse(t) - Date.parse(stored[i]!));
    console.log(
      `[agent it] ${stored.length} samples stored, ${buffered}+ buffered during the outage, replayed batch of ${replayLength}, max gap ${Math.max(...gaps)} ms`,
    );
    expect(Math.max(...gaps)).toBeLessThan(2000); // 1 s interval: no sample lost across the outage
    expect(delivered.reduce((n, b) => n + b.accepted, 0)).toBe(stored.length);
    expect(logs.join("\n")).not.toContain(hostToken);
  }, 120_000);

  it("a wrong token gets 401, reported without the token", async () => {
    const wrong = `tide_host_${randomBytes(24).toString("base64url")}`;
    const logs: string[] = [];
    const agent = agentFor(wrong, logs);
    await agent.start();
    try {
      await until("a 401 report", () => logs.some((l) => l.startsWith("console rejected the host token")));
    } finally {
      agent.stop();
    }
    expect(agent.consoleLink?.connected).toBe(false);
    expect(agent.consoleLink?.lastError).toMatch(/POST \/api\/v1\/agent\/hello: HTTP 401/);
    const all = logs.join("\n") + (agent.consoleLink?.lastError ?? "");
    expect(all).not.toContain(wrong);
    expect(all).not.toContain(wrong.slice("tide_host_".length));
    expect(logs.find((l) => l.startsWith("console rejected"))).toMatch(/HTTP 401/);
  });
});
