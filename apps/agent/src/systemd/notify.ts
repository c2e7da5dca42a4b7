import { spawn } from "node:child_process";

/**
 * sd_notify for a Type=notify unit, through systemd's own `systemd-notify` (a child process): Node
 * cannot send the unix datagram NOTIFY_SOCKET takes (node:dgram has no AF_UNIX, node:net has no
 * SOCK_DGRAM), and a native module or a hand-written datagram would be a second implementation of
 * what systemd ships.
 *
 * A short-lived sender has a race: the manager may read the message after the sender exited and
 * then cannot tell which unit it came from. systemd-notify (systemd >= 246, NEWS "sd_notify_barrier")
 * sends the message, then waits up to 5 s until the manager has processed it (a barrier) unless
 * --no-block; running as root it also sends it with the invoking process's pid, i.e. the agent's own
 * (the unit's main pid). Debian 12 has systemd 252, Debian 13 257. The unit says NotifyAccess=all
 * all the same, so a message credited to the child is accepted too.
 *
 * Messages go out one at a time, in order; a status-only message waiting behind another is replaced
 * by a newer one (only the latest status matters). Without NOTIFY_SOCKET (not under systemd)
 * nothing is sent.
 */

/** How long one systemd-notify may take before it is killed, ms (its own barrier waits up to 5 s). */
export const NOTIFY_TIMEOUT_MS = 7_000;

export interface NotifyOptions {
  /** $NOTIFY_SOCKET; unset = not under a Type=notify unit: nothing is sent. */
  socket: string | undefined;
  /** The notify command (tests give a fake one); default "systemd-notify" from PATH. */
  command?: string;
  log: (line: string) => void;
}

/** One sd_notify message: variable -> value (READY=1, STATUS=…). */
type Message = Record<string, string>;

/** STATUS= is one line: systemd shows it in `systemctl status` ("Status: …"). */
function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, " ").slice(0, 400);
}

export class SystemdNotify {
  readonly enabled: boolean;
  private readonly command: string;
  private queue: Message[] = [];
  private running: Promise<void> | null = null;
  private broken = false;

  constructor(private readonly o: NotifyOptions) {
    this.enabled = o.socket !== undefined && o.socket !== "";
    this.command = o.command ?? "systemd-notify";
  }

  /** Start-up (or a reload) is complete. */
  ready(status: string): Promise<void> {
    return this.send({ READY: "1", STATUS: oneLine(status) });
  }

  /** What the agent is doing now (no state change). */
  status(status: string): Promise<void> {
    return this.send({ STATUS: oneLine(status) });
  }

  /**
   * A reload begins; READY=1 ends it. MONOTONIC_USEC (CLOCK_MONOTONIC, µs: what process.hrtime reads
   * on Linux) is required with RELOADING=1 by Type=notify-reload (systemd >= 253) and harmless before.
   */
  reloading(status: string): Promise<void> {
    const usec = process.hrtime.bigint() / 1000n;
    return this.send({ RELOADING: "1", MONOTONIC_USEC: String(usec), STATUS: oneLine(status) });
  }

  /** The agent is stopping (SIGTERM). */
  stopping(status: string): Promise<void> {
    return this.send({ STOPPING: "1", STATUS: oneLine(status) });
  }

  /** Resolves once every message queued so far was handed to systemd-notify (and it exited). */
  async idle(): Promise<void> {
    while (this.running !== null) await this.running;
  }

  private send(message: Message): Promise<void> {
    if (!this.enabled || this.broken) return Promise.resolve();
    const statusOnly = Object.keys(message).length === 1 && "STATUS" in message;
    const last = this.queue[this.queue.length - 1];
    if (statusOnly && last !== undefined && Object.keys(last).length === 1 && "STATUS" in last)
      this.queue[this.queue.length - 1] = message;
    else this.queue.push(message);
    if (this.running === null) {
      this.running = this.drain().finally(() => {
        this.running = null;
      });
    }
    return this.idle();
  }

  private async drain(): Promise<void> {
    for (let m = this.queue.shift(); m !== undefined; m = this.queue.shift()) {
      const args = Object.entries(m).map(([k, v]) => `${k}=${v}`);
      const error = await this.run(args);
      if (error !== null) {
        this.o.log(`systemd notify (${args.join(" ")}): ${error}`);
        if (error.includes("ENOENT")) {
          // No systemd-notify on this host: say it once, then stop trying.
          this.broken = true;
          this.queue = [];
        }
      }
    }
  }

  /** Runs the command; null when it exited 0, else what went wrong. */
  private run(args: string[]): Promise<string | null> {
    return new Promise((resolve) => {
      let stderr = "";
      const child = spawn(this.command, args, {
        stdio: ["ignore", "ignore", "pipe"],
        // What systemd-notify reads: the socket; nothing else of the agent's environment.
        env: { NOTIFY_SOCKET: this.o.socket, PATH: "/usr/sbin:/usr/bin:/sbin:/bin", LC_ALL: "C" },
      });
      const timer = setTimeout(() => child.kill("SIGKILL"), NOTIFY_TIMEOUT_MS);
      child.stderr.setEncoding("utf8");
      child.stderr.on("data", (c: string) => {
        if (stderr.length < 500) stderr += c;
      });
      child.on("error", (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        resolve(`${this.command}: ${err.code ?? err.message}`);
      });
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        if (code === 0) resolve(null);
        else resolve(`${this.command} exited ${signal ?? code}${stderr.trim() ? `: ${stderr.trim()}` : ""}`);
      });
    });
  }
}
