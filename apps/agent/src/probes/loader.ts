import { spawn, type ChildProcess } from "node:child_process";
import { access, constants } from "node:fs/promises";
import { createInterface } from "node:readline";
import { probesMapsSource, type ProbesMapsSource } from "../bpf/probes-maps-source";
import { ProbeState } from "./probe-state";

/** Wait before restarting a crashed loader, in ms. */
const RESTART_DELAY_MS = 10_000;

/**
 * Runs tide-probes (dataplane/probes) and keeps its latest state. Without a binary every probe is
 * reported off; a crashed loader is restarted after a pause and reported loader_crashed meanwhile.
 */
export class ProbeLoader {
  readonly state: ProbeState;
  /**
   * tide-probes' --pin-dir (config probesPinDir): its aggregate maps are pinned there and
   * net_rx_softirq is read from them through npm bpf (see ProbesMapsSource); null = JSON lines only.
   * Read when the loader is spawned and on every read: set it before start().
   */
  pinDir: string | null;
  private child: ChildProcess | null = null;
  private stopped = false;
  private restartTimer: NodeJS.Timeout | null = null;
  private refusedCount = 0;

  constructor(
    private readonly binary: string | null,
    private readonly intervalMs: number,
    private readonly log: (line: string) => void = () => undefined,
    options: { pinDir?: string | null; mapsSource?: ProbesMapsSource } = {},
  ) {
    this.pinDir = options.pinDir ?? null;
    const source = options.mapsSource ?? probesMapsSource;
    this.state = new ProbeState(undefined, (pinError) => source.readNetRx(this.pinDir, pinError));
  }

  async start(): Promise<void> {
    if (this.binary === null) {
      this.state.setOff("disabled", "no probesBinary configured");
      return;
    }
    try {
      await access(this.binary, constants.X_OK);
    } catch {
      this.state.setOff("load_failed", `probe loader ${this.binary} not found or not executable`);
      return;
    }
    this.spawn(this.binary);
  }

  /** Lines of tide-probes that did not match the contract (skipped, logged at 1, 10, 100, ...). */
  get refused(): number {
    return this.refusedCount;
  }

  private refuse(what: string): void {
    this.refusedCount++;
    if (Number.isInteger(Math.log10(this.refusedCount)))
      this.log(`tide-probes: skipped ${what} (${this.refusedCount} so far)`);
  }

  private spawn(binary: string): void {
    const args = ["--interval-ms", String(this.intervalMs)];
    if (this.pinDir !== null) args.push("--pin-dir", this.pinDir);
    const child = spawn(binary, args, {
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child = child;
    child.stdin?.on("error", () => undefined);
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (line) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        this.refuse(`a line that is not JSON: ${line.slice(0, 200)}`);
        return;
      }
      const problem = this.state.handle(parsed);
      if (problem !== null) this.refuse(`a line that is not a ProbesLine (${problem})`);
    });
    let stderrTail = "";
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      stderrTail = (stderrTail + chunk).slice(-500);
    });
    child.on("error", (err) => this.log(`tide-probes: ${err.message}`));
    child.on("exit", (code, signal) => {
      if (this.child === child) this.child = null;
      if (this.stopped) return;
      const detail = `tide-probes exited (${signal ?? code ?? "?"}): ${stderrTail.trim()}`;
      this.log(detail);
      this.state.setOff("loader_crashed", detail);
      this.restartTimer = setTimeout(() => this.spawn(binary), RESTART_DELAY_MS);
      this.restartTimer.unref();
    });
  }

  stop(): void {
    this.stopped = true;
    if (this.restartTimer !== null) clearTimeout(this.restartTimer);
    const child = this.child;
    this.child = null;
    if (child !== null) {
      child.stdin?.end(); // EOF on stdin stops the loader cleanly (detaches everything)
      const kill = setTimeout(() => child.kill("SIGKILL"), 3_000);
      kill.unref();
      child.kill("SIGTERM");
    }
  }
}
