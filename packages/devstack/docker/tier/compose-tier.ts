/**
 * The `compose` test tier (npm test -- compose): docker-compose.yml built and run for real.
 *   node --import tsx packages/devstack/docker/tier/compose-tier.ts
 *
 * Where a Docker engine can run (Linux, root): installs docker.io + debootstrap if missing, starts
 * its own dockerd (own-dockerd.ts: no iptables, no bridge, private data root and socket), makes the
 * base image (base-image.sh), builds the images with Debian's docker-compose 1.29, and checks:
 *   - a database left by an older Tide (the first migrations only, plus a row of its own) is
 *     migrated by the console's start, never reset;
 *   - /api/health, sign-in with the seeded admin's credentials, a drain over REST with an API token
 *     (and refused without one), Playwright signing in through Debian's Chromium;
 *   - a second `up` changes nothing; `up` with the console's port taken stops the console with a
 *     message naming the port;
 *   - `down` + `up` keep the data (the drain, the credentials), `down -v` removes the volumes;
 *   - profile `fleet`: the lab registers itself with the console, both of its directors serve the
 *     console's table, a drain over REST reaches both, and stopping it leaves no namespace behind;
 *   - `up` with the console's port taken: a message naming the port, exit 0, no restart;
 *   - base-image.sh without an engine says how to get one (before any engine runs), refuses a pin
 *     without a digest, and leaves debian:trixie-slim pulled at its pinned digest or made here;
 *   - a one-line console change rebuilds neither `npm ci` nor the fleet image;
 *   - on a busy machine (a CPU burner per core of the tier's own): the whole stack with the fleet
 *     comes up healthy as Docker sees it, the console container's process count stays flat for two
 *     minutes with no zombie, and every container stops within its grace period (no SIGKILL);
 *   - the host's iptables, bridges, sysctls, files under /etc/docker, /run/docker and
 *     /run/containerd, and the engine's cgroups are exactly as before.
 * Prints image sizes, build times (full, one-line console change) and the times from `up` to a
 * healthy console and fleet. Where no engine can run, says why and only parses the file.
 * The engine's data root (images, build cache) is kept in $TIDE_COMPOSE_DOCKER_ROOT (default
 * .tide/compose-docker) so a second run builds warm; remove it to build cold.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnSyncOptions } from "node:child_process";
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { cpus } from "node:os";
import net from "node:net";
import path from "node:path";
import pg from "pg";
import { chromium } from "playwright-core";
import { parseAdminCredentials, sessionFromSetCookie } from "../../src/lab-token";
import { freePort } from "../../src/postgres/ports";
import { REPO_ROOT } from "../../src/repo-root";
import { diffHostState, snapshotHost } from "./host-state";
import { startOwnDockerd, type OwnDockerd } from "./own-dockerd";

const PROJECT = "tide-compose-tier";
const COMPOSE_FILE = path.join(REPO_ROOT, "docker-compose.yml");
const HEALTHY_TIMEOUT_MS = 240_000;
/** Up to a healthy fleet on a machine kept busy by the tier's burner (Docker's 30 s checks). */
const BUSY_HEALTHY_TIMEOUT_MS = 900_000;
/** How long the console container's process count is watched, and how often (ms). */
const FLAT_WATCH_MS = 120_000;
const FLAT_SAMPLE_MS = 10_000;
/** The compose file's stop_grace_period per service (s): a stop that reaches it is a SIGKILL. */
const GRACE_S: Record<string, number> = { postgres: 60, console: 30, fleet: 60 };
const REQUEST_TIMEOUT_MS = 15_000;
/** Migrations an "older Tide" had applied to its database before this version's console starts. */
const OLD_VERSION_MIGRATIONS = 3;
const MARKER = "written by an older Tide";
/** Debian's Chromium, flags as e2e/playwright.config.ts (no network beyond localhost). */
const CHROMIUM = {
  executablePath: "/usr/bin/chromium",
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
  ],
};

const log = (line: string) => process.stdout.write(`    ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

interface Check {
  name: string;
  ok: boolean;
  detail?: string;
}
const checks: Check[] = [];

/** Tags debian:<suite>-slim in the engine: the pinned digest from a registry, or made here. */
const BASE_IMAGE_SCRIPT = path.join(REPO_ROOT, "packages/devstack/docker/base-image.sh");

async function check(name: string, body: () => Promise<string | void>): Promise<boolean> {
  try {
    const detail = await body();
    checks.push({ name, ok: true, ...(detail ? { detail } : {}) });
    log(`PASS ${name}${detail ? ` (${detail})` : ""}`);
    return true;
  } catch (e) {
    const detail = e instanceof Error ? e.message : String(e);
    checks.push({ name, ok: false, detail });
    log(`FAIL ${name}: ${detail}`);
    return false;
  }
}

function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

/** Why no Docker engine can run here, or null when one can. */
function whyNoEngine(): string | null {
  if (process.platform !== "linux") return `not Linux (${process.platform})`;
  if (process.getuid?.() !== 0) return "not root (a Docker engine needs root)";
  return null;
}

function sh(command: string, args: string[], options: SpawnSyncOptions & { quiet?: boolean } = {}): string {
  const r = spawnSync(command, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, ...options });
  const output = `${String(r.stdout ?? "")}${String(r.stderr ?? "")}`;
  if (r.status !== 0) {
    throw new Error(
      `${command} ${args.join(" ")} exited with ${r.status ?? r.signal}:\n${output.trim().split("\n").slice(-30).join("\n")}`,
    );
  }
  return String(r.stdout ?? "");
}

/** Installs docker.io and debootstrap when missing (install.sh: services are not started). */
function installEngine(): void {
  sh("bash", ["-c", `source "${REPO_ROOT}/packages/devstack/bin/lib/install.sh" && tide_install_docker`], {
    stdio: "inherit",
  });
}

class Stack {
  readonly env: NodeJS.ProcessEnv;
  constructor(
    engine: OwnDockerd,
    readonly consolePort: number,
    readonly pgPort: number,
  ) {
    this.env = {
      ...engine.env,
      COMPOSE_PROJECT_NAME: PROJECT,
      TIDE_COMPOSE_CONSOLE_PORT: String(consolePort),
      TIDE_COMPOSE_PG_PORT: String(pgPort),
      // The classic builder through docker-py: no buildx plugin needed (Debian has none).
      COMPOSE_DOCKER_CLI_BUILD: "0",
      DOCKER_BUILDKIT: "0",
    };
  }
  get url(): string {
    return `http://127.0.0.1:${this.consolePort}`;
  }
  get databaseUrl(): string {
    return `postgresql://tide:tide-dev-only@127.0.0.1:${this.pgPort}/tide`;
  }
  compose(args: string[], options: { quiet?: boolean; env?: Record<string, string> } = {}): string {
    return sh("docker-compose", ["-f", COMPOSE_FILE, ...args], {
      cwd: REPO_ROOT,
      env: { ...this.env, ...options.env },
      ...(options.quiet ? {} : { stdio: ["ignore", "inherit", "inherit"] }),
    });
  }
  /** Like compose() but resolves to the exit status and the output (never throws). */
  composeStatus(args: string[], env: Record<string, string> = {}): { status: number | null; output: string } {
    const r = spawnSync("docker-compose", ["-f", COMPOSE_FILE, ...args], {
      cwd: REPO_ROOT,
      env: { ...this.env, ...env },
      encoding: "utf8",
    });
    return { status: r.status, output: `${r.stdout}${r.stderr}` };
  }
  docker(args: string[]): string {
    return sh("docker", args, { env: this.env });
  }
  /** "id startedAt" of the service's container. */
  containerState(service: string): string {
    const id = this.compose(["ps", "-q", service], { quiet: true }).trim();
    assert(id, `no ${service} container`);
    return this.docker(["inspect", "-f", "{{.Id}} {{.State.StartedAt}}", id]).trim();
  }
  /** The service's container id ("" when it has none). */
  containerId(service: string): string {
    return this.compose(["--profile", "fleet", "ps", "-q", service], { quiet: true }).trim();
  }
  /** docker inspect -f FORMAT of the service's container. */
  inspect(service: string, format: string): string {
    const id = this.containerId(service);
    assert(id, `no ${service} container`);
    return this.docker(["inspect", "-f", format, id]).trim();
  }
  /** Waits until Docker's healthcheck says healthy for every service; ms from the call. */
  async waitDockerHealthy(services: string[], timeoutMs: number): Promise<number> {
    const started = Date.now();
    for (;;) {
      const states = services.map((s) => {
        try {
          return this.inspect(s, "{{.State.Status}}/{{if .State.Health}}{{.State.Health.Status}}{{end}}");
        } catch {
          return "none";
        }
      });
      if (states.every((st) => st === "running/healthy")) return Date.now() - started;
      if (Date.now() - started > timeoutMs) {
        const logs = this.composeStatus(["--profile", "fleet", "logs", "--tail=30", ...services]).output;
        throw new Error(
          `not healthy within ${seconds(timeoutMs)}: ${services.map((s, i) => `${s} ${states[i]}`).join(", ")}\n${logs}`,
        );
      }
      await sleep(2000);
    }
  }
  async waitHealthy(timeoutMs = HEALTHY_TIMEOUT_MS): Promise<number> {
    const started = Date.now();
    for (;;) {
      try {
        const res = await fetch(`${this.url}/api/health`, { signal: AbortSignal.timeout(3000) });
        if (res.status === 200) return Date.now() - started;
      } catch {
        // not listening yet
      }
      if (Date.now() - started > timeoutMs) {
        const logs = this.composeStatus(["logs", "--tail=40", "console", "postgres"]).output;
        throw new Error(`the console was not healthy within ${seconds(timeoutMs)}; logs:\n${logs}`);
      }
      await sleep(500);
    }
  }
}

async function waitForDatabase(url: string): Promise<void> {
  const started = Date.now();
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.query("SELECT 1");
      return;
    } catch (e) {
      if (Date.now() - started > HEALTHY_TIMEOUT_MS) throw e;
    } finally {
      await client.end().catch(() => {});
    }
    await sleep(500);
  }
}

async function query<T>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * A database as an older Tide left it: only the first `count` migrations applied (this repo's
 * prisma.config.ts over a copy of prisma/ holding just those), plus a table of its own.
 */
async function makeOlderDatabase(url: string, count: number): Promise<string[]> {
  const dir = mkdtempSync("/tmp/tide-older-schema-");
  try {
    const migrations = readdirSync(path.join(REPO_ROOT, "prisma/migrations"))
      .filter((d) => /^\d+_/.test(d))
      .sort();
    const older = migrations.slice(0, count);
    mkdirSync(path.join(dir, "prisma/migrations"), { recursive: true });
    mkdirSync(path.join(dir, "packages/db"), { recursive: true });
    cpSync(path.join(REPO_ROOT, "prisma/schema.prisma"), path.join(dir, "prisma/schema.prisma"));
    cpSync(
      path.join(REPO_ROOT, "prisma/migrations/migration_lock.toml"),
      path.join(dir, "prisma/migrations/migration_lock.toml"),
    );
    for (const m of older)
      cpSync(path.join(REPO_ROOT, "prisma/migrations", m), path.join(dir, "prisma/migrations", m), {
        recursive: true,
      });
    cpSync(
      path.join(REPO_ROOT, "packages/db/prisma.config.ts"),
      path.join(dir, "packages/db/prisma.config.ts"),
    );
    symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(dir, "node_modules"));
    sh(
      "node",
      [
        "--require",
        path.join(REPO_ROOT, "packages/db/scripts/unref-wasm-timers.cjs"),
        path.join(REPO_ROOT, "node_modules/prisma/build/index.js"),
        "migrate",
        "deploy",
        "--config",
        path.join(dir, "packages/db/prisma.config.ts"),
      ],
      {
        cwd: dir,
        env: {
          ...process.env,
          DATABASE_URL: url,
          PRISMA_SCHEMA_ENGINE_BINARY: "/bin/false",
          CHECKPOINT_DISABLE: "1",
          PRISMA_HIDE_UPDATE_MESSAGE: "1",
        },
      },
    );
    await query(
      url,
      `CREATE TABLE tide_tier_marker (note text); INSERT INTO tide_tier_marker VALUES ('${MARKER}')`,
    );
    return migrations;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A kept-alive socket the other side had closed (undici's and Node's codes). */
const STALE_SOCKET_CODES = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED"]);

/** fetch's "fetch failed", with what failed under it (the socket's code and message). */
function withCause(e: unknown): Error {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  const message = e instanceof Error ? e.message : String(e);
  return new Error(cause ? `${message} (${cause.code ?? ""} ${cause.message ?? ""})`.trim() : message);
}

async function api(
  url: string,
  method: string,
  pathname: string,
  auth: { token?: string; session?: string },
  body?: unknown,
): Promise<{ status: number; json: unknown; headers: Headers }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (auth.token) headers.authorization = `Bearer ${auth.token}`;
  if (auth.session) headers.cookie = `tide_session=${auth.session}`;
  const send = () =>
    fetch(`${url}${pathname}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  let res: Response;
  try {
    res = await send();
  } catch (e) {
    // fetch keeps connections alive between checks; one the console closed while it sat idle (or
    // a console restarted by the check before) fails the next request on it before any answer
    // ("fetch failed", the socket's code in its cause). That is this client's pool, not the
    // console: send once more on a new connection, and say the cause if that fails too.
    const code = (e as { cause?: { code?: string } }).cause?.code ?? "";
    if (!STALE_SOCKET_CODES.has(code)) throw withCause(e);
    res = await send().catch((again: unknown) => {
      throw withCause(again);
    });
  }
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = text;
  }
  return { status: res.status, json, headers: res.headers };
}

interface ProxyRow {
  id: string;
  state: string;
}
interface PoolDetail {
  id: string;
  name: string;
  proxies: ProxyRow[];
}

/** The admin's credentials as the seed wrote them into the tide-data volume. */
function readCredentials(stack: Stack): { email: string; password: string } {
  const text = stack.compose(["exec", "-T", "console", "cat", "/app/.tide/admin-credentials"], {
    quiet: true,
  });
  const credentials = parseAdminCredentials(text);
  assert(credentials, "no email=/password= lines in /app/.tide/admin-credentials");
  return credentials;
}

async function runStack(engine: OwnDockerd): Promise<void> {
  const stack = new Stack(engine, await freePort(), await freePort());
  log(
    `project ${PROJECT}: console on 127.0.0.1:${stack.consolePort}, PostgreSQL on 127.0.0.1:${stack.pgPort}`,
  );
  // A stack left by an interrupted run (the data root is kept) starts from nothing.
  stack.compose(["--profile", "fleet", "down", "-v", "--remove-orphans"], { quiet: true });

  const baseStart = Date.now();
  sh("bash", [BASE_IMAGE_SCRIPT, "trixie"], {
    env: engine.env,
    stdio: "inherit",
  });
  log(`base image: ${seconds(Date.now() - baseStart)}`);
  await check("the base image is the pinned digest or made here, never a floating tag", async () => {
    const script = readFileSync(BASE_IMAGE_SCRIPT, "utf8");
    const pin = /^\s*trixie\) pin="[^"@]+@(sha256:[0-9a-f]{64})"/m.exec(script)?.[1];
    assert(pin, "base-image.sh names no trixie pin");
    const digests = stack.docker(["image", "inspect", "-f", "{{json .RepoDigests}}", "debian:trixie-slim"]);
    const repoDigests = JSON.parse(digests) as string[];
    assert(
      repoDigests.length === 0 || repoDigests.some((d) => d.endsWith(`@${pin}`)),
      `debian:trixie-slim came from a registry at ${repoDigests.join(", ")}, not the pin ${pin}`,
    );
    return repoDigests.length === 0 ? "made here (no registry answers)" : `pulled at ${pin}`;
  });

  const buildStart = Date.now();
  stack.compose(["--profile", "fleet", "build"]);
  const buildMs = Date.now() - buildStart;
  log(`docker-compose --profile fleet build: ${seconds(buildMs)}`);
  for (const image of ["tide-postgres:dev", "tide-console:dev", "tide-fleet:dev", "debian:trixie-slim"]) {
    const bytes = Number(stack.docker(["image", "inspect", "-f", "{{.Size}}", image]).trim());
    log(`image ${image}: ${(bytes / 1e6).toFixed(0)} MB`);
  }

  let migrations: string[] = [];
  await check(`an older Tide's database (${OLD_VERSION_MIGRATIONS} migrations) is in place`, async () => {
    const pgStart = Date.now();
    stack.compose(["up", "-d", "postgres"]);
    await waitForDatabase(stack.databaseUrl);
    log(`up postgres (initdb on a new volume) -> accepting connections: ${seconds(Date.now() - pgStart)}`);
    migrations = await makeOlderDatabase(stack.databaseUrl, OLD_VERSION_MIGRATIONS);
    return `${migrations.length} migrations in this version`;
  });

  const upStart = Date.now();
  stack.compose(["up", "-d"]);
  const healthyMs = await stack.waitHealthy();
  log(
    `up -> healthy console: ${seconds(Date.now() - upStart)} (health answered ${seconds(healthyMs)} after up returned)`,
  );
  await stack.waitDockerHealthy(["postgres", "console"], HEALTHY_TIMEOUT_MS);
  log(`up -> Docker reports postgres and console healthy: ${seconds(Date.now() - upStart)}`);

  await check("the console migrated the older database without resetting it", async () => {
    const applied = await query<{ n: string }>(
      stack.databaseUrl,
      "SELECT count(*) AS n FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL",
    );
    assert(
      Number(applied[0]?.n) === migrations.length,
      `${applied[0]?.n} migrations applied, expected ${migrations.length}`,
    );
    const marker = await query<{ note: string }>(stack.databaseUrl, "SELECT note FROM tide_tier_marker");
    assert(marker[0]?.note === MARKER, "the older version's row is gone: the database was reset");
  });

  await check("GET /api/health answers 200 {status: ok}", async () => {
    const res = await api(stack.url, "GET", "/api/health", {});
    assert(res.status === 200, `HTTP ${res.status}`);
    assert((res.json as { status?: string }).status === "ok", JSON.stringify(res.json));
  });

  let session = "";
  let token = "";
  const credentials = readCredentials(stack);
  await check("sign-in with the seeded admin's credentials (and a wrong password is refused)", async () => {
    const wrong = await api(
      stack.url,
      "POST",
      "/api/auth/sign-in",
      {},
      { ...credentials, password: "not-the-password" },
    );
    assert(wrong.status === 401 || wrong.status === 400, `a wrong password got HTTP ${wrong.status}`);
    const res = await api(stack.url, "POST", "/api/auth/sign-in", {}, credentials);
    assert(res.status === 200, `HTTP ${res.status}: ${JSON.stringify(res.json)}`);
    session = sessionFromSetCookie(res.headers.getSetCookie()) ?? "";
    assert(session, "no tide_session cookie");
    const created = await api(
      stack.url,
      "POST",
      "/api/v1/tokens",
      { session },
      {
        name: "compose tier",
        scopes: ["read", "operate"],
      },
    );
    assert(created.status === 200, `POST /api/v1/tokens: HTTP ${created.status}`);
    token = (created.json as { token?: string }).token ?? "";
    assert(token.startsWith("tide_"), "no token in the answer");
    return credentials.email;
  });

  let drained: { poolId: string; proxyId: string } | null = null;
  await check("a drain over REST with an API token (refused without one), audited", async () => {
    const pools = await api(stack.url, "GET", "/api/v1/pools", { token });
    assert(pools.status === 200, `GET /api/v1/pools: HTTP ${pools.status}`);
    const list = pools.json as { id: string }[] | { items?: { id: string }[] };
    const ids = (Array.isArray(list) ? list : (list.items ?? [])).map((p) => p.id);
    let target: { pool: PoolDetail; proxy: ProxyRow } | null = null;
    for (const id of ids) {
      const pool = (await api(stack.url, "GET", `/api/v1/pools/${id}`, { token })).json as PoolDetail;
      const active = (pool.proxies ?? []).filter((p) => p.state === "active");
      if (active.length >= 2 && active[0]) {
        target = { pool, proxy: active[0] };
        break;
      }
    }
    assert(target, "no seeded pool has two active proxies to drain one of");
    const body = { action: "drain", reason: "compose tier: drain over REST" };
    const anonymous = await api(stack.url, "POST", `/api/v1/proxies/${target.proxy.id}/transition`, {}, body);
    assert(anonymous.status === 401, `without a token: HTTP ${anonymous.status}`);
    const res = await api(
      stack.url,
      "POST",
      `/api/v1/proxies/${target.proxy.id}/transition`,
      { token },
      body,
    );
    assert(
      res.status === 200,
      `POST /api/v1/proxies/${target.proxy.id}/transition: HTTP ${res.status} ${JSON.stringify(res.json)}`,
    );
    const after = (await api(stack.url, "GET", `/api/v1/pools/${target.pool.id}`, { token }))
      .json as PoolDetail;
    const state = after.proxies.find((p) => p.id === target.proxy.id)?.state;
    assert(state === "draining", `proxy state after the drain: ${state}`);
    const audit = await api(stack.url, "GET", `/api/v1/audit?poolId=${target.pool.id}&limit=20`, { token });
    assert(audit.status === 200, `GET /api/v1/audit: HTTP ${audit.status}`);
    assert(
      JSON.stringify(audit.json).includes("compose tier: drain over REST"),
      "no audit event with the drain's reason",
    );
    drained = { poolId: target.pool.id, proxyId: target.proxy.id };
    return `${target.pool.name}: ${target.proxy.id} draining`;
  });

  await check("Playwright signs in to the containerised console (Debian's Chromium)", async () => {
    const browser = await chromium.launch(CHROMIUM);
    try {
      const page = await browser.newPage();
      await page.goto(`${stack.url}/sign-in`);
      await page.getByTestId("sign-in-email").fill(credentials.email);
      await page.getByTestId("sign-in-password").fill(credentials.password);
      await page.getByTestId("sign-in-submit").click();
      await page.getByTestId("signed-in-role").waitFor({ state: "visible", timeout: 30_000 });
      return `signed in as ${(await page.getByTestId("signed-in-role").textContent())?.trim()}`;
    } finally {
      await browser.close();
    }
  });

  await check("a second `up -d` changes nothing (same containers, not restarted)", async () => {
    const before = ["postgres", "console"].map((s) => stack.containerState(s));
    const output = stack.compose(["up", "-d"], { quiet: true });
    const after = ["postgres", "console"].map((s) => stack.containerState(s));
    assert(
      JSON.stringify(before) === JSON.stringify(after),
      `containers changed:\n${before.join("\n")}\n->\n${after.join("\n")}`,
    );
    return output.trim().replaceAll("\n", "; ") || "up-to-date";
  });

  await check(
    "`up` with the console's port taken: the console stops and its log names the port",
    async () => {
      // What a developer meets with another console on the port: `up -d` recreates the console with
      // TIDE_COMPOSE_CONSOLE_PORT pointing at a port some other process holds.
      const server = net.createServer();
      const port = await new Promise<number>((resolve) =>
        server.listen(0, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port)),
      );
      const taken = { TIDE_COMPOSE_CONSOLE_PORT: String(port) };
      try {
        stack.compose(["up", "-d", "console"], { quiet: true, env: taken });
        const message = `port ${port} is already in use`;
        const started = Date.now();
        let logs = "";
        while (!logs.includes(message)) {
          assert(
            Date.now() - started < 60_000,
            `no message naming port ${port} within 60 s:\n${logs.trim()}`,
          );
          await sleep(1000);
          logs = stack.composeStatus(["logs", "--no-color", "console"], taken).output;
        }
        const res = await fetch(`http://127.0.0.1:${port}/api/health`, {
          signal: AbortSignal.timeout(2000),
        }).catch(() => null);
        assert(res === null, "something answered HTTP on the taken port");
        // No restart loop: the policy (on-failure, capped) does not restart an exit 0. A loop
        // restarts within a second or two; 20 s shows one.
        await sleep(20_000);
        const state = stack.inspect(
          "console",
          "{{.State.Status}} exit={{.State.ExitCode}} restarts={{.RestartCount}} policy={{.HostConfig.RestartPolicy.Name}}:{{.HostConfig.RestartPolicy.MaximumRetryCount}}",
        );
        assert(
          state === "exited exit=0 restarts=0 policy=on-failure:5",
          `the console with its port taken: ${state} (expected exited exit=0 restarts=0 policy=on-failure:5)`,
        );
        const count = logs.split("\n").filter((l) => l.includes(message)).length;
        assert(count === 1, `the message appeared ${count} times (restarts)`);
        return logs
          .split("\n")
          .find((l) => l.includes(message))
          ?.replace(/^.*\| /, "")
          .trim();
      } finally {
        server.close();
        // Back to the stack's own port (recreates the console).
        stack.compose(["up", "-d", "console"], { quiet: true });
        await stack.waitHealthy();
      }
    },
  );

  await check("`down` then `up` keeps the data (the drain, the admin, the token)", async () => {
    stack.compose(["down"]);
    const upStart = Date.now();
    stack.compose(["up", "-d"]);
    await stack.waitHealthy();
    const restartMs = Date.now() - upStart;
    assert(drained, "no drain to look for (the drain check failed)");
    const { poolId, proxyId } = drained;
    const pool = await api(stack.url, "GET", `/api/v1/pools/${poolId}`, { token });
    assert(
      pool.status === 200,
      `GET /api/v1/pools/${poolId} with the token made before: HTTP ${pool.status}`,
    );
    const state = (pool.json as PoolDetail).proxies.find((p) => p.id === proxyId)?.state;
    assert(state === "draining", `the drained proxy is ${state} after down/up`);
    const again = readCredentials(stack);
    assert(again.password === credentials.password, "the admin's credentials changed across down/up");
    return `up -> healthy console again: ${seconds(restartMs)}`;
  });

  await checkFleet(stack, token);

  await checkOneLineChange(stack);
  await checkBusyHost(stack);

  await check("`down -v` removes the volumes", async () => {
    stack.compose(["--profile", "fleet", "down", "-v"]);
    const volumes = stack.docker([
      "volume",
      "ls",
      "-q",
      "--filter",
      `label=com.docker.compose.project=${PROJECT}`,
    ]);
    assert(volumes.trim() === "", `volumes left: ${volumes.trim()}`);
  });
}

interface PoolSyncReply {
  version: number | null;
  servedBy: number;
  directorCount: number;
  done: boolean;
}

/** Polls the lab pool's sync until `ok` holds; returns it, or throws with the last answer. */
async function waitPoolSync(
  stack: Stack,
  token: string,
  poolId: string,
  ok: (s: PoolSyncReply) => boolean,
  timeoutMs: number,
): Promise<PoolSyncReply> {
  const started = Date.now();
  let last: unknown = null;
  for (;;) {
    const res = await api(stack.url, "GET", `/api/v1/pools/${poolId}/sync`, { token });
    last = res.json;
    if (res.status === 200 && ok(res.json as PoolSyncReply)) return res.json as PoolSyncReply;
    if (Date.now() - started > timeoutMs)
      throw new Error(
        `not within ${seconds(timeoutMs)}; last GET /pools/${poolId}/sync: ${JSON.stringify(last)}`,
      );
    await sleep(500);
  }
}

/** Namespaces in the fleet container (its own mount namespace: the host does not see them). */
function fleetNamespaces(stack: Stack): string[] {
  return stack
    .compose(["--profile", "fleet", "exec", "-T", "fleet", "ip", "netns", "list"], { quiet: true })
    .split("\n")
    .map((l) => l.split(" ")[0] ?? "")
    .filter(Boolean);
}

/**
 * Profile `fleet`: the lab container registers pool `lab` with the console, its two directors serve
 * the console's table, a drain over REST reaches both of them, and `stop` takes the lab down.
 */
async function checkFleet(stack: Stack, token: string): Promise<void> {
  let poolId = "";
  await check(
    "profile fleet: the lab registers with the console and both directors serve its table",
    async () => {
      const upStart = Date.now();
      stack.compose(["--profile", "fleet", "up", "-d", "fleet"]);
      const started = Date.now();
      while (!poolId) {
        const pools = await api(stack.url, "GET", "/api/v1/pools", { token });
        const list = pools.json as
          { id: string; name: string }[] | { items?: { id: string; name: string }[] };
        poolId = (Array.isArray(list) ? list : (list.items ?? [])).find((p) => p.name === "lab")?.id ?? "";
        if (poolId) break;
        if (Date.now() - started > HEALTHY_TIMEOUT_MS) {
          const logs = stack.composeStatus(["--profile", "fleet", "logs", "--tail=40", "fleet"]).output;
          throw new Error(`no pool "lab" within ${seconds(HEALTHY_TIMEOUT_MS)}; fleet logs:\n${logs}`);
        }
        await sleep(1000);
      }
      const sync = await waitPoolSync(
        stack,
        token,
        poolId,
        (s) => s.directorCount === 2 && s.done,
        HEALTHY_TIMEOUT_MS,
      ).catch((e: unknown) => {
        const logs = stack.composeStatus(["--profile", "fleet", "logs", "--tail=40", "fleet"]).output;
        throw new Error(`${e instanceof Error ? e.message : String(e)}\nfleet logs:\n${logs}`);
      });
      return `version ${sync.version} served by ${sync.servedBy}/${sync.directorCount} directors, ${seconds(Date.now() - upStart)} after up`;
    },
  );
  if (!poolId) return;

  await check("profile fleet: a drain over REST reaches both lab directors", async () => {
    const pool = (await api(stack.url, "GET", `/api/v1/pools/${poolId}`, { token })).json as PoolDetail;
    const proxy = pool.proxies.find((p) => p.state === "active");
    assert(proxy, `no active proxy in pool lab: ${JSON.stringify(pool.proxies)}`);
    const before = await waitPoolSync(stack, token, poolId, (s) => s.done, 30_000);
    const res = await api(
      stack.url,
      "POST",
      `/api/v1/proxies/${proxy.id}/transition`,
      { token },
      {
        action: "drain",
        reason: "compose tier: drain a lab proxy",
      },
    );
    assert(res.status === 200, `drain: HTTP ${res.status} ${JSON.stringify(res.json)}`);
    const drainStart = Date.now();
    const after = await waitPoolSync(
      stack,
      token,
      poolId,
      (s) => s.done && s.version !== null && before.version !== null && s.version > before.version,
      60_000,
    );
    return `version ${before.version} -> ${after.version}, served by ${after.servedBy}/${after.directorCount} in ${seconds(Date.now() - drainStart)}`;
  });

  await check("profile fleet: `stop` takes the lab down and removes its namespaces", async () => {
    const running = fleetNamespaces(stack);
    assert(running.length > 0, "the fleet container shows no namespace while the lab runs");
    stack.compose(["--profile", "fleet", "stop", "fleet"]);
    const logs = stack.composeStatus([
      "--profile",
      "fleet",
      "logs",
      "--no-color",
      "--tail=60",
      "fleet",
    ]).output;
    assert(
      /lab down\s*$/m.test(logs) && !logs.includes("lab down failed"),
      `the lab did not report going down:\n${logs}`,
    );
    const removed = Number(/removed (\d+) namespaces/.exec(logs)?.[1] ?? -1);
    assert(
      removed === running.length,
      `lab down removed ${removed} namespaces, ${running.length} were up:\n${logs}`,
    );
    return `${running.length} namespaces up, ${removed} removed by lab down`;
  });
}

/** Classic-builder output: did the step whose instruction contains `needle` come from the cache? */
function stepCached(buildOutput: string, needle: string): boolean {
  const steps = buildOutput.split(/^Step \d+\/\d+ : /m);
  const step = steps.find((st) => (st.split("\n")[0] ?? "").includes(needle));
  assert(step !== undefined, `no build step with ${needle}`);
  return step.includes("Using cache");
}

/**
 * The layer order: the console and the fleet built from a copy of the working tree (the checkout is
 * shared), then again after one line is added to a console source file. Only the console's build
 * stage runs again: `npm ci` comes from the cache and the fleet image is the same image.
 */
async function checkOneLineChange(stack: Stack): Promise<void> {
  await check("a one-line console change rebuilds neither `npm ci` nor the fleet image", async () => {
    const ctx = mkdtempSync("/tmp/tide-compose-context-");
    try {
      sh(
        "bash",
        [
          "-c",
          `git ls-files -z -co --exclude-standard | tar --null --ignore-failed-read -T - -cf - | tar -xf - -C "${ctx}"`,
        ],
        { cwd: REPO_ROOT },
      );
      const build = (target: string, tag: string): { output: string; ms: number } => {
        const started = Date.now();
        const output = sh(
          "docker",
          [
            "build",
            "-f",
            path.join(ctx, "packages/devstack/docker/Dockerfile"),
            "--network",
            "host",
            "--target",
            target,
            "-t",
            tag,
            ctx,
          ],
          { env: stack.env },
        );
        return { output, ms: Date.now() - started };
      };
      build("console", "tide-console:tier-copy");
      build("fleet", "tide-fleet:tier-copy");
      const fleetBefore = stack.docker(["image", "inspect", "-f", "{{.Id}}", "tide-fleet:tier-copy"]).trim();
      appendFileSync(path.join(ctx, "apps/console/src/app/layout.tsx"), "// one line (compose tier)\n");
      const consoleBuild = build("console", "tide-console:tier-copy");
      const fleetBuild = build("fleet", "tide-fleet:tier-copy");
      const fleetAfter = stack.docker(["image", "inspect", "-f", "{{.Id}}", "tide-fleet:tier-copy"]).trim();
      assert(stepCached(consoleBuild.output, "npm ci"), "`npm ci` ran again after a one-line console change");
      assert(
        fleetAfter === fleetBefore,
        `the fleet image changed after a one-line console change:\n${fleetBuild.output.split("\n").slice(-40).join("\n")}`,
      );
      log(
        `one-line console change: console image rebuilt in ${seconds(consoleBuild.ms)}, fleet in ${seconds(fleetBuild.ms)}`,
      );
      return `console ${seconds(consoleBuild.ms)}, fleet ${seconds(fleetBuild.ms)} (all cached)`;
    } finally {
      rmSync(ctx, { recursive: true, force: true });
      spawnSync("docker", ["rmi", "tide-console:tier-copy", "tide-fleet:tier-copy"], {
        env: stack.env,
        stdio: "ignore",
      });
    }
  });
}

/** Processes in a container as the host sees them: [pid, stat, command] rows. */
function containerProcesses(stack: Stack, service: string): string[][] {
  const out = stack.docker(["top", stack.containerId(service), "-eo", "pid,stat,comm"]);
  return out
    .trim()
    .split("\n")
    .slice(1)
    .map((l) => l.trim().split(/\s+/));
}

/**
 * The stack on a busy machine (issue 34): with a CPU burner per core of the tier's own running, the
 * whole stack with the fleet is started from new containers (the data kept), comes up healthy as
 * Docker's own healthchecks see it, keeps a flat process count in the console container for two
 * minutes (cheap checks that do not pile up, an init that reaps), and every container stops within
 * its grace period (no SIGKILL, exit status not 137).
 */
async function checkBusyHost(stack: Stack): Promise<void> {
  const burners: ChildProcess[] = [];
  try {
    stack.compose(["--profile", "fleet", "down"], { quiet: true });
    for (let i = 0; i < cpus().length; i++)
      burners.push(spawn("sh", ["-c", "while :; do :; done"], { stdio: "ignore" }));
    log(`busy machine: ${burners.length} CPU burners running`);

    const ok = await check(
      "busy machine: the stack with the fleet comes up healthy (Docker's healthchecks)",
      async () => {
        const upStart = Date.now();
        stack.compose(["--profile", "fleet", "up", "-d"], { quiet: true });
        const consoleMs = await stack.waitDockerHealthy(["postgres", "console"], BUSY_HEALTHY_TIMEOUT_MS);
        await stack.waitDockerHealthy(["postgres", "console", "fleet"], BUSY_HEALTHY_TIMEOUT_MS);
        const restarts = ["postgres", "console", "fleet"].map(
          (s) => `${s} ${stack.inspect(s, "{{.RestartCount}}")}`,
        );
        assert(
          restarts.every((r) => r.endsWith(" 0")),
          `restarts: ${restarts.join(", ")}`,
        );
        return `up -> console healthy ${seconds(consoleMs)}, fleet healthy ${seconds(Date.now() - upStart)}; no restart`;
      },
    );
    if (!ok) return;

    await check(
      "busy machine: the console container's process count stays flat for two minutes",
      async () => {
        const counts: number[] = [];
        const zombies: string[] = [];
        const started = Date.now();
        while (Date.now() - started < FLAT_WATCH_MS) {
          const procs = containerProcesses(stack, "console");
          counts.push(procs.length);
          zombies.push(...procs.filter((p) => p[1]?.startsWith("Z")).map((p) => p.join(" ")));
          await sleep(FLAT_SAMPLE_MS);
        }
        const min = Math.min(...counts);
        const max = Math.max(...counts);
        assert(zombies.length === 0, `zombies: ${zombies.join("; ")}`);
        // One more than the least is a healthcheck caught while it ran (a few ms every 30 s).
        assert(max - min <= 1, `process counts over ${seconds(FLAT_WATCH_MS)}: ${counts.join(" ")}`);
        return `${counts.length} samples: ${counts.join(" ")}; no zombie`;
      },
    );

    await check("busy machine: every container stops within its grace period (no SIGKILL)", async () => {
      // One at a time, dependants first (the order `stop` uses), so each time is the container's own.
      const services = ["fleet", "console", "postgres"];
      const lines: string[] = [];
      for (const s of services) {
        const id = stack.containerId(s);
        const stopStart = Date.now();
        stack.compose(["--profile", "fleet", "stop", s], { quiet: true });
        const tookS = (Date.now() - stopStart) / 1000;
        const code = stack.docker(["inspect", "-f", "{{.State.ExitCode}}", id]).trim();
        lines.push(`${s} exit ${code} in ${tookS.toFixed(1)} s`);
        assert(code !== "137", `${s} was killed (exit 137): ${lines.join(", ")}`);
        assert(
          tookS < (GRACE_S[s] ?? 10),
          `${s} took ${tookS.toFixed(1)} s, its grace period is ${GRACE_S[s]} s`,
        );
      }
      const logs = stack.composeStatus([
        "--profile",
        "fleet",
        "logs",
        "--no-color",
        "--tail=20",
        "fleet",
      ]).output;
      assert(/stopped in \d+ s/.test(logs), `the fleet did not report stopping:\n${logs}`);
      return lines.join(", ");
    });
  } finally {
    for (const b of burners) b.kill("SIGKILL");
  }
}

async function main(): Promise<number> {
  const why = whyNoEngine();
  if (why) {
    log(`no Docker engine can run here: ${why}; parsing docker-compose.yml only`);
    sh("docker-compose", ["-f", COMPOSE_FILE, "config", "-q"], { stdio: "inherit" });
    log("docker-compose.yml parses");
    return 0;
  }
  installEngine();
  const dataRoot = path.resolve(
    process.env.TIDE_COMPOSE_DOCKER_ROOT ?? path.join(REPO_ROOT, ".tide/compose-docker"),
  );
  log(
    `engine data root: ${dataRoot}${existsSync(dataRoot) ? " (kept from an earlier run: warm build)" : " (new: cold build)"}`,
  );
  /** base-image.sh run with `env` added: its exit status and everything it printed. */
  const baseImage = (env: Record<string, string>) => {
    const r = spawnSync("bash", [BASE_IMAGE_SCRIPT], { encoding: "utf8", env: { ...process.env, ...env } });
    return { status: r.status, text: `${r.stdout}${r.stderr}` };
  };
  await check("base-image.sh refuses a pin without a digest, before anything else", async () => {
    const { status, text } = baseImage({ TIDE_BASE_IMAGE_PIN: "debian:trixie-slim" });
    assert(status === 64, `exit ${status} (expected 64):\n${text}`);
    assert(text.includes("TIDE_BASE_IMAGE_PIN must end in @sha256:"), `no reason given:\n${text}`);
  });
  await check("base-image.sh without a Docker engine says so and how to get one", async () => {
    const { status, text } = baseImage({ DOCKER_HOST: "unix:///nonexistent/tide-compose-tier.sock" });
    assert(status === 69, `exit ${status} (expected 69):\n${text}`);
    for (const needed of ["no Docker engine answers", "docker.io", "docker-compose", "iptables", "v1"])
      assert(text.includes(needed), `the message does not mention ${needed}:\n${text}`);
    assert(!text.includes("debootstrap"), `it still talks of debootstrap:\n${text}`);
  });
  const before = snapshotHost();
  const engine = await startOwnDockerd({ dataRoot, log });
  try {
    await runStack(engine);
  } catch (e) {
    checks.push({
      name: "the stack ran to the end",
      ok: false,
      detail: e instanceof Error ? e.message : String(e),
    });
    log(`FAIL ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    const r = spawnSync(
      "docker-compose",
      ["-f", COMPOSE_FILE, "--profile", "fleet", "down", "-v", "--remove-orphans"],
      {
        cwd: REPO_ROOT,
        env: { ...engine.env, COMPOSE_PROJECT_NAME: PROJECT },
        stdio: "ignore",
      },
    );
    if (r.status !== 0) log("docker-compose down -v failed (the engine stops anyway)");
    await check("the engine stops and leaves no mount or temp dir", () => engine.stop());
  }
  await check("the host's iptables, bridges, sysctls, engine files and cgroups are as before", async () => {
    const diff = diffHostState(before, snapshotHost());
    if (diff.otherLinks.length)
      log(`links of other processes changed meanwhile (not Docker's): ${diff.otherLinks.join(" ")}`);
    assert(diff.changed.length === 0, diff.changed.join("; "));
  });
  const failed = checks.filter((c) => !c.ok);
  for (const c of failed) log(`FAIL ${c.name}: ${c.detail}`);
  process.stdout.write(`${checks.length - failed.length} passed, ${failed.length} failed\n`);
  return failed.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`compose tier: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
