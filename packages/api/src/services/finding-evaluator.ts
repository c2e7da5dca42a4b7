import { Finding, KernelFindingKind, type Observation } from "@tide/contracts";
import {
  evaluationWindow,
  findingSelect,
  type Db,
  type FindingEventType,
  type FindingRow,
  type FindingSeverity,
  type Prisma,
} from "@tide/db";
import { diagnose, resolve } from "@tide/diagnostics";
import { isDeepStrictEqual } from "node:util";
import { OBSERVATIONS_CHANNEL } from "../live/channels";

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
 *  - bounded: at most `concurrency` evaluations at once (each holds one pooled connection for its
 *    transaction), so ingest keeps the rest of the Prisma pool however far evaluation falls behind;
 *  - multi-process safe: each evaluation still takes the per-host advisory lock, so two console
 *    processes that both got batches of one host serialize on the same findings;
 *  - never lost: a failed evaluation is logged and the host stays dirty; it is retried on the
 *    host's next batch, or after a backoff if no batch comes.
 *
 * Under overload the cost is evaluation lag (findings trail the samples by a few seconds), not
 * failed or slow ingest.
 */

/**
 * Samples evaluated per run, in seconds: diagnostics' rates use a 60 s window, and two minutes lets
 * resolve() see the whole previous window as well.
 */
export const EVALUATION_WINDOW_S = 120;
/**
 * diagnose() runs inside the transaction (the advisory lock must cover read and write). Prisma's
 * default 5 s limit is too short for a host with dozens of namespaces on a busy console: every
 * evaluation of that host would time out and its findings would never open. A minute is still
 * bounded; maxWait bounds the wait for a pooled connection.
 */
const EVALUATION_TRANSACTION = { timeout: 60_000, maxWait: 10_000 };

/** Evaluations running at once per console process (pooled connections they may hold). */
export const EVALUATION_CONCURRENCY = 2;

/**
 * Minimum time between the starts of two evaluations of one host, ms. Evaluation is CPU work in the
 * console's event loop (reading and parsing two minutes of payloads, diagnose()); at one batch a
 * second per host, evaluating every batch would starve the requests. Findings rest on 60 s rates,
 * so a few seconds more of delay changes little.
 */
export const EVALUATION_INTERVAL_MS = 5_000;

/** First retry delay of a failed evaluation when the host sends nothing; doubles up to the max. */
const RETRY_MS = 1_000;
const RETRY_MAX_MS = 60_000;

/** Lag figures kept in stats. */
const LAG_KEPT = 10_000;

/** Who writes automatic finding history. */
const DIAGNOSTICS = "diagnostics";

/** A stored finding as diagnostics' contract type (acknowledged stays acknowledged). */
export function rowToFinding(r: FindingRow): Finding {
  return {
    id: r.id,
    fingerprint: r.fingerprint,
    kind: r.kind as Finding["kind"],
    incident: r.incident,
    severity: r.severity,
    status: r.status,
    title: r.title,
    subject: r.subject as Finding["subject"],
    evidence: r.evidence as Finding["evidence"],
    explanation: r.explanation,
    remedy: r.remedy as Finding["remedy"],
    firstSeenAt: r.firstSeenAt.toISOString(),
    lastSeenAt: r.lastSeenAt.toISOString(),
    resolvedAt: r.resolvedAt?.toISOString() ?? null,
  };
}

/**
 * Whether a finding diagnostics made matches the Finding contract, so what is stored can be read
 * back. Rates are finite by construction (diagnostics' rates.ts); this is the last line: JSON would
 * store an Infinity as null and every list of findings would carry a row that does not parse. One
 * that does not match is logged and not written (its previous state, if any, stays).
 */
function storable(f: Finding): boolean {
  const parsed = Finding.safeParse(f);
  if (!parsed.success)
    console.error(
      `finding ${f.id} (${f.kind}) not stored: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  return parsed.success;
}

function findingContent(f: Finding) {
  return {
    kind: f.kind,
    incident: f.incident,
    severity: f.severity,
    title: f.title,
    subject: f.subject as Prisma.InputJsonValue,
    evidence: f.evidence as Prisma.InputJsonValue,
    explanation: f.explanation,
    remedy: f.remedy as Prisma.InputJsonValue,
    lastSeenAt: new Date(f.lastSeenAt),
  };
}

/**
 * True when the stored open finding already says what diagnostics says now. Deep equality ignores
 * key order, which jsonb does not keep.
 */
function unchanged(row: FindingRow, f: Finding): boolean {
  return (
    row.kind === f.kind &&
    row.incident === f.incident &&
    row.severity === f.severity &&
    row.title === f.title &&
    row.explanation === f.explanation &&
    row.lastSeenAt.getTime() === Date.parse(f.lastSeenAt) &&
    isDeepStrictEqual(row.subject, f.subject) &&
    isDeepStrictEqual(row.evidence, f.evidence) &&
    isDeepStrictEqual(row.remedy, f.remedy)
  );
}

export interface EvaluationResult {
  opened: number;
  resolved: number;
  /** Findings rows written (opened, reopened, refreshed, resolved); 0 means nothing changed. */
  written: number;
}

/**
 * Re-run diagnostics over the host's last EVALUATION_WINDOW_S of samples and bring its findings up
 * to date: new ones open, known ones refresh (severity changes are recorded), vanished ones resolve
 * when the window could evaluate them, resolved ones that come back reopen. One transaction under a
 * per-host advisory lock, so two evaluations of one host never race on the same findings. Findings
 * whose content did not change are not rewritten; history events go in one insert. When anything
 * was written, live pages are notified (delivered at commit).
 */
export async function evaluateHost(db: Db, hostId: string): Promise<EvaluationResult> {
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`findings:${hostId}`}))`;
    const rows = await evaluationWindow(tx, hostId, EVALUATION_WINDOW_S);
    const newest = rows[rows.length - 1]?.sampledAt;
    if (!newest) return { opened: 0, resolved: 0, written: 0 };
    const window = rows.map((r) => r.payload as unknown as Observation);
    // Diagnostics owns the kernel kinds only: health findings (health-findings.ts) are the health
    // checks' to open and resolve, never "gone" because the counters do not show them.
    const stored = await tx.finding.findMany({
      where: { hostId, kind: { in: KernelFindingKind.options } },
      select: findingSelect,
    });
    const byId = new Map(stored.map((r) => [r.id, r]));
    const previous = stored.filter((r) => r.status !== "resolved").map(rowToFinding);
    const result = resolve(previous, diagnose(window), window);

    const events: Prisma.FindingEventCreateManyInput[] = [];
    const event = (
      findingId: string,
      type: FindingEventType,
      at: string,
      extra: { from?: FindingSeverity; to?: FindingSeverity; detail?: string } = {},
    ) =>
      events.push({
        findingId,
        type,
        at: new Date(at),
        by: DIAGNOSTICS,
        fromSeverity: extra.from ?? null,
        toSeverity: extra.to ?? null,
        detail: extra.detail ?? "",
      });

    let opened = 0;
    let written = 0;
    for (const f of result.open) {
      if (!storable(f)) continue;
      const row = byId.get(f.id);
      if (!row) {
        await tx.finding.create({
          data: {
            id: f.id,
            fingerprint: f.fingerprint,
            hostId,
            status: "open",
            firstSeenAt: new Date(f.firstSeenAt),
            ...findingContent(f),
          },
        });
        event(f.id, "opened", f.lastSeenAt, { to: f.severity });
        opened++;
        written++;
      } else if (row.status === "resolved") {
        await tx.finding.update({
          where: { id: f.id },
          data: {
            status: "open",
            resolvedAt: null,
            acknowledgedBy: null,
            acknowledgedAt: null,
            ...findingContent(f),
          },
        });
        event(f.id, "reopened", f.lastSeenAt, { from: row.severity, to: f.severity });
        opened++;
        written++;
      } else if (!unchanged(row, f)) {
        await tx.finding.update({ where: { id: f.id }, data: findingContent(f) });
        if (row.severity !== f.severity) {
          event(f.id, "severity_changed", f.lastSeenAt, { from: row.severity, to: f.severity });
        }
        written++;
      }
    }
    for (const { finding, reason } of result.resolved) {
      const at = finding.resolvedAt ?? newest.toISOString();
      await tx.finding.update({
        where: { id: finding.id },
        data: { status: "resolved", resolvedAt: new Date(at), acknowledgedBy: null, acknowledgedAt: null },
      });
      event(finding.id, "resolved", at, { from: finding.severity, detail: reason });
      written++;
    }
    if (events.length > 0) await tx.findingEvent.createMany({ data: events });
    // Pages refetch findings on this (live/host-live.ts); NOTIFY is delivered only if we commit.
    if (written > 0) await tx.$executeRaw`SELECT pg_notify(${OBSERVATIONS_CHANNEL}, ${`${hostId} findings`})`;
    return { opened, resolved: result.resolved.length, written };
  }, EVALUATION_TRANSACTION);
}

// ---------------------------------------------------------------------------------------------------

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
  /** The evaluation itself; tests replace it. */
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
  private readonly evaluate: (db: Db, hostId: string) => Promise<unknown>;
  private readonly log: (message: string, error: unknown) => void;
  readonly stats: EvaluatorStats = { evaluations: 0, failures: 0, lagMs: [] };

  constructor(
    private readonly db: Db,
    options: FindingEvaluatorOptions = {},
  ) {
    this.concurrency = options.concurrency ?? EVALUATION_CONCURRENCY;
    this.intervalMs = options.intervalMs ?? EVALUATION_INTERVAL_MS;
    this.evaluate = options.evaluate ?? evaluateHost;
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
      const hostId = this.queue.shift()!;
      this.running++;
      void this.run(hostId);
    }
    if (this.running === 0 && this.queue.length === 0 && this.delayed.size === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  private async run(hostId: string): Promise<void> {
    const s = this.hosts.get(hostId)!;
    s.running = true;
    s.dirty = false;
    s.lastStart = Date.now();
    const covers = s.pendingSince;
    let ok = false;
    try {
      await this.evaluate(this.db, hostId);
      ok = true;
    } catch (e) {
      this.log(`findings evaluation of ${hostId} failed; retried on its next batch`, e);
    }
    this.stats.evaluations++;
    s.running = false;
    if (ok) {
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
      if (!ok) {
        const delay = Math.min(RETRY_MAX_MS, RETRY_MS * 2 ** (s.failures - 1));
        s.retry = setTimeout(() => {
          s.retry = null;
          this.schedule(hostId);
        }, delay);
        s.retry.unref();
      }
    }
    this.running--;
    this.pump();
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
