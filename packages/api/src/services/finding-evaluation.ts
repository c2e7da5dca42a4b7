/**
 * Findings evaluation of one host: diagnostics over its newest samples, reconciled with the stored
 * findings in one transaction. When it runs is finding-evaluator.ts's business (the scheduler).
 */
import { Finding, KernelFindingKind, type Observation } from "@tide/contracts";
import {
  evaluationWindow,
  evaluationWindowShape,
  findingSelect,
  newestSampleAt,
  type Db,
  type FindingEventType,
  type FindingRow,
  type FindingSeverity,
  type Prisma,
} from "@tide/db";
import { diagnose, RATE_WINDOW_S, resolve } from "@tide/diagnostics";
import { isDeepStrictEqual } from "node:util";
import { OBSERVATIONS_CHANNEL } from "../live/channels";
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

/**
 * The host's evaluation window, oldest first, and its newest sample's time: from this process's
 * cache when the database's shape of the window says it holds all of it, else read (and cached).
 */
async function hostWindow(
  db: Db | Prisma.TransactionClient,
  cache: EvaluationWindowCache,
  hostId: string,
): Promise<{ window: Observation[]; newest: Date } | null> {
  if (cache.has(hostId)) {
    const shape = await evaluationWindowShape(db, hostId, EVALUATION_WINDOW_S);
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
 * samples came meanwhile). Prisma's default 5 s limit is too short for a host with dozens of
 * namespaces and findings on a busy console: every evaluation of that host would time out and its
 * findings would never open. A minute is still bounded; maxWait bounds the wait for a pooled
 * connection.
 */
const EVALUATION_TRANSACTION = { timeout: 60_000, maxWait: 10_000 };

/**
 * Rewrite the content of open findings that diagnostics refreshed, in one statement. A host with
 * problems refreshes every finding at each evaluation (its lastSeenAt and evidence move), and one
 * Prisma update per finding was most of what a busy console's evaluator spent.
 */
async function refreshFindings(tx: Prisma.TransactionClient, findings: readonly Finding[]): Promise<void> {
  if (findings.length === 0) return;
  const rows = findings.map((f) => ({
    id: f.id,
    kind: f.kind,
    incident: f.incident,
    severity: f.severity,
    title: f.title,
    subject: f.subject,
    evidence: f.evidence,
    explanation: f.explanation,
    remedy: f.remedy,
    last_seen_at: f.lastSeenAt,
  }));
  // Timestamps are stored as UTC without a zone (Prisma's DateTime).
  await tx.$executeRawUnsafe(
    `UPDATE findings f
        SET kind = x.kind, incident = x.incident, severity = x.severity::"FindingSeverity",
            title = x.title, subject = x.subject, evidence = x.evidence,
            explanation = x.explanation, remedy = x.remedy,
            last_seen_at = x.last_seen_at::timestamptz AT TIME ZONE 'UTC'
       FROM jsonb_to_recordset($1::jsonb) AS x(id text, kind text, incident int, severity text,
            title text, subject jsonb, evidence jsonb, explanation text, remedy jsonb,
            last_seen_at text)
      WHERE f.id = x.id`,
    JSON.stringify(rows),
  );
}

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

/** One write an evaluation makes to bring stored findings up to date. */
type FindingWrite =
  | { op: "open"; finding: Finding }
  | { op: "reopen"; finding: Finding; from: FindingSeverity }
  | { op: "refresh"; finding: Finding; from: FindingSeverity }
  | { op: "resolve"; finding: Finding; at: string; reason: string };

/** The host's stored findings of the kinds diagnostics owns. */
function kernelFindings(tx: Db | Prisma.TransactionClient, hostId: string): Promise<FindingRow[]> {
  // Diagnostics owns the kernel kinds only: health findings (health-findings.ts) are the health
  // checks' to open and resolve, never "gone" because the counters do not show them.
  return tx.finding.findMany({
    where: { hostId, kind: { in: KernelFindingKind.options } },
    select: findingSelect,
  });
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
): FindingWrite[] {
  const byId = new Map(stored.map((r) => [r.id, r]));
  const previous = stored.filter((r) => r.status !== "resolved").map(rowToFinding);
  const result = resolve(previous, current, window);
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

/**
 * Re-run diagnostics over the host's last EVALUATION_WINDOW_S of samples and bring its findings up
 * to date: new ones open, known ones refresh (severity changes are recorded), vanished ones resolve
 * when the window could evaluate them, resolved ones that come back reopen. Findings whose content
 * did not change are not rewritten; history events go in one insert. When anything was written,
 * live pages are notified (delivered at commit).
 *
 * The window comes from this process's memory when the database confirms it is complete
 * (hostWindow: one index-only statement instead of a minute of payloads). It and the stored
 * findings are read outside any transaction: most evaluations change nothing (a host without
 * problems), and those end there. Only when something is to be written does it take the per-host
 * advisory lock in a transaction, read the findings again under it and write what they still lack,
 * so two evaluations of one host (two console processes) never race on the same findings; one whose
 * window a newer sample has overtaken meanwhile evaluates the newer window there. (It used to hold
 * the lock and a transaction for every evaluation: five round trips and Prisma's transaction
 * machinery for a usual result of "nothing to do".)
 */
export async function evaluateHost(db: Db, hostId: string): Promise<EvaluationResult> {
  const nothing = { opened: 0, resolved: 0, written: 0 };
  const cache = windowCacheFor(db);
  const read = await hostWindow(db, cache, hostId);
  if (!read) return nothing;
  let { window, newest } = read;
  let current = diagnose(window);
  const unlocked = findingWrites(await kernelFindings(db, hostId), current, window, newest, true);
  if (unlocked.length === 0) return nothing;

  return db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`findings:${hostId}`}))`;
    // A sample newer than our window arrived meanwhile (and maybe another process evaluated it):
    // evaluate the window as it is now, under the lock, rather than write findings back to an older
    // one. Never give up instead: a host whose batches come faster than an evaluation takes would
    // never get its findings written.
    const latest = await newestSampleAt(tx, hostId);
    if (latest && latest > newest) {
      const again = await hostWindow(tx, cache, hostId);
      if (!again) return nothing;
      ({ window, newest } = again);
      current = diagnose(window);
    }
    const stored = await kernelFindings(tx, hostId);
    const writes = findingWrites(stored, current, window, newest, false);
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
    let resolved = 0;
    const refreshed: Finding[] = [];
    for (const w of writes) {
      const f = w.finding;
      switch (w.op) {
        case "open":
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
          break;
        case "reopen":
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
          event(f.id, "reopened", f.lastSeenAt, { from: w.from, to: f.severity });
          opened++;
          break;
        case "refresh":
          refreshed.push(f);
          if (w.from !== f.severity) {
            event(f.id, "severity_changed", f.lastSeenAt, { from: w.from, to: f.severity });
          }
          break;
        case "resolve":
          await tx.finding.update({
            where: { id: f.id },
            data: {
              status: "resolved",
              resolvedAt: new Date(w.at),
              acknowledgedBy: null,
              acknowledgedAt: null,
            },
          });
          event(f.id, "resolved", w.at, { from: f.severity, detail: w.reason });
          resolved++;
          break;
      }
    }
    await refreshFindings(tx, refreshed);
    if (events.length > 0) await tx.findingEvent.createMany({ data: events });
    // Pages refetch findings on this (live/host-live.ts); NOTIFY is delivered only if we commit.
    if (writes.length > 0) {
      await tx.$executeRaw`SELECT pg_notify(${OBSERVATIONS_CHANNEL}, ${`${hostId} findings`})`;
    }
    return { opened, resolved, written: writes.length };
  }, EVALUATION_TRANSACTION);
}
