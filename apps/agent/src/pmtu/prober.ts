import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import type { PmtuPathResult } from "@tide/contracts";
import { decidePmtu, parsePing, parseTracepath, SMALL_PROBE_SIZE, type PingResult } from "./parse";

/** Defaults, as named constants (units in the name). */
export const PMTU_JITTER = 0.2;
export const TRACEPATH_MAX_HOPS = 12;
/**
 * A silent hop costs tracepath about 3 s: 12 hops can take 36 s; cut it at 40 s and use what it
 * printed (tracepath runs under `stdbuf -oL` where available: a block-buffered pipe would lose
 * everything on SIGKILL).
 */
export const TRACEPATH_TIMEOUT_MS = 40_000;
export const PING_COUNT = 3;
export const PING_WAIT_S = 1;
export const PING_TIMEOUT_MS = 3 * PING_COUNT * 1_000 + 2_000;

export interface PmtuTarget {
  target: string;
  sizes: number[];
}

export interface ExecResult {
  /** stdout and stderr, in that order. */
  output: string;
  timedOut: boolean;
  /** Spawn error (missing binary) or null. */
  error: string | null;
}

export type Exec = (file: string, args: string[], timeoutMs: number) => Promise<ExecResult>;

/** Run a command under a hard timeout (SIGKILL); never rejects; keeps partial output. */
export const execWithTimeout: Exec = (file, args, timeoutMs) =>
  new Promise((resolve) => {
    execFile(
      file,
      args,
      {
        timeout: timeoutMs,
        killSignal: "SIGKILL",
        maxBuffer: 1 << 20,
        env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", LC_ALL: "C" },
      },
      (err, stdout, stderr) => {
        const e = err as (NodeJS.ErrnoException & { killed?: boolean }) | null;
        const timedOut = e?.killed === true;
        const spawnError = e !== null && typeof e.code === "string" ? `${file}: ${e.code}` : null;
        resolve({ output: `${stdout}\n${stderr}`, timedOut, error: spawnError });
      },
    );
  });

/** Reject anything that is not a plain host name or address (targets end up on a command line). */
export function validTarget(t: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9.:_-]{0,254}$/.test(t);
}

/** Merge configured targets (config sizes) with the console's (their own sizes); one entry per target. */
export function mergeTargets(
  configured: readonly string[],
  sizes: readonly number[],
  desired: readonly PmtuTarget[],
): PmtuTarget[] {
  const out = new Map<string, Set<number>>();
  for (const t of configured) out.set(t, new Set(sizes));
  for (const d of desired) {
    const s = out.get(d.target) ?? new Set<number>();
    for (const n of d.sizes) s.add(n);
    out.set(d.target, s);
  }
  return [...out]
    .filter(([t]) => validTarget(t))
    .map(([target, s]) => ({ target, sizes: [...s].sort((a, b) => a - b) }));
}

const STDBUF = ["/usr/bin/stdbuf", "/bin/stdbuf"].find((p) => existsSync(p)) ?? null;

/** tracepath, line-buffered when stdbuf exists. */
export function tracepathCommand(args: string[], stdbuf: string | null = STDBUF): [string, string[]] {
  return stdbuf === null ? ["tracepath", args] : [stdbuf, ["-oL", "tracepath", ...args]];
}

/** One check of one target: tracepath and the pings run concurrently, each under its own timeout. */
export async function checkTarget(
  t: PmtuTarget,
  exec: Exec = execWithTimeout,
  now: () => Date = () => new Date(),
): Promise<PmtuPathResult> {
  const notes: string[] = [];
  const ping = async (size: number): Promise<PingResult> => {
    const args = ["-n", "-c", String(PING_COUNT), "-W", String(PING_WAIT_S), "-s", String(size)];
    if (size > SMALL_PROBE_SIZE) args.unshift("-M", "do");
    const r = await exec("ping", [...args, t.target], PING_TIMEOUT_MS);
    if (r.error !== null) notes.push(r.error);
    if (r.timedOut) notes.push(`ping -s ${size}: timed out after ${PING_TIMEOUT_MS} ms`);
    return parsePing(size, r.output);
  };
  const tracepath = async () => {
    const r = await exec(
      "tracepath",
      ["-n", "-m", String(TRACEPATH_MAX_HOPS), t.target],
      TRACEPATH_TIMEOUT_MS,
    );
    if (r.error !== null) {
      notes.push(r.error);
      return null;
    }
    if (r.timedOut) notes.push(`tracepath: timed out after ${TRACEPATH_TIMEOUT_MS} ms (partial output used)`);
    return r.output.trim() === "" ? null : parseTracepath(r.output);
  };
  const sizes = [SMALL_PROBE_SIZE, ...t.sizes.filter((s) => s > SMALL_PROBE_SIZE)];
  const [tp, ...pings] = await Promise.all([tracepath(), ...sizes.map(ping)]);
  return decidePmtu({ target: t.target, measuredAt: now().toISOString(), tracepath: tp, pings, notes });
}

/**
 * Runs checkTarget for every target on its own jittered timer, in the background: sampling never
 * waits for it. results() gives the latest result per current target (for Observation.paths).
 */
export class PmtuProber {
  private readonly latest = new Map<string, PmtuPathResult>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly running = new Set<string>();
  private targets: PmtuTarget[] = [];
  private stopped = false;

  constructor(
    private readonly o: {
      intervalMs: number;
      log: (line: string) => void;
      exec?: Exec;
      random?: () => number;
    },
  ) {}

  /** Replace the target list: new targets start soon (jittered), removed ones stop. */
  setTargets(targets: PmtuTarget[]): void {
    if (this.stopped) return;
    this.targets = targets;
    const names = new Set(targets.map((t) => t.target));
    for (const [name, timer] of this.timers) {
      if (!names.has(name)) {
        clearTimeout(timer);
        this.timers.delete(name);
        this.latest.delete(name);
      }
    }
    for (const t of targets) if (!this.timers.has(t.target)) this.schedule(t.target, this.jitter(5_000));
  }

  results(): PmtuPathResult[] {
    return this.targets
      .map((t) => this.latest.get(t.target))
      .filter((r): r is PmtuPathResult => r !== undefined);
  }

  private jitter(base: number): number {
    const r = this.o.random ?? Math.random;
    return Math.round(base * (1 - PMTU_JITTER + 2 * PMTU_JITTER * r()));
  }

  private schedule(name: string, delayMs: number): void {
    const timer = setTimeout(() => void this.run(name), delayMs);
    timer.unref();
    this.timers.set(name, timer);
  }

  private async run(name: string): Promise<void> {
    const t = this.targets.find((x) => x.target === name);
    if (this.stopped || t === undefined) return;
    if (!this.running.has(name)) {
      this.running.add(name);
      try {
        const r = await checkTarget(t, this.o.exec);
        if (!this.stopped && this.targets.some((x) => x.target === name)) {
          const before = this.latest.get(name);
          this.latest.set(name, r);
          if (r.blackhole && before?.blackhole !== true) this.o.log(`pmtu ${name}: blackhole suspected`);
        }
      } catch (err) {
        this.o.log(`pmtu ${name}: ${err instanceof Error ? err.message : String(err)}`);
      } finally {
        this.running.delete(name);
      }
    }
    if (!this.stopped && this.timers.has(name)) this.schedule(name, this.jitter(this.o.intervalMs));
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
