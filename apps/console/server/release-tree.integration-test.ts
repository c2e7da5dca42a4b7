/**
 * The release tree (scripts/release-tree.sh) is self-contained: assembled from the built console
 * into a temp directory outside the repository, moved, and run through bin/tide-console on node
 * alone, it migrates an empty database (to the schema `prisma migrate deploy` makes), creates the
 * first admin, and serves HTTPS with a self-signed certificate (health, HSTS, a Secure session
 * cookie even when a client claims http, systemd readiness, a certificate reload on SIGHUP) and
 * plain HTTP; a bad configuration exits 2. As root it runs as `nobody` with the repository hidden
 * behind an empty tmpfs in its own mount namespace, so nothing can come from the checkout.
 * Needs the console and tidectl built (`npm run build -w @tide/console && npm run build -w @tide/tidectl`).
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { X509Certificate } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import type { TLSSocket } from "node:tls";
import { promisify } from "node:util";
import { freePort, REPO_ROOT, waitFor } from "@tide/devstack";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

declare module "vitest" {
  /** From packages/devstack's integration global setup: a fresh, migrated database. */
  interface ProvidedContext {
    databaseUrl: string;
  }
}

const run = promisify(execFile);
const APP_DIR = path.join(REPO_ROOT, "apps/console");
const PG_DUMP = path.join(process.env.TIDE_PG_BIN_DIR ?? "/usr/lib/postgresql/15/bin", "pg_dump");
const isRoot = process.getuid?.() === 0;
/** The user the tree runs as when we are root: an unprivileged one with no files of its own. */
const RUN_AS = "nobody";
/** The tree must stay lean: 33 MB when this was written (Next 16, Prisma 6.19). */
const TREE_MAX_MB = 50;

const baseUrl = inject("databaseUrl");
const database = `tide_tree_${process.pid}_${Date.now()}`;
const databaseUrl = (() => {
  const u = new URL(baseUrl);
  u.pathname = `/${database}`;
  return u.toString();
})();

let tmp: string;
let tree: string;
let certFile: string;
let keyFile: string;
/** What the first `tide-console migrate` (in beforeAll) said. */
let migrateOutput = "";
const started: ChildProcess[] = [];

function requireBuild(): void {
  for (const file of [
    "apps/console/.next/standalone/apps/console/server.js",
    "apps/console/dist/tide-console.mjs",
    "apps/tidectl/dist/tidectl.js",
  ]) {
    if (!fs.existsSync(path.join(REPO_ROOT, file))) {
      throw new Error(
        `no ${file}: build first with npm run build -w @tide/console && npm run build -w @tide/tidectl`,
      );
    }
  }
}

/** The command line that runs the tree's bin/tide-console (as root: repository hidden). */
function treeCommand(args: string[]): [string, string[]] {
  const wrapper = path.join(tree, "bin/tide-console");
  if (!isRoot) return [wrapper, args];
  const hideRepo = 'mount -t tmpfs -o size=1m,mode=0755 tide-hidden "$0" && exec "$@"';
  return [
    "unshare",
    ["--mount", "--propagation", "private", "--", "sh", "-c", hideRepo, REPO_ROOT, wrapper, ...args],
  ];
}

function treeEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    LANG: "C.UTF-8",
    TIDE_CONSOLE_HOME: tree,
    TIDE_CONSOLE_NODE: process.execPath,
    TIDE_CONSOLE_USER: RUN_AS,
    TIDE_CONSOLE_ENV_FILE: "",
    DATABASE_URL: databaseUrl,
    ...extra,
  };
}

async function tideConsole(
  args: string[],
  extra: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const [command, argv] = treeCommand(args);
  try {
    const { stdout, stderr } = await run(command, argv, { env: treeEnv(extra), cwd: "/" });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: err.code ?? -1, stdout: err.stdout ?? "", stderr: err.stderr ?? "" };
  }
}

/** The pid of the node process serving from the tree on `port` (below unshare/runuser). */
function servePid(port: number): number | null {
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      const environ = fs.readFileSync(`/proc/${entry}/environ`, "utf8").split("\0");
      if (
        cmdline[0] === process.execPath &&
        cmdline.includes(path.join(tree, "tide-console.mjs")) &&
        environ.includes(`PORT=${port}`)
      )
        return Number(entry);
    } catch {
      // gone, or not ours to read
    }
  }
  return null;
}

interface Served {
  child: ChildProcess;
  output: () => string;
  port: number;
}

async function serve(port: number, extra: Record<string, string>): Promise<Served> {
  const [command, argv] = treeCommand(["serve"]);
  const child = spawn(command, argv, {
    env: treeEnv({ PORT: String(port), ...extra }),
    cwd: "/",
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.push(child);
  let output = "";
  child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  await waitFor("the tree's console to say it serves", () => output.includes("tide-console: serving"), {
    timeoutMs: 60_000,
    whileRunning: child,
    detail: () => output,
  });
  return { child, output: () => output, port };
}

async function stop(s: Served): Promise<void> {
  const pid = servePid(s.port);
  const exited = new Promise<void>((resolve) => {
    if (s.child.exitCode !== null || s.child.signalCode !== null) resolve();
    else s.child.once("exit", () => resolve());
  });
  if (pid) process.kill(pid, "SIGTERM");
  await waitFor("the console to exit after SIGTERM", () => servePid(s.port) === null, { timeoutMs: 15_000 });
  try {
    process.kill(-(s.child.pid ?? 0), "SIGKILL"); // runuser/unshare above it, if still there
  } catch {
    // already gone
  }
  await exited;
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  certFingerprint: string | null;
}

/** A request over TLS trusting only our self-signed certificate, or over plain HTTP. */
function request(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; ca?: Buffer } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const lib = u.protocol === "https:" ? https : http;
    const req = lib.request(
      u,
      { method: options.method ?? "GET", headers: options.headers, ca: options.ca, agent: false },
      (res) => {
        let body = "";
        res.on("data", (d: Buffer) => (body += d.toString()));
        res.on("end", () => {
          const socket = res.socket as TLSSocket;
          const peer = typeof socket.getPeerCertificate === "function" ? socket.getPeerCertificate() : null;
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            certFingerprint: peer?.fingerprint256 ?? null,
          });
        });
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

async function signIn(
  base: string,
  email: string,
  password: string,
  headers: Record<string, string>,
  ca?: Buffer,
) {
  return request(`${base}/api/auth/sign-in`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ email, password }),
    ...(ca ? { ca } : {}),
  });
}

const sessionCookie = (r: Reply) =>
  ([] as string[]).concat(r.headers["set-cookie"] ?? []).find((c) => c.startsWith("tide_session="));

async function makeCertificate(cn: string): Promise<void> {
  await run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    keyFile,
    "-out",
    certFile,
    "-days",
    "2",
    "-subj",
    `/CN=${cn}`,
    "-addext",
    "subjectAltName=IP:127.0.0.1,DNS:localhost",
  ]);
  // Readable by the user the tree runs as (a test key; on a host: 0640 root:tide-console).
  fs.chmodSync(keyFile, 0o644);
}

/** A datagram socket standing in for systemd's NOTIFY_SOCKET; what arrives is in messages(). */
function notifyListener(socketPath: string): { child: ChildProcess; messages: () => string } {
  const script = [
    "import socket, sys, os",
    "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)",
    "s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o666)",
    "print('listening', flush=True)",
    // recv() without ancillary data closes any fd passed (systemd-notify's barrier), as systemd does.
    "while True: print(s.recv(4096).decode().replace('\\n', ' '), flush=True)",
  ].join("\n");
  const child = spawn("python3", ["-c", script, socketPath], { stdio: ["ignore", "pipe", "inherit"] });
  started.push(child);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  return { child, messages: () => out };
}

async function schemaDump(url: string): Promise<string> {
  const { stdout } = await run(PG_DUMP, ["--schema-only", "--no-owner", "--no-privileges", url], {
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout
    .split("\n")
    .filter((l) => !/^\\(un)?restrict |^-- Dumped (from|by) /.test(l))
    .join("\n");
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: baseUrl });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  requireBuild();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tide-console-tree-"));
  fs.chmodSync(tmp, 0o755); // the tree's user must reach it
  const assembled = path.join(tmp, "assembled");
  const { stdout } = await run("bash", [path.join(APP_DIR, "scripts/release-tree.sh"), assembled]);
  console.log(stdout.trim());
  // Moved after assembly: nothing in it may name where it was built.
  tree = path.join(tmp, "usr-lib-tide-console");
  fs.renameSync(assembled, tree);
  certFile = path.join(tmp, "console.crt");
  keyFile = path.join(tmp, "console.key");
  await makeCertificate("tide-test-1");
  await admin((c) => c.query(`CREATE DATABASE ${c.escapeIdentifier(database)}`));
  const migrated = await tideConsole(["migrate"]);
  if (migrated.code !== 0)
    throw new Error(`tide-console migrate exited with ${migrated.code}: ${migrated.stderr}`);
  migrateOutput = migrated.stderr;
}, 120_000);

/** A new admin through the tree's create-admin; its password. */
async function newAdmin(email: string): Promise<string> {
  const made = await tideConsole(["create-admin", email]);
  if (made.code !== 0) throw new Error(`create-admin exited with ${made.code}: ${made.stderr}`);
  return made.stdout.trim();
}

afterAll(async () => {
  for (const child of started) {
    try {
      if (child.pid) process.kill(child.exitCode === null ? -child.pid : child.pid, "SIGKILL");
    } catch {
      try {
        child.kill("SIGKILL");
      } catch {
        // gone
      }
    }
  }
  await admin((c) => c.query(`DROP DATABASE IF EXISTS ${c.escapeIdentifier(database)} WITH (FORCE)`));
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe("the console's release tree", () => {
  it("is lean: no source maps, one Prisma runtime, under the size ceiling", async () => {
    const { stdout } = await run("du", ["-s", "--apparent-size", "--block-size=1M", tree]);
    const mb = Number(stdout.split("\t")[0]);
    console.log(`release tree: ${mb} MB`);
    expect(mb).toBeLessThan(TREE_MAX_MB);
    const { stdout: maps } = await run("find", [tree, "-name", "*.map"]);
    expect(maps.trim()).toBe("");
    expect(fs.readdirSync(path.join(tree, "node_modules/@prisma/client/runtime"))).toEqual(["client.js"]);
    for (const f of [
      "tide-console.mjs",
      "tidectl.js",
      "bin/tide-console",
      "prisma/migrations/migration_lock.toml",
    ])
      expect(fs.existsSync(path.join(tree, f)), f).toBe(true);
    expect(fs.existsSync(path.join(tree, "node_modules/prisma")), "the Prisma CLI").toBe(false);
    expect(fs.existsSync(path.join(tree, "node_modules/typescript")), "TypeScript").toBe(false);
  });

  it("runs tidectl", async () => {
    const { stdout } = await run(process.execPath, [path.join(tree, "tidectl.js"), "--help"], { cwd: "/" });
    expect(stdout).toContain("Usage: tidectl");
  });

  it("migrates an empty database to prisma migrate deploy's schema, and again changes nothing", async () => {
    expect(migrateOutput).toMatch(/applied \d+ migration\(s\)/);
    // The integration setup migrated its database with prisma migrate deploy.
    expect(await schemaDump(databaseUrl)).toBe(await schemaDump(baseUrl));
    const again = await tideConsole(["migrate"]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain("the database is up to date");
  }, 60_000);

  it("creates the first admin once, without a demo fleet", async () => {
    const made = await tideConsole(["create-admin", "First@Example.net"]);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout.trim()).toMatch(/^\S{16,}$/);

    const again = await tideConsole(["create-admin", "first@example.net"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("exists");
    expect((await tideConsole(["create-admin", "not-an-email"])).code).toBe(2);

    const counts = await admin(async () => {
      const c = new pg.Client({ connectionString: databaseUrl });
      await c.connect();
      try {
        const r = await c.query<{ users: number; pools: number; audits: number }>(
          `SELECT (SELECT count(*)::int FROM users WHERE email = 'first@example.net' AND role = 'admin') AS users,
                  (SELECT count(*)::int FROM pools) AS pools,
                  (SELECT count(*)::int FROM audit_events a JOIN users u ON u.id = a.target_id
                    WHERE u.email = 'first@example.net' AND a.action = 'user.create'
                      AND a.actor_label = 'tide-console create-admin') AS audits`,
        );
        return r.rows[0];
      } finally {
        await c.end();
      }
    });
    expect(counts).toEqual({ users: 1, pools: 0, audits: 1 });
  }, 60_000);

  it("serves HTTPS: health, HSTS, a Secure cookie, readiness, and a new certificate on SIGHUP", async () => {
    const password = await newAdmin("https@example.net");
    const notifySocket = path.join(tmp, "notify.sock");
    const notify = notifyListener(notifySocket);
    await waitFor("the notify listener", () => notify.messages().includes("listening"), {
      timeoutMs: 10_000,
    });
    const port = await freePort();
    const s = await serve(port, {
      TIDE_TLS_CERT_FILE: certFile,
      TIDE_TLS_KEY_FILE: keyFile,
      NOTIFY_SOCKET: notifySocket,
    });
    try {
      await waitFor("READY=1 on NOTIFY_SOCKET", () => notify.messages().includes("READY=1"), {
        timeoutMs: 10_000,
        detail: () => `${notify.messages()}\n${s.output()}`,
      });
      const base = `https://127.0.0.1:${port}`;
      let ca = fs.readFileSync(certFile);
      const health = await request(`${base}/api/health`, { ca });
      expect(health.status).toBe(200);
      expect(health.headers["strict-transport-security"]).toBe("max-age=31536000");

      // A client cannot talk the console out of the Secure flag when the console is the edge.
      const signedIn = await signIn(base, "https@example.net", password, { "x-forwarded-proto": "http" }, ca);
      expect(signedIn.status, signedIn.body).toBe(200);
      const cookie = sessionCookie(signedIn);
      expect(cookie).toBeDefined();
      expect(cookie).toMatch(/;\s*Secure/i);
      expect(cookie).toMatch(/;\s*HttpOnly/i);

      const page = await request(`${base}/sign-in`, { ca });
      expect(page.status).toBe(200);
      const script = /\/_next\/static\/[^"]+\.js/.exec(page.body)?.[0];
      expect(script).toBeDefined();
      expect((await request(`${base}${script}`, { ca })).status).toBe(200);

      const before = new X509Certificate(ca).fingerprint256;
      expect(health.certFingerprint).toBe(before);
      await makeCertificate("tide-test-2");
      ca = fs.readFileSync(certFile);
      const renewed = new X509Certificate(ca).fingerprint256;
      expect(renewed).not.toBe(before);
      const pid = servePid(port);
      expect(pid).not.toBeNull();
      process.kill(pid ?? 0, "SIGHUP");
      await waitFor(
        "the console to serve the renewed certificate",
        async () => {
          const r = await request(`${base}/api/health`, { ca }).catch(() => null);
          return r?.certFingerprint === renewed;
        },
        { timeoutMs: 10_000, detail: s.output },
      );
      expect(s.output()).toContain("SIGHUP: reloaded");
    } finally {
      await stop(s);
    }
    expect(s.output()).toContain("SIGTERM: closing");
  }, 120_000);

  it("serves plain HTTP for a reverse proxy, trusting its X-Forwarded-Proto", async () => {
    const password = await newAdmin("http@example.net");
    const port = await freePort();
    const s = await serve(port, {});
    try {
      const base = `http://127.0.0.1:${port}`;
      const health = await request(`${base}/api/health`);
      expect(health.status).toBe(200);
      expect(health.headers["strict-transport-security"]).toBeUndefined();
      const direct = sessionCookie(await signIn(base, "http@example.net", password, {}));
      expect(direct).toBeDefined();
      expect(direct).not.toMatch(/;\s*Secure/i);
      const proxied = sessionCookie(
        await signIn(base, "http@example.net", password, { "x-forwarded-proto": "https" }),
      );
      expect(proxied).toMatch(/;\s*Secure/i);
    } finally {
      await stop(s);
    }
  }, 120_000);

  it("exits 2 on a bad configuration", async () => {
    const port = String(await freePort());
    const noCert = await tideConsole(["serve"], {
      PORT: port,
      TIDE_TLS_CERT_FILE: path.join(tmp, "missing.crt"),
      TIDE_TLS_KEY_FILE: keyFile,
    });
    expect(noCert.code, noCert.stderr).toBe(2);
    expect(noCert.stderr).toContain("missing.crt");
    const onlyCert = await tideConsole(["serve"], { PORT: port, TIDE_TLS_CERT_FILE: certFile });
    expect(onlyCert.code, onlyCert.stderr).toBe(2);
    const noDatabase = await tideConsole(["migrate"], { DATABASE_URL: "" });
    expect(noDatabase.code, noDatabase.stderr).toBe(2);
    expect(noDatabase.stderr).toContain("DATABASE_URL");
    expect((await tideConsole(["frobnicate"])).code).toBe(2);
  }, 60_000);
});
