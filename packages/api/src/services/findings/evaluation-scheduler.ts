import { type Db } from "@tide/db";
import { EVALUATION_BATCH_MAX, evaluateHosts } from "./host-evaluation";

/**
 * Findings evaluation, off the ingest request path. Ingest stores a batch and calls
 * `findingEvaluatorFor(db).schedule(hostId)`; the evaluator re-runs diagnostics for that host in
 * the background:
 *
 *  - coalesced per host: a host that sends more batches while its evaluation runs (or waits) is
 *    evaluated once more afterwards, over the then newest window, never concurrently with itself
 *    in this process. Skipping intermediate windows loses nothing a later window does not show:
 *    every evaluation reads the whole EVALUATION_WINDOW_S, and resolve() compares with the stored
 *    findings, not with the previous evaluation;
 *  - debounced: at most one evaluation per host per EVALUATION_INTERVAL_MS; a batch that comes
 *    sooner waits for the rest of the interval (coalesced with the ones after it);
 *  - batched: every host due when an evaluation starts is evaluated in it, up to
 *    EVALUATION_BATCH_MAX (evaluateHosts in host-evaluation.ts: a fixed number of statements for
 *    the whole batch); the busier the console, the larger the batches, so evaluation keeps up with
 *    1,000 hosts where one host at a time, each waiting for its own round trips on a busy event
 *    loop, fell minutes behind;
 *  - bounded: at most `concurrency` batches at once (each holds at most one pooled connection at a
 *    time), so ingest keeps the rest of the pool however far evaluation falls behind;
 *  - multi-process safe: each evaluation that writes takes the per-host advisory lock and re-reads
 *    the findings under it, so two console processes that both got batches of one host serialize
 *    on the same findings, and one whose window a newer sample overtook evaluates the newer one
 *    (host-evaluation.ts);
 *  - never lost: a failed evaluation is logged and the host stays dirty; it is retried on the
 *    host's next batch, or after a backoff if no batch comes.
 *
 * Under overload the cost is evaluation lag (findings trail the samples by a few seconds), not
 * failed or slow ingest.
 */

/**
 * Batches evaluated at once per console process (pooled connections they may hold). One: an
 * evaluation is mostly CPU in the console's event loop (diagnose(), ~1 ms a host); a second batch
 * at once would only take more of it from ingest.
 */
export const EVALUATION_CONCURRENCY = 1;

/**
 * Minimum time between the starts of two evaluations of one host, ms. Evaluation is CPU work in the
 * console's event loop (reading and parsing a minute of payloads, diagnose()); at one batch a
 * second per host, evaluating every batch would starve the requests. Findings rest on 60 s rates,
 * so a few seconds more of delay changes little.
 */
export const EVALUATION_INTERVAL_MS = 5_000;

/** First retry delay of a failed evaluation when the host sends nothing; doubles up to the max. */
const RETRY_MS = 1_000;
const RETRY_MAX_MS = 60_000;

/** Lag figures kept in stats. */
const LAG_KEPT = 10_000;

interface HostState {
  /** Waiting for its interval, queued or running. */
  busy: boolean;
  /** Running now. */
  running: boolean;
  /** A batch arrived after the running evaluation read its window: evaluate once more. */
  dirty: boolean;
  /** When the oldest batch not yet covered by a finished evaluation was scheduled (ms). */
  pendingSince: number | null;
  /** When the first batch after the running evaluation's start was scheduled (ms). */
  dirtySince: number | null;
  /** Start of the host's last evaluation (ms), for EVALUATION_INTERVAL_MS. */
  lastStart: number;
  failures: number;
  /** Waiting for the host's interval (delay) or for a retry after a failure (retry). */
  delay: NodeJS.Timeout | null;
  retry: NodeJS.Timeout | null;
}

export interface EvaluatorStats {
  evaluations: number;
  failures: number;
  /**
   * Per finished evaluation, the last LAG_KEPT: ms from the oldest batch it covered being scheduled
   * to its commit.
   */
  lagMs: number[];
}

export interface FindingEvaluatorOptions {
  concurrency?: number;
  /** Minimum ms between the starts of two evaluations of one host (EVALUATION_INTERVAL_MS). */
  intervalMs?: number;
  /** Hosts per batch at most (EVALUATION_BATCH_MAX). */
  batchMax?: number;
  /**
   * The evaluation of one host, instead of evaluateHosts (tests): a batch then calls it for each of
   * its hosts in turn.
   */
  evaluate?: (db: Db, hostId: string) => Promise<unknown>;
  log?: (message: string, error: unknown) => void;
}

/** Per-process scheduler of evaluateHost (see the top of this file). */
export class FindingEvaluator {
  private readonly hosts = new Map<string, HostState>();
  private readonly queue: string[] = [];
  private readonly delayed = new Set<string>();
  private running = 0;
  private idleWaiters: (() => void)[] = [];
  private readonly concurrency: number;
  private readonly intervalMs: number;
  private readonly batchMax: number;
  /** Evaluate a batch; the hosts whose evaluation failed, with the error. */
  private readonly evaluate: (db: Db, hostIds: string[]) => Promise<Map<string, unknown>>;
  private readonly log: (message: string, error: unknown) => void;
  readonly stats: EvaluatorStats = { evaluations: 0, failures: 0, lagMs: [] };

  constructor(
    private readonly db: Db,
    options: FindingEvaluatorOptions = {},
  ) {
    this.concurrency = options.concurrency ?? EVALUATION_CONCURRENCY;
    this.intervalMs = options.intervalMs ?? EVALUATION_INTERVAL_MS;
    this.batchMax = Math.max(1, options.batchMax ?? EVALUATION_BATCH_MAX);
    const one = options.evaluate;
    this.evaluate = one
      ? async (db, hostIds) => {
          const failed = new Map<string, unknown>();
          for (const id of hostIds) await one(db, id).catch((e: unknown) => failed.set(id, e));
          return failed;
        }
      : async (db, hostIds) => {
          const failed = new Map<string, unknown>();
          for (const [id, r] of await evaluateHosts(db, hostIds)) if (r instanceof Error) failed.set(id, r);
          return failed;
        };
    this.log = options.log ?? ((m, e) => console.error(m, e));
  }

  /** A batch of the host was stored: evaluate it soon (once, however many batches arrive). */
  schedule(hostId: string): void {
    let s = this.hosts.get(hostId);
    if (!s) {
      s = {
        busy: false,
        running: false,
        dirty: false,
        pendingSince: null,
        dirtySince: null,
        lastStart: -Infinity,
        failures: 0,
        delay: null,
        retry: null,
      };
      this.hosts.set(hostId, s);
    }
    s.pendingSince ??= Date.now();
    if (s.retry) {
      clearTimeout(s.retry);
      s.retry = null;
    }
    if (s.running) {
      if (!s.dirty) s.dirtySince = Date.now();
      s.dirty = true;
      return;
    }
    if (s.busy) return; // waiting or queued: its evaluation will read this batch too
    s.busy = true;
    this.enqueue(hostId, s);
  }

  /**
   * Resolves when nothing is waiting for its interval, queued or running (retries after a failure
   * wait on their own timer and do not count).
   */
  idle(): Promise<void> {
    if (this.running === 0 && this.queue.length === 0 && this.delayed.size === 0) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  /** Start the evaluations that wait for their host's interval now, then wait for idle() (tests). */
  flush(): Promise<void> {
    for (const hostId of [...this.delayed]) {
      const s = this.hosts.get(hostId)!;
      clearTimeout(s.delay!);
      s.delay = null;
      this.delayed.delete(hostId);
      this.queue.push(hostId);
    }
    this.pump();
    return this.idle();
  }

  /** Hosts whose last evaluation failed and that wait for a retry. */
  failing(): string[] {
    return [...this.hosts].filter(([, s]) => s.failures > 0).map(([id]) => id);
  }

  /** Cancel timers (tests, shutdown); what they waited for is evaluated on the host's next batch. */
  stop(): void {
    for (const [hostId, s] of this.hosts) {
      if (s.retry) clearTimeout(s.retry);
      if (s.delay) clearTimeout(s.delay);
      s.retry = s.delay = null;
      s.busy = s.running || this.queue.includes(hostId);
    }
    this.delayed.clear();
    this.pump();
  }

  /** Queue the host, after its interval since its last evaluation's start. */
  private enqueue(hostId: string, s: HostState): void {
    const wait = s.lastStart + this.intervalMs - Date.now();
    if (wait <= 0) {
      this.queue.push(hostId);
      this.pump();
      return;
    }
    this.delayed.add(hostId);
    s.delay = setTimeout(() => {
      s.delay = null;
      this.delayed.delete(hostId);
      this.queue.push(hostId);
      this.pump();
    }, wait);
    s.delay.unref();
  }

  private pump(): void {
    while (this.running < this.concurrency && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.batchMax);
      this.running++;
      void this.run(batch);
    }
    if (this.running === 0 && this.queue.length === 0 && this.delayed.size === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  private async run(hostIds: string[]): Promise<void> {
    const started = Date.now();
    const covers = hostIds.map((hostId) => {
      const s = this.hosts.get(hostId)!;
      s.running = true;
      s.dirty = false;
      s.lastStart = started;
      return s.pendingSince;
    });
    let failed: Map<string, unknown>;
    try {
      failed = await this.evaluate(this.db, hostIds);
    } catch (e) {
      failed = new Map(hostIds.map((id) => [id, e]));
    }
    hostIds.forEach((hostId, i) => this.finished(hostId, covers[i]!, failed.has(hostId), failed.get(hostId)));
    this.running--;
    this.pump();
  }

  /** The host's evaluation (started when `covers` was pending) ended. */
  private finished(hostId: string, covers: number | null, failedNow: boolean, error: unknown): void {
    const s = this.hosts.get(hostId)!;
    if (failedNow) this.log(`findings evaluation of ${hostId} failed; retried on its next batch`, error);
    this.stats.evaluations++;
    s.running = false;
    if (!failedNow) {
      s.failures = 0;
      if (covers !== null) this.stats.lagMs.push(Date.now() - covers);
      if (this.stats.lagMs.length > LAG_KEPT) this.stats.lagMs.splice(0, this.stats.lagMs.length - LAG_KEPT);
      // Batches that came during the run are still pending; their clock starts with the first.
      s.pendingSince = s.dirty ? s.dirtySince : null;
    } else {
      this.stats.failures++;
      s.failures++;
    }
    if (s.dirty) {
      this.enqueue(hostId, s); // after its interval, behind the hosts already queued
    } else {
      s.busy = false;
      if (failedNow) {
        const delay = Math.min(RETRY_MAX_MS, RETRY_MS * 2 ** (s.failures - 1));
        s.retry = setTimeout(() => {
          s.retry = null;
          this.schedule(hostId);
        }, delay);
        s.retry.unref();
      }
    }
  }
}

const evaluators = new WeakMap<Db, FindingEvaluator>();

/** The evaluator of this process for `db` (one per Prisma client, created on first use). */
export function findingEvaluatorFor(db: Db): FindingEvaluator {
  let e = evaluators.get(db);
  if (!e) {
    e = new FindingEvaluator(db);
    evaluators.set(db, e);
  }
  return e;
}
