import { netnsKey, TideError, type NetnsRef, type Observation } from "@tide/contracts";
import { counterDelta, perSecond } from "@tide/diagnostics";
import { round, type RollupColumns } from "@tide/db";

/**
 * A host's history as chart-ready series (issue 16), decided without I/O: which range a request
 * means, which storage tier serves it, the bucket grid, and per namespace and counter the per-second
 * rates of each bucket as min / avg / max / last. host-history.service.ts reads the tier and calls
 * these; the shapes are in schemas/history.schema.ts.
 *
 * Gaps stay gaps: a bucket with no sample (or no rollup) is null in every array, never 0 and never
 * interpolated, so a chart breaks its line there.
 */

/** The named ranges, back from the console's clock, in ms. */
export const HISTORY_RANGES = {
  "15m": 15 * 60_000,
  "1h": 60 * 60_000,
  "24h": 24 * 60 * 60_000,
  "7d": 7 * 24 * 60 * 60_000,
} as const;
export type HistoryRangeName = keyof typeof HISTORY_RANGES;

/**
 * Longest range served from the 1 s tier even when all of it is retained: 3,600 samples of a few kB
 * of jsonb each (~10 MB decoded) is what one request should read; longer ranges use the rollups
 * (a day is 1,440 of them). Matches observationHistory's default in packages/db.
 */
export const MAX_SAMPLES_RANGE_MS = 60 * 60_000;

/**
 * Points per series at most: a chart 1,000-1,500 px wide has about one point a pixel. A day of
 * one-minute rollups (1,440) fits at full resolution; a week gets 10-minute buckets (1,008).
 */
export const MAX_HISTORY_POINTS = 1_500;

/** Bucket widths in seconds, from the finest; the grid takes the first that fits MAX_HISTORY_POINTS. */
export const SAMPLE_STEPS_S = [1, 2, 3, 5, 10, 15, 30, 60] as const;
export const ROLLUP_STEPS_S = [60, 120, 300, 600, 900, 1_800, 3_600, 7_200, 21_600, 43_200, 86_400] as const;

/** How many ms a sample may precede `from` and still be read as the base of the first rate. */
export const RATE_BASE_MS = 10_000;

export type HistoryTier = "samples" | "rollups";

export interface HistoryWindow {
  from: number;
  to: number;
  /** The named range asked for, or null for from/to. */
  range: HistoryRangeName | null;
}

export interface HistoryLimits {
  /** How far back the rollups reach (TIDE_OBSERVATION_ROLLUP_DAYS), ms. */
  rollupRetentionMs: number;
}

const bad = (message: string) => new TideError("bad_request", message);

function parseTime(name: string, value: string): number {
  // ISO 8601 with a date and a time (and zone): what the console and runbooks send. Date.parse alone
  // would accept "1" or "March 3".
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value)) {
    throw bad(`${name} "${value}" is not an ISO 8601 time (e.g. 2026-11-27T03:00:00Z).`);
  }
  const t = Date.parse(value);
  if (!Number.isFinite(t)) throw bad(`${name} "${value}" is not a valid time.`);
  return t;
}

/**
 * The window a request means: `range` (15m, 1h, 24h, 7d back from `now`) or `from` and `to` (ISO
 * times). Refused with a plain message: both or neither given, an unknown range, an unparseable
 * time, from >= to, and a window reaching further back than the rollups are kept.
 */
export function planHistoryWindow(
  input: { range?: string | undefined; from?: string | undefined; to?: string | undefined },
  now: number,
  limits: HistoryLimits,
): HistoryWindow {
  const hasRange = input.range !== undefined && input.range !== "";
  const hasFrom = input.from !== undefined && input.from !== "";
  const hasTo = input.to !== undefined && input.to !== "";
  const days = Math.round(limits.rollupRetentionMs / 86_400_000);
  let window: HistoryWindow;
  if (hasRange) {
    if (hasFrom || hasTo) throw bad("Give either range or from and to, not both.");
    if (!Object.hasOwn(HISTORY_RANGES, input.range!)) {
      throw bad(`range "${input.range}" is not one of ${Object.keys(HISTORY_RANGES).join(", ")}.`);
    }
    const name = input.range as HistoryRangeName;
    window = { from: now - HISTORY_RANGES[name], to: now, range: name };
  } else {
    if (!hasFrom || !hasTo) throw bad("Give range (15m, 1h, 24h, 7d) or both from and to.");
    const from = parseTime("from", input.from!);
    const to = parseTime("to", input.to!);
    if (from >= to) throw bad("from must be before to.");
    window = { from, to, range: null };
  }
  if (window.to - window.from > limits.rollupRetentionMs) {
    throw bad(`The range is longer than the ${days} days of history kept.`);
  }
  if (window.from < now - limits.rollupRetentionMs) {
    throw bad(`from is older than the ${days} days of history kept.`);
  }
  return window;
}

/**
 * The tier that serves a window: the 1 s samples when the whole window is within their retention
 * and at most MAX_SAMPLES_RANGE_MS long, the one-minute rollups otherwise.
 */
export function historyTier(window: { from: number; to: number }, now: number, samplesRetentionMs: number) {
  const retained = window.from >= now - samplesRetentionMs;
  return retained && window.to - window.from <= MAX_SAMPLES_RANGE_MS ? "samples" : ("rollups" as HistoryTier);
}

export interface HistoryGrid {
  /** Start of the first bucket, ms (a multiple of the step, so rollup minutes never straddle two). */
  start: number;
  stepS: number;
  points: number;
}

/** Buckets covering [from, to]: the finest step of the tier that keeps within MAX_HISTORY_POINTS. */
export function historyGrid(window: { from: number; to: number }, tier: HistoryTier): HistoryGrid {
  const steps = tier === "samples" ? SAMPLE_STEPS_S : ROLLUP_STEPS_S;
  const span = window.to - window.from;
  const stepS = steps.find((s) => span / (s * 1000) < MAX_HISTORY_POINTS) ?? steps[steps.length - 1]!;
  const stepMs = stepS * 1000;
  const start = Math.floor(window.from / stepMs) * stepMs;
  const points = Math.max(1, Math.floor((window.to - start) / stepMs) + 1);
  return { start, stepS, points };
}

/** Per-second rates of one counter per bucket; null where the bucket has no data (a gap). */
export interface CounterHistory {
  counter: string;
  min: (number | null)[];
  avg: (number | null)[];
  max: (number | null)[];
  last: (number | null)[];
}

export interface NamespaceHistory {
  key: string;
  netns: NetnsRef;
  series: CounterHistory[];
}

/** One bucket's accumulator of rates over intervals (weighted by their seconds for the average). */
interface Acc {
  /** Contributions; with one, its own average is reported as is (no rounding through the weights). */
  n: number;
  first: number;
  min: number;
  max: number;
  weighted: number;
  seconds: number;
  last: number;
}

function add(
  acc: Acc | undefined,
  min: number,
  max: number,
  avg: number,
  last: number,
  seconds: number,
): Acc {
  if (!acc) return { n: 1, first: avg, min, max, weighted: avg * seconds, seconds, last };
  acc.n += 1;
  acc.min = Math.min(acc.min, min);
  acc.max = Math.max(acc.max, max);
  acc.weighted += avg * seconds;
  acc.seconds += seconds;
  acc.last = last;
  return acc;
}

function seriesOfAccs(counter: string, accs: readonly (Acc | undefined)[]): CounterHistory {
  const out: CounterHistory = { counter, min: [], avg: [], max: [], last: [] };
  for (const a of accs) {
    out.min.push(a ? a.min : null);
    out.max.push(a ? a.max : null);
    out.avg.push(a ? (a.n === 1 ? a.first : a.weighted / a.seconds) : null);
    out.last.push(a ? a.last : null);
  }
  return out;
}

const bucketOf = (grid: HistoryGrid, t: number) => Math.floor((t - grid.start) / (grid.stepS * 1000));

/** A stored sample as the plan reads it. */
export interface HistorySample {
  at: number;
  obs: Pick<Observation, "namespaces">;
}

/**
 * The 1 s tier as series: each sample's per-second rate since the previous sample (the live charts'
 * rule: a reset or a missing counter gives no rate), put in the bucket of the later sample. A
 * bucket with no rate is null. Samples before the grid only serve as the base of the first rate.
 */
export function seriesOfSamples(
  samples: readonly HistorySample[],
  grid: HistoryGrid,
  counters: readonly string[],
): NamespaceHistory[] {
  const sorted = [...samples].sort((a, b) => a.at - b.at);
  const byKey = new Map<string, { netns: NetnsRef; accs: Map<string, (Acc | undefined)[]> }>();
  let prev: HistorySample | undefined;
  for (const s of sorted) {
    const i = bucketOf(grid, s.at);
    const dt = prev ? (s.at - prev.at) / 1000 : 0;
    if (i >= 0 && i < grid.points) {
      for (const ns of s.obs.namespaces) {
        const key = netnsKey(ns.netns);
        let entry = byKey.get(key);
        if (!entry) {
          entry = { netns: ns.netns, accs: new Map(counters.map((c) => [c, new Array(grid.points)])) };
          byKey.set(key, entry);
        }
        const before = prev?.obs.namespaces.find((n) => netnsKey(n.netns) === key);
        for (const c of counters) {
          const d = dt > 0 ? counterDelta(before?.counters[c], ns.counters[c], dt) : null;
          if (d === null) continue;
          const rate = perSecond(d);
          if (!Number.isFinite(rate)) continue;
          const accs = entry.accs.get(c)!;
          accs[i] = add(accs[i], rate, rate, rate, rate, dt);
        }
      }
    }
    prev = s;
  }
  return inNamespaceOrder(
    [...byKey.entries()].map(([key, e]) => ({
      key,
      netns: e.netns,
      series: counters.map((c) => seriesOfAccs(c, e.accs.get(c)!)),
    })),
  );
}

/** Both tiers in one order, so a namespace keeps its place when a range changes tier: root first. */
function inNamespaceOrder(out: NamespaceHistory[]): NamespaceHistory[] {
  return out.sort((a, b) => Number(b.netns.root) - Number(a.netns.root) || a.key.localeCompare(b.key));
}

/** The rollups of a range as columns (packages/db rollupColumnsOfRange, columnsOfRollups). */
export type HistoryRollupColumns = Pick<RollupColumns, "minutes" | "spanS" | "rates" | "names">;

/** The charted counters' rate series names, as the rollups name them (ns/<inode>/<counter>). */
export function chartedRateSeries(counters: readonly string[]): (name: string) => boolean {
  const wanted = new Set(counters);
  return (name) => {
    const m = /^ns\/\d+\/(.+)$/.exec(name);
    return m !== null && wanted.has(m[1]!);
  };
}

/** `a` then `b`, whose minutes all come after `a`'s (stored rollups, then the newest rolled here). */
export function concatColumns(a: HistoryRollupColumns, b: HistoryRollupColumns): HistoryRollupColumns {
  const n = a.minutes.length;
  const m = b.minutes.length;
  const rates: HistoryRollupColumns["rates"] = {};
  for (const name of new Set([...Object.keys(a.rates), ...Object.keys(b.rates)])) {
    rates[name] = [
      ...(a.rates[name] ?? new Array(n).fill(null)),
      ...(b.rates[name] ?? new Array(m).fill(null)),
    ];
  }
  return {
    minutes: [...a.minutes, ...b.minutes],
    spanS: [...a.spanS, ...b.spanS],
    rates,
    names: new Set([...a.names, ...b.names]),
  };
}

const ZERO_RATE = [0, 0, 0, 0, 0] as const;

/**
 * The rollup tier as series: per bucket, the min of the minutes' minimum rates, the max of their
 * maxima, their averages weighted by the seconds each covered (to the rollups' RATE_DIGITS), and
 * the last minute's last rate. The rollups leave out series whose rates were all zero: in a minute
 * that has a rollup, an absent counter of a namespace the range has seen is 0; a minute without a
 * rollup is a gap. Namespaces are named from `known` (inode -> the netns a recent sample reports),
 * else by inode.
 */
export function seriesOfRollups(
  cols: HistoryRollupColumns,
  grid: HistoryGrid,
  counters: readonly string[],
  known: ReadonlyMap<number, NetnsRef>,
): NamespaceHistory[] {
  const inodes = new Set<number>();
  for (const k of cols.names) {
    const m = /^ns\/(\d+)\//.exec(k);
    if (m) inodes.add(Number(m[1]));
  }
  const buckets = cols.minutes.map((t) => bucketOf(grid, t));
  const out: NamespaceHistory[] = [];
  for (const inode of [...inodes].sort((a, b) => a - b)) {
    const netns = known.get(inode) ?? { inode, name: null, root: false };
    const series = counters.map((c) => {
      const col = cols.rates[`ns/${inode}/${c}`];
      const accs: (Acc | undefined)[] = new Array(grid.points);
      buckets.forEach((b, i) => {
        if (b < 0 || b >= grid.points) return;
        const [min, max, avg, last] = col?.[i] ?? ZERO_RATE;
        // A minute of one sample has no rate pair (spanS 0): it still says "present", weight 1 s.
        const span = cols.spanS[i]!;
        accs[b] = add(accs[b], min, max, avg, last, span > 0 ? span : 1);
      });
      const s = seriesOfAccs(c, accs);
      s.avg = s.avg.map((v) => (v === null ? null : round(v)));
      return s;
    });
    out.push({ key: netnsKey(netns), netns, series });
  }
  return inNamespaceOrder(out);
}

/**
 * Minutes the compactor has not rolled up yet (the newest few, still raw): their samples grouped by
 * minute start, for the service to roll up as the compactor will, so a day's chart reaches now.
 * Minutes in `rolled` (already rolled up) are left out.
 */
export function unrolledMinutes<S extends { sampledAt: Date }>(
  samples: readonly S[],
  rolled: ReadonlySet<number>,
): Map<number, S[]> {
  const out = new Map<number, S[]>();
  for (const s of samples) {
    const minute = Math.floor(s.sampledAt.getTime() / 60_000) * 60_000;
    if (rolled.has(minute)) continue;
    const list = out.get(minute) ?? [];
    list.push(s);
    out.set(minute, list);
  }
  return out;
}

/** How a chart names the data it shows, e.g. "1 s samples" or "1 min rollups, 10 min buckets". */
export function historyLabel(tier: HistoryTier, stepS: number): string {
  const unit = (s: number) =>
    s % 3_600 === 0 ? `${s / 3_600} h` : s % 60 === 0 ? `${s / 60} min` : `${s} s`;
  const base = tier === "samples" ? "1 s samples" : "1 min rollups";
  const native = tier === "samples" ? 1 : 60;
  return stepS === native ? base : `${base}, ${unit(stepS)} buckets`;
}
