import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";

/** How long one helper command may take before the helper is killed and restarted, in ms. */
export const HELPER_TIMEOUT_MS = 5_000;

/**
 * One long-lived `/bin/sh` inside a network namespace (`nsenter --net=PATH /bin/sh`, or a plain
 * shell for the agent's own namespace). Each sampling tick writes a script to its stdin that ends
 * by echoing a unique marker line; the output up to the marker is the reply. Shell builtins (read)
 * fetch sysctls without forking, so one tick costs one fork (ss) per namespace.
 */
export class NamespaceHelper {
  private child: ChildProcessWithoutNullStreams | null = null;
  private buffer = "";
  private seq = 0;
  private pending: {
    marker: string;
    resolve: (text: string) => void;
    reject: (err: Error) => void;
    timer: NodeJS.Timeout;
  } | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly path: string | null,
    private readonly nsenter = "nsenter",
  ) {}

  /** Pid of the shell (in the namespace), or null when not running. */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  private start(): ChildProcessWithoutNullStreams {
    const args = this.path === null ? ["/bin/sh", []] : [this.nsenter, [`--net=${this.path}`, "/bin/sh"]];
    const child = spawn(args[0] as string, args[1] as string[], {
      stdio: ["pipe", "pipe", "pipe"],
      env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", LC_ALL: "C" },
    });
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => this.onData(chunk));
    child.stderr.resume(); // drain; diagnostics of failed reads are not interesting
    child.stdin.on("error", () => undefined);
    child.on("error", (err) => this.fail(err));
    child.on("exit", (code, signal) => {
      if (this.child === child) this.child = null;
      this.fail(new Error(`namespace helper exited (${signal ?? code ?? "?"})`));
    });
    this.child = child;
    this.buffer = "";
    return child;
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    const p = this.pending;
    if (p === null) return;
    const at = this.buffer.indexOf(p.marker + "\n");
    if (at < 0) return;
    const text = this.buffer.slice(0, at);
    this.buffer = this.buffer.slice(at + p.marker.length + 1);
    this.pending = null;
    clearTimeout(p.timer);
    p.resolve(text);
  }

  private fail(err: Error): void {
    const p = this.pending;
    if (p === null) return;
    this.pending = null;
    clearTimeout(p.timer);
    p.reject(err);
  }

  /** Run a script in the namespace; resolves with everything it printed on stdout. */
  run(script: string, timeoutMs = HELPER_TIMEOUT_MS): Promise<string> {
    const next = this.queue.then(() => this.runNow(script, timeoutMs));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private runNow(script: string, timeoutMs: number): Promise<string> {
    const child = this.child ?? this.start();
    const marker = `__TIDE_END_${process.pid}_${++this.seq}__`;
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(new Error(`namespace helper timed out after ${timeoutMs} ms`));
        this.stop();
      }, timeoutMs);
      this.pending = { marker, resolve, reject, timer };
      child.stdin.write(`${script}\necho ${marker}\n`);
    });
  }

  /** Kill the shell (a later run() starts a new one). */
  stop(): void {
    const child = this.child;
    this.child = null;
    if (child !== null) {
      child.stdin.end();
      child.kill("SIGKILL");
    }
  }
}
