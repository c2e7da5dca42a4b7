/**
 * The TypeScript side of the client driver (assets/client-driver.mjs): a long-running node process
 * in the client namespace, driven over stdin/stdout JSON lines. It holds long-lived TCP connections
 * to the VIP's stream service (each streaming and verifying its echo) and fetches HTTP URLs.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { fileURLToPath } from "node:url";
import readline from "node:readline";
import { z } from "zod";
import { LabError } from "./errors";

export const CLIENT_DRIVER_SCRIPT = fileURLToPath(new URL("../assets/client-driver.mjs", import.meta.url));

export const ConnectionState = z
  .enum(["connecting", "open", "closing", "closed", "error"])
  .describe("connecting: no greeting yet; open: streaming; closed: closed gracefully; error: see error");
export type ConnectionState = z.infer<typeof ConnectionState>;

export const ConnectionReport = z
  .strictObject({
    id: z.int().describe("Connection id in this driver"),
    localPort: z.int().nullable().describe("Client source port, once connected"),
    proxy: z.string().nullable().describe("Proxy that answered (its greeting line), once received"),
    sent: z.int().describe("Bytes sent after the greeting"),
    echoed: z.int().describe("Bytes echoed back and verified byte for byte"),
    state: ConnectionState,
    error: z
      .string()
      .nullable()
      .describe(
        "Socket error code (ECONNRESET, ETIMEDOUT, ...) or the driver's: ECHO_MISMATCH at byte N, " +
          "PEER_CLOSED, NO_GREETING, ECHO_INCOMPLETE, CLOSE_TIMEOUT, DESTROYED",
      ),
    openedMs: z.number().nullable().describe("Connect + greeting time, ms"),
    lastEchoAgoMs: z.number().nullable().describe("Time since the last echoed byte, ms"),
  })
  .describe("One stream connection as the driver sees it");
export type ConnectionReport = z.infer<typeof ConnectionReport>;

export const HttpResult = z
  .strictObject({
    url: z.string(),
    status: z.int().describe("HTTP status, 0 when no response"),
    bytes: z.int().describe("Body bytes received"),
    proxy: z.string().nullable().describe("x-tide-proxy header: the proxy that answered"),
    body: z.string().nullable().describe("The body when at most 4 KiB"),
    error: z.string().nullable().describe("TIMEOUT, a socket error code, or INCOMPLETE; null on success"),
    ms: z.number().describe("Duration, ms"),
  })
  .describe("The outcome of one HTTP GET");
export type HttpResult = z.infer<typeof HttpResult>;

const Connections = z.strictObject({ connections: z.array(ConnectionReport) });

const DriverReply = z.discriminatedUnion("ok", [
  z.strictObject({ id: z.int().nullable(), ok: z.literal(true), result: z.unknown() }),
  z.strictObject({ id: z.int().nullable(), ok: z.literal(false), error: z.string() }),
]);

export interface OpenOptions {
  /** Default: the lab's VIP and stream port. */
  host?: string;
  port?: number;
  /** Bytes per write (default 1024). */
  chunkBytes?: number;
  /** Interval between writes, ms (default 50). */
  intervalMs?: number;
  /** Time to connect and receive the greeting, ms (default 5000). */
  connectTimeoutMs?: number;
}

export interface CloseOptions {
  /** Default: every connection. */
  ids?: number[];
  /** Time for the echo to catch up and both FINs, ms (default 10000). */
  timeoutMs?: number;
}

/** Aggregates of a set of connection reports: what scenarios usually assert. */
export interface ConnectionSummary {
  total: number;
  byState: Partial<Record<ConnectionState, number>>;
  byProxy: Record<string, number>;
  errors: Record<string, number>;
  sent: number;
  echoed: number;
}

export function summarizeConnections(reports: readonly ConnectionReport[]): ConnectionSummary {
  const s: ConnectionSummary = {
    total: reports.length,
    byState: {},
    byProxy: {},
    errors: {},
    sent: 0,
    echoed: 0,
  };
  for (const r of reports) {
    s.byState[r.state] = (s.byState[r.state] ?? 0) + 1;
    if (r.proxy) s.byProxy[r.proxy] = (s.byProxy[r.proxy] ?? 0) + 1;
    if (r.error) s.errors[r.error] = (s.errors[r.error] ?? 0) + 1;
    s.sent += r.sent;
    s.echoed += r.echoed;
  }
  return s;
}

export class ClientDriver {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly defaults: { host: string; port: number; httpBase: string };
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private exited = false;
  private stderr = "";
  private readonly ready: Promise<void>;

  /** Use Lab.clientDriver(); this starts `argv` (ip netns exec <client> node client-driver.mjs). */
  constructor(argv: readonly string[], defaults: { host: string; port: number; httpBase: string }) {
    const [file, ...args] = argv;
    if (!file) throw new LabError("bad_argument", "empty client driver command");
    this.defaults = defaults;
    this.child = spawn(file, args, { stdio: ["pipe", "pipe", "pipe"] });
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (d: string) => {
      this.stderr = (this.stderr + d).slice(-4000);
    });
    let markReady: () => void = () => {};
    let markFailed: (e: Error) => void = () => {};
    this.ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      markFailed = reject;
    });
    const lines = readline.createInterface({ input: this.child.stdout });
    lines.on("line", (line) => {
      const parsed = DriverReply.safeParse(safeJson(line));
      if (!parsed.success) return;
      const reply = parsed.data;
      if (reply.id === null) {
        if (reply.ok) markReady();
        return;
      }
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      if (reply.ok) waiter.resolve(reply.result);
      else waiter.reject(new LabError("control_error", `client driver: ${reply.error}`));
    });
    this.child.on("exit", (code, sig) => {
      this.exited = true;
      const e = new LabError(
        "process_exited",
        `client driver exited (${code ?? sig}): ${this.stderr.trim()}`,
      );
      markFailed(e);
      for (const w of this.pending.values()) w.reject(e);
      this.pending.clear();
    });
    this.child.on("error", (err) =>
      markFailed(new LabError("process_exited", `client driver: ${err.message}`)),
    );
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Resolves once the driver runs (it prints a ready line). */
  async started(timeoutMs = 10_000): Promise<this> {
    await withTimeout(this.ready, timeoutMs, "client driver did not start");
    return this;
  }

  private async request(cmd: string, args: Record<string, unknown>, timeoutMs: number): Promise<unknown> {
    await this.started();
    if (this.exited) throw new LabError("process_exited", "client driver is not running");
    const id = this.nextId++;
    const reply = new Promise<unknown>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.child.stdin.write(`${JSON.stringify({ id, cmd, ...args })}\n`);
    try {
      return await withTimeout(reply, timeoutMs, `client driver ${cmd}: no reply`);
    } finally {
      this.pending.delete(id);
    }
  }

  /**
   * Opens `count` stream connections and resolves when each is open (greeting received) or failed.
   * They keep streaming (chunkBytes every intervalMs) until closed.
   */
  async open(count: number, options: OpenOptions = {}): Promise<ConnectionReport[]> {
    const connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
    const result = await this.request(
      "open",
      {
        host: options.host ?? this.defaults.host,
        port: options.port ?? this.defaults.port,
        count,
        chunkBytes: options.chunkBytes ?? 1024,
        intervalMs: options.intervalMs ?? 50,
        connectTimeoutMs,
      },
      connectTimeoutMs + 15_000,
    );
    return Connections.parse(result).connections;
  }

  /** Current reports (default: every connection not yet closed through close/destroy). */
  async report(ids?: number[]): Promise<ConnectionReport[]> {
    return Connections.parse(await this.request("report", ids ? { ids } : {}, 10_000)).connections;
  }

  /** Stops sending, waits for the echo to catch up, closes gracefully; returns the final reports. */
  async close(options: CloseOptions = {}): Promise<ConnectionReport[]> {
    const timeoutMs = options.timeoutMs ?? 10_000;
    const args: Record<string, unknown> = { timeoutMs };
    if (options.ids) args.ids = options.ids;
    return Connections.parse(await this.request("close", args, timeoutMs + 10_000)).connections;
  }

  /** Aborts connections at once (no FIN exchange). */
  async destroy(ids?: number[]): Promise<ConnectionReport[]> {
    return Connections.parse(await this.request("destroy", ids ? { ids } : {}, 10_000)).connections;
  }

  /**
   * GET a URL from the client; a path ("/bytes/5000") is relative to http://<VIP>/. Never throws
   * for network errors: they are in the result's error.
   */
  async http(urlOrPath: string, options: { timeoutMs?: number } = {}): Promise<HttpResult> {
    const url = urlOrPath.startsWith("/") ? `${this.defaults.httpBase}${urlOrPath}` : urlOrPath;
    const timeoutMs = options.timeoutMs ?? 5_000;
    return HttpResult.parse(await this.request("http", { url, timeoutMs }, timeoutMs + 10_000));
  }

  /** Ends the driver (closing its stdin makes it destroy its sockets and exit). */
  async stop(timeoutMs = 5_000): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    this.child.stdin.end();
    const t = setTimeout(() => this.child.kill("SIGKILL"), timeoutMs);
    await exited;
    clearTimeout(t);
  }
}

function safeJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return null;
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new LabError("timeout", `${what} within ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
