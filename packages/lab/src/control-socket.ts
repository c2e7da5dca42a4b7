/**
 * A newline-delimited JSON client for a UNIX stream socket (tide-director's and tide-redirect's
 * control sockets): one request per line, replies in request order, many requests per connection.
 * It connects on first use and reconnects after the peer closed (a restarted daemon).
 */
import net from "node:net";
import { LabError } from "./errors";
import { labWaitFor } from "./lab-wait";

/** Time limit of one request, in milliseconds (load_table of a big file takes tens of ms). */
export const CONTROL_TIMEOUT_MS = 10_000;

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

export class ControlSocket {
  readonly path: string;
  private socket: net.Socket | null = null;
  private connecting: Promise<net.Socket> | null = null;
  private buffer = "";
  private pending: Pending[] = [];

  constructor(path: string) {
    this.path = path;
  }

  /** Sends one request object; resolves with the parsed reply line (not validated here). */
  async request(message: Record<string, unknown>, timeoutMs = CONTROL_TIMEOUT_MS): Promise<unknown> {
    const socket = await this.connect(timeoutMs);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        // Replies are ordered: after a lost reply the stream cannot be trusted.
        this.fail(new LabError("timeout", `${this.path}: no reply within ${timeoutMs} ms`, { message }));
      }, timeoutMs);
      this.pending.push({ resolve, reject, timer });
      socket.write(`${JSON.stringify(message)}\n`);
    });
  }

  close(): void {
    this.fail(new LabError("not_running", `${this.path}: closed`));
  }

  private connect(timeoutMs: number): Promise<net.Socket> {
    if (this.socket) return Promise.resolve(this.socket);
    if (this.connecting) return this.connecting;
    this.connecting = new Promise<net.Socket>((resolve, reject) => {
      const socket = net.createConnection(this.path);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new LabError("timeout", `${this.path}: no connection within ${timeoutMs} ms`));
      }, timeoutMs);
      socket.setEncoding("utf8");
      socket.once("connect", () => {
        clearTimeout(timer);
        this.socket = socket;
        resolve(socket);
      });
      socket.once("error", (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        const code = err.code === "ENOENT" || err.code === "ECONNREFUSED" ? "not_running" : "control_error";
        const error = new LabError(code, `${this.path}: ${err.message}`);
        if (this.socket === socket) this.fail(error);
        reject(error);
      });
      socket.on("data", (chunk: string) => this.onData(chunk));
      socket.on("close", () => {
        if (this.socket === socket) this.fail(new LabError("not_running", `${this.path}: connection closed`));
      });
    }).finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf("\n")) >= 0) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      if (line.trim() === "") continue;
      const waiter = this.pending.shift();
      if (!waiter) continue;
      clearTimeout(waiter.timer);
      try {
        waiter.resolve(JSON.parse(line));
      } catch {
        waiter.reject(
          new LabError("control_error", `${this.path}: reply is not JSON: ${line.slice(0, 200)}`),
        );
      }
    }
  }

  private fail(error: Error): void {
    const socket = this.socket;
    this.socket = null;
    this.buffer = "";
    socket?.destroy();
    for (const p of this.pending.splice(0)) {
      clearTimeout(p.timer);
      p.reject(error);
    }
  }
}

/** Waits until something accepts connections on a UNIX socket path, or the deadline passes. */
export async function waitForSocket(
  path: string,
  timeoutMs: number,
  stillRunning: () => boolean,
): Promise<void> {
  await labWaitFor(
    `${path} to accept connections`,
    async () => {
      if (await accepts(path)) return true;
      if (!stillRunning()) throw new LabError("process_exited", `the process behind ${path} exited`);
      return false;
    },
    { timeoutMs, intervalMs: 50 },
  );
}

/** Whether a connection to the UNIX socket path succeeds (it is closed at once). */
function accepts(path: string): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const s = net.createConnection(path);
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}
