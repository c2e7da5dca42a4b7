/**
 * Findings evaluation of one host: diagnostics over its newest samples, reconciled with the stored
 * findings in one transaction. When it runs is evaluation-scheduler.ts's business (the scheduler).
 */
import { Finding, KernelFindingKind, type Observation } from "@tide/contracts";
import {
  evaluationWindow,
  evaluationWindowShape,
  evaluationWindowShapes,
  findingsOfHosts,
  insertFindingEvents,
  insertOpenFindings,
  newestSamplesAt,
  resolveFindings,
  sqlTransaction,
  updateFindingContent,
  type Db,
  type FindingContentRow,
  type FindingEventInsert,
  type FindingEventType,
  type FindingRow,
  type FindingSeverity,
  type SqlClient,
  type WindowShape,
} from "@tide/db";
import {
  diagnose,
  NamespaceWindowSums,
  RATE_WINDOW_S,
  resolve,
  type DiagnoseOptions,
} from "@tide/diagnostics";
import { isDeepStrictEqual } from "node:util";
import { OBSERVATIONS_CHANNEL } from "../../live/channels";
import { ingestEnv } from "../../env";
import { evaluationWindowCacheFor, type EvaluationWindowCache } from "./evaluation-window-cache";

/**
 * Samples read per run, in seconds: exactly what diagnostics looks at. diagnose() and resolve() both
 * cut their input to the last RATE_WINDOW_S (60 s) before its newest sample (ruleContexts ->
 * rollingWindows, inclusive), so reading more only costs: of the two minutes read before, half
 * the rows were fetched and parsed to be thrown away.
 */
export const EVALUATION_WINDOW_S = RATE_WINDOW_S;
/** This process's in-memory evaluation windows (evaluation-window-cache.ts); ingest adds to it. */
export function windowCacheFor(db: Db): EvaluationWindowCache {
  return evaluationWindowCacheFor(db, EVALUATION_WINDOW_S);
}

const sumsOfDb = new WeakMap<Db, DiagnoseOptions>();
/**
 * What diagnostics is given with each window of this process: its namespace-counter sums per host
 * (diagnostics' NamespaceWindowSums). The windows the cache hands out are the same objects from one
 * evaluation to the next, so each host's minute of counters is slid by the few samples that came
 * instead of added up again; for as many hosts as the cache holds windows of (none when it is off,
 * and every window is read anew).
 */
function diagnoseOptionsFor(db: Db): DiagnoseOptions {
  let o = sumsOfDb.get(db);
  if (!o) {
    const samples = ingestEnv().TIDE_EVALUATION_CACHE_SAMPLES;
    o =
      samples > 0 ? { namespaceSums: new NamespaceWindowSums(Math.ceil(samples / EVALUATION_WINDOW_S)) } : {};
    sumsOfDb.set(db, o);
  }
  return o;
}

/** A host's evaluation window, oldest first, and its newest sample's time. */
interface HostWindow {
  window: Observation[];
  newest: Date;
}

/**
 * The host's evaluation window: from this process's cache when the database's shape of the window
 * (`shape`, read for a whole batch of hosts at once; else read here) says it holds all of it, else
 * read (and cached). Null when the host has no samples.
 */
async function hostWindow(
  db: SqlClient,
  cache: EvaluationWindowCache,
  hostId: string,
  shape?: WindowShape,
): Promise<HostWindow | null> {
  if (cache.has(hostId)) {
    shape ??= await evaluationWindowShape(db, hostId, EVALUATION_WINDOW_S);
    const cached = cache.window(hostId, shape);
    if (cached && shape.newest) return { window: cached, newest: shape.newest };
  }
  const rows = await evaluationWindow(db, hostId, EVALUATION_WINDOW_S);
  const newest = rows[rows.length - 1]?.sampledAt;
  if (!newest) return null;
  cache.fill(hostId, rows);
  return { window: rows.map((r) => r.payload as unknown as Observation), newest };
}

/**
 * The writing transaction re-runs resolve() under the advisory lock (and diagnose() when newer
 * samples came meanwhile). A host with dozens of namespaces and findings on a busy console takes
 * seconds; a minute is still bounded (sqlTransaction's Prisma fallback; on node-postgres the pool's
 * statement and idle-in-transaction timeouts bound it).
 */
const EVALUATION_TRANSACTION = { timeoutMs: 60_000 };

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
 * that does not match is not written (its previous state, if any, stays) and, with `log`, logged.
 */
function storable(f: Finding, log = true): boolean {
  const parsed = Finding.safeParse(f);
  if (!parsed.success && log)
    console.error(
      `finding ${f.id} (${f.kind}) not stored: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  return parsed.success;
}

/** What diagnostics says of `f`, as its row holds it. */
function findingContent(f: Finding): FindingContentRow {
  return {
    id: f.id,
    kind: f.kind,
    incident: f.incident,
    severity: f.severity,
    title: f.title,
    subject: f.subject,
    evidence: f.evidence,
    explanation: f.explanation,
    remedy: f.remedy,
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

/** One write an evaluation makes to bring stored findings up to date. */
type FindingWrite =
  | { op: "open"; finding: Finding }
  | { op: "reopen"; finding: Finding; from: FindingSeverity }
  | { op: "refresh"; finding: Finding; from: FindingSeverity }
  | { op: "resolve"; finding: Finding; at: string; reason: string };

/**
 * The stored findings of the kinds diagnostics owns, per host (every host asked has an entry).
 * Health findings (health-findings.ts) are the health checks' to open and resolve, never "gone"
 * because the counters do not show them.
 */
async function kernelFindings(tx: SqlClient, hostIds: readonly string[]): Promise<Map<string, FindingRow[]>> {
  const byHost = new Map<string, FindingRow[]>(hostIds.map((id) => [id, []]));
  for (const r of await findingsOfHosts(tx, hostIds, KernelFindingKind.options))
    byHost.get(r.hostId)?.push(r);
  return byHost;
}

/**
 * What to write so the stored findings say what diagnose() said over `window` (pure): new ones
 * open, resolved ones that came back reopen, changed ones refresh, vanished ones that the window
 * could evaluate resolve. Findings whose content did not change are not rewritten, nor those that
 * do not match the contract (storable; still matched, so their previous state stays).
 */
function findingWrites(
  stored: readonly FindingRow[],
  current: readonly Finding[],
  window: readonly Observation[],
  newest: Date,
  log: boolean,
  options: DiagnoseOptions,
): FindingWrite[] {
  const byId = new Map(stored.map((r) => [r.id, r]));
  const previous = stored.filter((r) => r.status !== "resolved").map(rowToFinding);
  const result = resolve(previous, current, window, options);
  const writes: FindingWrite[] = [];
  for (const f of result.open) {
    if (!storable(f, log)) continue;
    const row = byId.get(f.id);
    if (!row) writes.push({ op: "open", finding: f });
    else if (row.status === "resolved") writes.push({ op: "reopen", finding: f, from: row.severity });
    else if (!unchanged(row, f)) writes.push({ op: "refresh", finding: f, from: row.severity });
  }
  for (const { finding, reason } of result.resolved) {
    writes.push({ op: "resolve", finding, at: finding.resolvedAt ?? newest.toISOString(), reason });
  }
  return writes;
}

/** An evaluated host with findings to write: what diagnose() said over which window. */
interface Pending {
  hostId: string;
  window: Observation[];
  newest: Date;
  current: Finding[];
}

/** Hosts evaluated together at most (evaluation-scheduler.ts takes its batches up to this). */
export const EVALUATION_BATCH_MAX = 200;

const NOTHING: EvaluationResult = { opened: 0, resolved: 0, written: 0 };

/**
 * CPU an evaluation takes at most before it lets the event loop serve requests (ms): diagnose() is
 * ~1 ms a host, and a batch of 200 in one go would hold every request for a fifth of a second. Not
 * after every host either: on a busy console each yield waits for a whole turn of the loop, and a
 * batch spent more time waiting than evaluating.
 */
const EVALUATION_SLICE_MS = 10;

/** A timer that yields to the event loop once a slice of EVALUATION_SLICE_MS is used up. */
function slicer(): () => Promise<void> {
  let start = performance.now();
  return async () => {
    if (performance.now() - start < EVALUATION_SLICE_MS) return;
    await new Promise<void>((r) => setImmediate(r));
    start = performance.now();
  };
}

/**
 * Re-run diagnostics over each host's last EVALUATION_WINDOW_S of samples and bring its findings up
 * to date: new ones open, known ones refresh (severity changes are recorded), vanished ones resolve
 * when the window could evaluate them, resolved ones that come back reopen. Findings whose content
 * did not change are not rewritten; history events go in one insert. When anything was written,
 * live pages are notified (delivered at commit). Returns each host's result, or the error its
 * evaluation failed with (the others are not held back by it).
 *
 * A batch of hosts costs a fixed number of statements, not a few per host (evaluation-scheduler.ts
 * hands it every host due at once; at 1,000 agents ~100 a second):
 *  - reads, outside any transaction: the shapes of the windows this process holds in memory (one
 *    index-only statement for all; a host whose cached window matches is not read) and the stored
 *    findings of all hosts (one statement). Most hosts change nothing (no problems) and end there;
 *  - diagnose() host by host, yielding to requests every EVALUATION_SLICE_MS of CPU;
 *  - writes, for the hosts whose findings change, in one transaction (writeFindings): it takes
 *    their per-host advisory locks, reads their newest samples and findings again under them and
 *    writes what they still lack, so two console processes never race on one host's findings; a
 *    host whose window a newer sample overtook meanwhile is evaluated again there, on the newer
 *    window. If that transaction fails, each host's writes are retried alone, so one host's failure
 *    is its own.
 * (It used to be per host, through Prisma, with the lock and a transaction for every evaluation:
 * five round trips and the query compiler for a usual result of "nothing to do".)
 */
export async function evaluateHosts(
  db: Db,
  hostIds: readonly string[],
): Promise<Map<string, EvaluationResult | Error>> {
  const results = new Map<string, EvaluationResult | Error>();
  const cache = windowCacheFor(db);
  const options = diagnoseOptionsFor(db);
  const cached = hostIds.filter((id) => cache.has(id));
  const [shapes, stored] = await Promise.all([
    cached.length > 0
      ? evaluationWindowShapes(db, cached, EVALUATION_WINDOW_S)
      : new Map<string, WindowShape>(),
    kernelFindings(db, hostIds),
  ]);
  const pending: Pending[] = [];
  const yieldWhenDue = slicer();
  for (const hostId of hostIds) {
    await yieldWhenDue();
    try {
      const read = await hostWindow(db, cache, hostId, shapes.get(hostId));
      if (!read) {
        results.set(hostId, NOTHING);
        continue;
      }
      const current = diagnose(read.window, options);
      if (
        findingWrites(stored.get(hostId) ?? [], current, read.window, read.newest, true, options).length === 0
      ) {
        results.set(hostId, NOTHING);
        continue;
      }
      pending.push({ hostId, ...read, current });
    } catch (e) {
      results.set(hostId, e instanceof Error ? e : new Error(String(e)));
    }
  }
  if (pending.length === 0) return results;
  try {
    for (const [hostId, r] of await writeFindings(db, pending)) results.set(hostId, r);
  } catch (batchError) {
    if (pending.length === 1) {
      results.set(
        pending[0]!.hostId,
        batchError instanceof Error ? batchError : new Error(String(batchError)),
      );
      return results;
    }
    for (const p of pending) {
      try {
        for (const [hostId, r] of await writeFindings(db, [p])) results.set(hostId, r);
      } catch (e) {
        results.set(p.hostId, e instanceof Error ? e : new Error(String(e)));
      }
    }
  }
  return results;
}

/** evaluateHosts for one host; throws what its evaluation failed with. */
export async function evaluateHost(db: Db, hostId: string): Promise<EvaluationResult> {
  const r = (await evaluateHosts(db, [hostId])).get(hostId)!;
  if (r instanceof Error) throw r;
  return r;
}

/**
 * Write what `pending`'s hosts' findings lack, in one transaction under their advisory locks (see
 * evaluateHosts). The locks are taken in one statement in the order of their keys, so two
 * transactions that lock overlapping sets of hosts (two consoles) wait for each other instead of
 * deadlocking.
 */
async function writeFindings(db: Db, pending: readonly Pending[]): Promise<Map<string, EvaluationResult>> {
  const cache = windowCacheFor(db);
  const options = diagnoseOptionsFor(db);
  const hostIds = pending.map((p) => p.hostId);
  return sqlTransaction(
    db,
    async (tx) => {
      await tx(
        `SELECT count(pg_advisory_xact_lock(k))
         FROM (SELECT hashtext(x) AS k FROM unnest($1::text[]) AS x ORDER BY 1 OFFSET 0) AS keys`,
        [hostIds.map((id) => `findings:${id}`)],
      );
      // A sample newer than a host's window arrived meanwhile (and maybe another process evaluated
      // it): evaluate the window as it is now, under the lock, rather than write findings back to an
      // older one. Never give up instead: a host whose batches come faster than an evaluation takes
      // would never get its findings written.
      const latest = await newestSamplesAt(tx, hostIds);
      const stored = await kernelFindings(tx, hostIds);
      const results = new Map<string, EvaluationResult>();
      const writes: { hostId: string; w: FindingWrite }[] = [];
      for (const p of pending) {
        let { window, newest, current } = p;
        const newer = latest.get(p.hostId);
        if (newer && newer > newest) {
          const again = await hostWindow(tx, cache, p.hostId);
          if (!again) {
            results.set(p.hostId, NOTHING);
            continue;
          }
          ({ window, newest } = again);
          current = diagnose(window, options);
        }
        const hostWrites = findingWrites(stored.get(p.hostId) ?? [], current, window, newest, false, options);
        for (const w of hostWrites) writes.push({ hostId: p.hostId, w });
        results.set(p.hostId, {
          opened: hostWrites.filter((w) => w.op === "open" || w.op === "reopen").length,
          resolved: hostWrites.filter((w) => w.op === "resolve").length,
          written: hostWrites.length,
        });
      }

      const events: FindingEventInsert[] = [];
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
      const opened: Parameters<typeof insertOpenFindings>[1][number][] = [];
      const reopened: FindingContentRow[] = [];
      const refreshed: FindingContentRow[] = [];
      const resolved: { id: string; resolvedAt: Date }[] = [];
      for (const { hostId, w } of writes) {
        const f = w.finding;
        switch (w.op) {
          case "open":
            opened.push({
              ...findingContent(f),
              fingerprint: f.fingerprint,
              hostId,
              firstSeenAt: new Date(f.firstSeenAt),
            });
            event(f.id, "opened", f.lastSeenAt, { to: f.severity });
            break;
          case "reopen":
            reopened.push(findingContent(f));
            event(f.id, "reopened", f.lastSeenAt, { from: w.from, to: f.severity });
            break;
          case "refresh":
            refreshed.push(findingContent(f));
            if (w.from !== f.severity) {
              event(f.id, "severity_changed", f.lastSeenAt, { from: w.from, to: f.severity });
            }
            break;
          case "resolve":
            resolved.push({ id: f.id, resolvedAt: new Date(w.at) });
            event(f.id, "resolved", w.at, { from: f.severity, detail: w.reason });
            break;
        }
      }
      // One statement each for the whole batch (findings.ts in @tide/db).
      await insertOpenFindings(tx, opened);
      await updateFindingContent(tx, reopened, true);
      await updateFindingContent(tx, refreshed, false);
      await resolveFindings(tx, resolved);
      await insertFindingEvents(tx, events);
      // Pages refetch findings on this (live/host-live.ts); NOTIFY is delivered only if we commit.
      const changed = [...new Set(writes.map((x) => x.hostId))];
      if (changed.length > 0) {
        await tx(`SELECT count(pg_notify($1::text, h || ' findings')) FROM unnest($2::text[]) AS h`, [
          OBSERVATIONS_CHANNEL,
          changed,
        ]);
      }
      return results;
    },
    EVALUATION_TRANSACTION,
  );
}
