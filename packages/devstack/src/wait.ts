/**
 * The one way tests, harnesses and benches wait for something to become true: a probe is asked
 * every `intervalMs` until it returns a value (anything but `undefined` or `false`), and the wait
 * fails with what it was waiting for once `timeoutMs` has passed. Never a fixed sleep: a wait ends
 * as soon as its condition holds, and says why when it does not.
 *
 *   const finding = await waitFor("an open finding", () => findOpen(), { timeoutMs: 90_000 });
 *   await waitFor("the control socket", () => existsSync(socket), { timeoutMs: 30_000, intervalMs: 20 });
 *   await waitFor("tide-redirect's socket", () => existsSync(socket), { timeoutMs: 10_000, whileRunning: child });
 */

export interface WaitOptions {
  /** Give up after this many milliseconds (the probe runs at least once). */
  timeoutMs: number;
  /** Milliseconds between two probes; default 100. */
  intervalMs?: number;
  /**
   * A probe that throws counts as "not yet" (a console restarting a worker, a reset keep-alive
   * connection); the last error is part of the timeout message. Default: the error ends the wait.
   */
  retryErrors?: boolean;
  /** More context for the timeout message (a process's log, the last value seen). */
  detail?: () => string;
  /**
   * The process that is to make the condition true (a daemon starting up): once it has exited the
   * wait fails at once, naming its exit code or signal, instead of running out the clock.
   */
  whileRunning?: RunningProcess;
}

/** What `whileRunning` needs of a process (a node ChildProcess has it). */
interface RunningProcess {
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
}

/** A probe's "not yet". */
type NotYet = undefined | false;

export const DEFAULT_WAIT_INTERVAL_MS = 100;

export async function waitFor<T>(
  what: string,
  probe: () => T | NotYet | Promise<T | NotYet>,
  options: WaitOptions,
): Promise<Exclude<T, NotYet>> {
  const {
    timeoutMs,
    intervalMs = DEFAULT_WAIT_INTERVAL_MS,
    retryErrors = false,
    detail,
    whileRunning,
  } = options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = undefined;
  for (;;) {
    if (whileRunning && (whileRunning.exitCode !== null || whileRunning.signalCode !== null)) {
      const how =
        whileRunning.exitCode !== null
          ? `code ${whileRunning.exitCode}`
          : `signal ${whileRunning.signalCode}`;
      let message = `gave up waiting for ${what}: its process exited (${how})`;
      if (detail) message += `; ${detail()}`;
      throw new Error(message);
    }
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value as Exclude<T, NotYet>;
    } catch (error) {
      if (!retryErrors) throw error;
      lastError = error;
    }
    if (Date.now() > deadline) throw new Error(timeoutMessage(what, timeoutMs, detail, lastError));
    await sleep(intervalMs);
  }
}

function timeoutMessage(
  what: string,
  timeoutMs: number,
  detail: (() => string) | undefined,
  lastError: unknown,
): string {
  let message = `timed out after ${timeoutMs} ms waiting for ${what}`;
  if (detail) message += `; ${detail()}`;
  if (lastError !== undefined) {
    message += ` (last error: ${lastError instanceof Error ? lastError.message : String(lastError)})`;
  }
  return message;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
