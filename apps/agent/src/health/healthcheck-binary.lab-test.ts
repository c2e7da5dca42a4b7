/**
 * tide-healthcheck against real namespaces (root): a checker namespace (where a director would be)
 * and a proxy namespace joined by a veth, the real tide-redirect on the proxy's veth and a small
 * HTTP server behind it. gue, tcp and http pass; without tide-redirect the gue check times out
 * while http still passes (so it proves the GUE path, not just reachability); without the server
 * tcp and http are refused; bad lines get ok:false results and the process goes on; EOF waits for
 * running checks. Every line written is checked against the contract (@tide/contracts).
 *
 * Binaries: TIDE_HEALTHCHECK_BINARY or dataplane/build/tide-healthcheck, TIDE_REDIRECT_BINARY or
 * dataplane/build/tide-redirect (`make -C dataplane build/tide-healthcheck build/tide-redirect`);
 * missing = failure. `make -C dataplane test-healthcheck` runs this against the plain and the
 * ASan/UBSan build.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, existsSync, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { GUE_PORT, HealthcheckReady, HealthcheckResult, type HealthcheckRequest } from "@tide/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "@tide/devstack";

const DATAPLANE_BUILD = path.resolve(__dirname, "../../../../dataplane/build");
const BINARY = process.env.TIDE_HEALTHCHECK_BINARY ?? path.join(DATAPLANE_BUILD, "tide-healthcheck");
const REDIRECT_BINARY = process.env.TIDE_REDIRECT_BINARY ?? path.join(DATAPLANE_BUILD, "tide-redirect");

// Everything this test creates carries its pid, so parallel runs and leftovers never collide.
const PREFIX = `tide-hc-${process.pid}`;
const CHECKER_NS = `${PREFIX}-chk`;
const PROXY_NS = `${PREFIX}-prx`;
const CHECKER_IF = `thc${process.pid}c`; // interface names: at most 15 characters
const PROXY_IF = `thc${process.pid}p`;
const CHECKER_ADDR = "10.231.0.1";
const PROXY_ADDR = "10.231.0.2";
const ABSENT_ADDR = "10.231.0.3"; // on the link, nobody answers ARP
const HTTP_PORT = 18080;
const STOP_TIMEOUT_MS = 5_000;
const START_TIMEOUT_MS = 10_000;

let workDir = "";
let redirect: ChildProcess | null = null;
let server: ChildProcess | null = null;
const checkers: Checker[] = [];

const ip = (...args: string[]): string =>
  execFileSync("ip", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
const ourNamespaces = (): string[] =>
  ip("netns", "list")
    .split("\n")
    .map((l) => l.split(" ")[0] ?? "")
    .filter((n) => n.startsWith(PREFIX));
const redirectSocket = () => path.join(workDir, "redirect.sock");

/** One tide-healthcheck in the checker namespace; every line it writes is checked against the contract. */
class Checker {
  readonly child: ChildProcess;
  readonly ready: Promise<HealthcheckReady>;
  readonly exited: Promise<number | null>;
  /** Lines that are not a HealthcheckResult (after the ready line): must stay empty. */
  readonly badLines: string[] = [];
  private readonly waiting = new Map<number, ((r: HealthcheckResult) => void)[]>();
  private nextId = 1;

  constructor() {
    this.child = spawn(BINARY, ["--netns", CHECKER_NS], { stdio: ["pipe", "pipe", "inherit"] });
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
    this.child.stdin!.on("error", () => {}); // EPIPE after a crash: the exit status tells
    const lines = createInterface({ input: this.child.stdout! });
    let onReady: (r: HealthcheckReady) => void = () => {};
    let first = true;
    this.ready = new Promise((resolve) => (onReady = resolve));
    lines.on("line", (line) => {
      if (first) {
        first = false;
        onReady(HealthcheckReady.parse(JSON.parse(line)));
        return;
      }
      const parsed = HealthcheckResult.safeParse(JSON.parse(line));
      if (!parsed.success) {
        this.badLines.push(line);
        return;
      }
      this.waiting.get(parsed.data.id)?.shift()?.(parsed.data);
    });
    checkers.push(this);
  }

  /** Writes a raw line; resolves with the result carrying `id` (0 for an unreadable line). */
  send(line: string, id: number): Promise<HealthcheckResult> {
    const result = new Promise<HealthcheckResult>((resolve) => {
      const queue = this.waiting.get(id) ?? [];
      queue.push(resolve);
      this.waiting.set(id, queue);
    });
    this.child.stdin!.write(`${line}\n`);
    return result;
  }

  check(req: Omit<HealthcheckRequest, "id">): Promise<HealthcheckResult> {
    const id = this.nextId++;
    return this.send(JSON.stringify({ id, ...req } satisfies HealthcheckRequest), id);
  }

  /** EOF on stdin; resolves with the exit status. */
  async end(): Promise<number | null> {
    this.child.stdin!.end();
    return this.exited;
  }
}

async function stop(child: ChildProcess | null): Promise<void> {
  if (child === null || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM"); // tide-redirect detaches its BPF program on SIGTERM
  const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

async function redirectUp(): Promise<void> {
  if (redirect !== null && redirect.exitCode === null) return;
  rmSync(redirectSocket(), { force: true });
  const argv = ["--iface", PROXY_IF, "--netns", PROXY_NS, "--local", PROXY_ADDR];
  redirect = spawn(REDIRECT_BINARY, [...argv, "--port", String(GUE_PORT), "--socket", redirectSocket()], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  const r = redirect;
  await waitFor("tide-redirect to be ready", () => existsSync(redirectSocket()), {
    timeoutMs: START_TIMEOUT_MS,
    intervalMs: 25,
    whileRunning: r,
  });
}

async function redirectDown(): Promise<void> {
  await stop(redirect);
  redirect = null;
}

/** tide-redirect's accepted_icmp counter, over its control socket. */
async function acceptedIcmp(): Promise<number> {
  const line = await new Promise<string>((resolve, reject) => {
    const sock = net.createConnection(redirectSocket());
    let buf = "";
    sock.on("data", (d) => {
      buf += d.toString();
      const nl = buf.indexOf("\n");
      if (nl >= 0) {
        sock.end();
        resolve(buf.slice(0, nl));
      }
    });
    sock.on("error", reject);
    sock.write(`${JSON.stringify({ id: 1, cmd: "stats" })}\n`);
  });
  const reply = JSON.parse(line) as { ok: boolean; result?: { counters: { accepted_icmp: number } } };
  if (!reply.ok || reply.result === undefined) throw new Error(`tide-redirect stats: ${line}`);
  return reply.result.counters.accepted_icmp;
}

async function serverUp(): Promise<void> {
  if (server !== null && server.exitCode === null) return;
  const s = spawn(
    "ip",
    [
      "netns",
      "exec",
      PROXY_NS,
      "python3",
      "-u",
      "-m",
      "http.server",
      String(HTTP_PORT),
      "--bind",
      PROXY_ADDR,
    ],
    { cwd: workDir, stdio: ["ignore", "pipe", "ignore"] },
  );
  server = s;
  let out = "";
  s.stdout!.on("data", (d) => (out += d.toString()));
  await waitFor("http server to be ready", () => out.includes("Serving HTTP"), {
    timeoutMs: START_TIMEOUT_MS,
    intervalMs: 25,
    whileRunning: s,
  });
}

async function serverDown(): Promise<void> {
  await stop(server);
  server = null;
}

async function cleanUp(): Promise<void> {
  for (const c of checkers) c.child.kill("SIGKILL");
  await redirectDown();
  await serverDown();
  for (const n of [CHECKER_NS, PROXY_NS]) {
    try {
      ip("netns", "del", n);
    } catch {
      // not created, or already gone
    }
  }
  if (workDir !== "") rmSync(workDir, { recursive: true, force: true });
}

beforeAll(async () => {
  accessSync(BINARY, constants.X_OK); // throws: build it first
  accessSync(REDIRECT_BINARY, constants.X_OK);
  expect(ourNamespaces()).toEqual([]);
  try {
    workDir = mkdtempSync(path.join(os.tmpdir(), `${PREFIX}-`));
    for (const n of [CHECKER_NS, PROXY_NS]) {
      ip("netns", "add", n);
      ip("-n", n, "link", "set", "lo", "up");
    }
    ip(
      "link",
      "add",
      CHECKER_IF,
      "netns",
      CHECKER_NS,
      "type",
      "veth",
      "peer",
      "name",
      PROXY_IF,
      "netns",
      PROXY_NS,
    );
    ip("-n", CHECKER_NS, "addr", "add", `${CHECKER_ADDR}/24`, "dev", CHECKER_IF);
    ip("-n", PROXY_NS, "addr", "add", `${PROXY_ADDR}/24`, "dev", PROXY_IF);
    ip("-n", CHECKER_NS, "link", "set", CHECKER_IF, "up");
    ip("-n", PROXY_NS, "link", "set", PROXY_IF, "up");
  } catch (e) {
    await cleanUp();
    throw e;
  }
});

afterAll(async () => {
  await cleanUp();
  expect(ourNamespaces()).toEqual([]);
});

describe("tide-healthcheck", () => {
  it("says ready with its namespace, then passes gue (through tide-redirect), tcp and http", async () => {
    await redirectUp();
    await serverUp();
    const checker = new Checker();
    expect(await checker.ready).toEqual({ ready: true, version: expect.any(String), netns: CHECKER_NS });
    const icmpBefore = await acceptedIcmp();
    const [gue, tcp, http, http204] = await Promise.all([
      checker.check({ kind: "gue", target: PROXY_ADDR, port: GUE_PORT, timeoutMs: 2000 }),
      checker.check({ kind: "tcp", target: PROXY_ADDR, port: HTTP_PORT, timeoutMs: 2000 }),
      checker.check({
        kind: "http",
        target: PROXY_ADDR,
        port: HTTP_PORT,
        path: "/",
        expectStatus: 200,
        timeoutMs: 2000,
      }),
      checker.check({
        kind: "http",
        target: PROXY_ADDR,
        port: HTTP_PORT,
        path: "/",
        expectStatus: 204,
        timeoutMs: 2000,
      }),
    ]);
    expect(gue).toEqual({ id: 1, ok: true, latencyUs: expect.any(Number), detail: "echo reply" });
    expect(tcp).toEqual({ id: 2, ok: true, latencyUs: expect.any(Number), detail: "connected" });
    expect(http).toEqual({ id: 3, ok: true, latencyUs: expect.any(Number), detail: "HTTP 200" });
    expect(http204).toEqual({
      id: 4,
      ok: false,
      latencyUs: expect.any(Number),
      detail: "HTTP 200 (expected 204)",
    });
    // The echo request went through tide-redirect's decapsulation, not around it.
    expect(await acceptedIcmp()).toBeGreaterThan(icmpBefore);
    console.log(
      `latency: gue ${gue.latencyUs} µs, tcp ${tcp.latencyUs} µs, http ${http.latencyUs} µs, ` +
        `http(204) ${http204.latencyUs} µs`,
    );
    expect(await checker.end()).toBe(0);
    expect(checker.badLines).toEqual([]);
  });

  it("times the gue check out without tide-redirect while http still passes, and recovers", async () => {
    await serverUp();
    await redirectDown();
    const checker = new Checker();
    await checker.ready;
    const started = Date.now();
    const [gue, http] = await Promise.all([
      checker.check({ kind: "gue", target: PROXY_ADDR, port: GUE_PORT, timeoutMs: 500 }),
      checker.check({
        kind: "http",
        target: PROXY_ADDR,
        port: HTTP_PORT,
        path: "/",
        expectStatus: 200,
        timeoutMs: 2000,
      }),
    ]);
    const waitedMs = Date.now() - started;
    // Without a GUE decapsulator the proxy's UDP may answer "port unreachable" (ICMP rate limit
    // permitting); the check still waits for the echo and says why it might not come.
    expect(gue).toEqual({
      id: 1,
      ok: false,
      latencyUs: null,
      detail: expect.stringMatching(/^timeout after 500 ms( \(GUE port: connection refused\))?$/),
    });
    expect(http).toMatchObject({ id: 2, ok: true, detail: "HTTP 200" });
    console.log(`gue without tide-redirect: "${gue.detail}" after ${waitedMs} ms`);

    await redirectUp();
    const again = await checker.check({ kind: "gue", target: PROXY_ADDR, port: GUE_PORT, timeoutMs: 2000 });
    expect(again).toMatchObject({ id: 3, ok: true, detail: "echo reply" });
    expect(await checker.end()).toBe(0);
    expect(checker.badLines).toEqual([]);
  });

  it("reports connection refused for tcp and http when the server is gone", async () => {
    await redirectUp();
    await serverDown();
    const checker = new Checker();
    await checker.ready;
    const [tcp, http, gue] = await Promise.all([
      checker.check({ kind: "tcp", target: PROXY_ADDR, port: HTTP_PORT, timeoutMs: 2000 }),
      checker.check({
        kind: "http",
        target: PROXY_ADDR,
        port: HTTP_PORT,
        path: "/",
        expectStatus: 200,
        timeoutMs: 2000,
      }),
      checker.check({ kind: "gue", target: PROXY_ADDR, port: GUE_PORT, timeoutMs: 2000 }),
    ]);
    // A refusal is the proxy's answer: it has a latency.
    expect(tcp).toEqual({ id: 1, ok: false, latencyUs: expect.any(Number), detail: "connection refused" });
    expect(http).toEqual({ id: 2, ok: false, latencyUs: expect.any(Number), detail: "connection refused" });
    expect(gue).toMatchObject({ id: 3, ok: true, detail: "echo reply" }); // the host is still up
    expect(await checker.end()).toBe(0);
    expect(checker.badLines).toEqual([]);
  });

  it("runs a thousand gue checks at once and answers each exactly once", async () => {
    await redirectUp();
    const checker = new Checker();
    await checker.ready;
    const started = Date.now();
    // The ICMP receiver matches replies by sequence number; the results share one stdout.
    const results = await Promise.all(
      Array.from({ length: 1000 }, () =>
        checker.check({ kind: "gue", target: PROXY_ADDR, port: GUE_PORT, timeoutMs: 5000 }),
      ),
    );
    expect(new Set(results.map((r) => r.id)).size).toBe(1000);
    expect(results.filter((r) => !r.ok)).toEqual([]);
    const latencies = results.map((r) => r.latencyUs!).sort((a, b) => a - b);
    console.log(
      `1000 gue checks in ${Date.now() - started} ms: latency p50 ${latencies[500]} µs, ` +
        `p99 ${latencies[990]} µs, max ${latencies[999]} µs`,
    );
    expect(await checker.end()).toBe(0);
    expect(checker.badLines).toEqual([]);
  });

  it("answers bad lines with ok:false and keeps serving", async () => {
    await serverUp();
    const checker = new Checker();
    await checker.ready;
    const garbage = await checker.send("garbage", 0);
    expect(garbage).toEqual({
      id: 0,
      ok: false,
      latencyUs: null,
      detail: expect.stringMatching(/^invalid JSON/),
    });
    expect(await checker.send("[1]", 0)).toMatchObject({ id: 0, ok: false, latencyUs: null });
    expect(await checker.send("x".repeat(5000), 0)).toMatchObject({
      id: 0,
      ok: false,
      detail: "invalid request: line longer than 4096 bytes",
    });
    // A readable id is echoed with the reason.
    const bad = [
      { id: 11, kind: "icmp", target: PROXY_ADDR, port: 1, timeoutMs: 100 },
      { id: 12, kind: "tcp", target: "10.231.0.256", port: 1, timeoutMs: 100 },
      { id: 13, kind: "tcp", target: PROXY_ADDR, port: 0, timeoutMs: 100 },
      { id: 14, kind: "tcp", target: PROXY_ADDR, port: 1, timeoutMs: 5 },
      { id: 15, kind: "http", target: PROXY_ADDR, port: 1, path: "no-slash", timeoutMs: 100 },
      { id: 16, kind: "tcp", target: PROXY_ADDR, port: 1, timeoutMs: 100, extra: true },
    ];
    for (const req of bad) {
      const r = await checker.send(JSON.stringify(req), req.id);
      expect(r).toMatchObject({
        id: req.id,
        ok: false,
        latencyUs: null,
        detail: expect.stringMatching(/^invalid/),
      });
    }
    // Still serving.
    expect(
      await checker.check({ kind: "tcp", target: PROXY_ADDR, port: HTTP_PORT, timeoutMs: 2000 }),
    ).toMatchObject({
      ok: true,
      detail: "connected",
    });
    expect(await checker.end()).toBe(0);
    expect(checker.badLines).toEqual([]);
  });

  it("finishes running checks on EOF, each within its timeout", async () => {
    const checker = new Checker();
    await checker.ready;
    const started = Date.now();
    // Nobody answers ARP for ABSENT_ADDR: the connect hangs until the check's deadline.
    const pending = checker.check({ kind: "tcp", target: ABSENT_ADDR, port: HTTP_PORT, timeoutMs: 400 });
    const status = await checker.end();
    expect(await pending).toEqual({ id: 1, ok: false, latencyUs: null, detail: "timeout after 400 ms" });
    expect(status).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(checker.badLines).toEqual([]);
  });
});
