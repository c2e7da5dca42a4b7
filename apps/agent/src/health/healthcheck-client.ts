import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import {
  HealthcheckResult,
  type HealthcheckRequest,
  type HealthcheckResult as Result,
} from "@tide/contracts";

const RESTART_MIN_MS = 1_000;
const RESTART_MAX_MS = 30_000;
/** A check's answer may lag its own timeout this much (scheduling) before the client gives up. */
const ANSWER_GRACE_MS = 2_000;

/**
 * The one tide-healthcheck process of a director host's agent (dataplane/healthcheck), in the
 * director's namespace (--netns): started on the first check, restarted with a doubling pause when
 * it dies. A check whose process died, or that is not answered in its timeout plus a grace, is a
 * failed check with the reason: the checker never hangs on its helper.
 */
export class HealthcheckClient {
  private child: ChildProcessWithoutNullStreams | null = null;
  private buffer = "";
  private seq = 0;
  private readonly pending = new Map<number, { resolve: (r: Result) => void; timer: NodeJS.Timeout }>();
  private restartAt = 0;
  private restartDelayMs = RESTART_MIN_MS;
  private stopped = false;
  private stderrTail = "";
  lastError: string | null = null;

  constructor(
    readonly binary: string,
    readonly netns: string | null,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  private start(): ChildProcessWithoutNullStreams {
    const args = this.netns === null ? [] : ["--netns", this.netns];
    const child = spawn(this.binary, args, { stdio: ["pipe", "pipe", "pipe"], env: { LC_ALL: "C" } });
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => this.onData(chunk));
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-500);
    });
    child.stdin.on("error", () => undefined);
    child.on("error", (err) => this.onExit(child, `tide-healthcheck: ${err.message}`));
    child.on("exit", (code, signal) =>
      this.onExit(
        child,
        `tide-healthcheck exited (${signal ?? code ?? "?"}) ${this.stderrTail.trim()}`.trim(),
      ),
    );
    this.child = child;
    this.buffer = "";
    this.stderrTail = "";
    return child;
  }

  private onExit(child: ChildProcessWithoutNullStreams, why: string): void {
    if (this.child !== child) return;
    this.child = null;
    child.kill("SIGKILL");
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      this.pending.delete(id);
      p.resolve({ id, ok: false, latencyUs: null, detail: why.slice(0, 300) });
    }
    if (this.stopped) return;
    this.lastError = why.slice(0, 1000);
    this.log(`${why}; restarting in ${this.restartDelayMs} ms`);
    this.restartAt = Date.now() + this.restartDelayMs;
    this.restartDelayMs = Math.min(this.restartDelayMs * 2, RESTART_MAX_MS);
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf("\n")) >= 0) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        continue;
      }
      const r = HealthcheckResult.safeParse(parsed);
      if (!r.success) continue; // the ready line, or something a newer helper says
      const p = this.pending.get(r.data.id);
      if (p === undefined) continue;
      this.pending.delete(r.data.id);
      clearTimeout(p.timer);
      this.restartDelayMs = RESTART_MIN_MS;
      this.lastError = null;
      p.resolve(r.data);
    }
  }

  /** Run one check; always resolves (a failed check says why). */
  check(request: Omit<HealthcheckRequest, "id">): Promise<Result> {
    const id = (this.seq = (this.seq % 2_000_000_000) + 1);
    const fail = (detail: string): Result => ({
      id,
      ok: false,
      latencyUs: null,
      detail: detail.slice(0, 300),
    });
    if (this.stopped) return Promise.resolve(fail("health checks stopped"));
    if (this.child === null && Date.now() < this.restartAt)
      return Promise.resolve(fail(`tide-healthcheck restarting: ${this.lastError ?? "?"}`));
    const child = this.child ?? this.start();
    return new Promise<Result>((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve(fail(`tide-healthcheck did not answer within ${request.timeoutMs + ANSWER_GRACE_MS} ms`));
      }, request.timeoutMs + ANSWER_GRACE_MS);
      timer.unref();
      this.pending.set(id, { resolve, timer });
      child.stdin.write(`${JSON.stringify({ id, ...request })}\n`);
    });
  }

  stop(): void {
    this.stopped = true;
    const child = this.child;
    this.child = null;
    child?.stdin.end();
    child?.kill("SIGTERM");
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.resolve({ id, ok: false, latencyUs: null, detail: "health checks stopped" });
    }
    this.pending.clear();
  }
}
