import { brotliCompressSync, brotliDecompressSync } from "node:zlib";
import { brotliOptions, compressAsync, type JsonValue, type TimedSample } from "./observation-codec";

/**
 * One-minute rollups of a host's observations (the tier kept for 30 days): what a history chart of
 * a day or a week needs, in a few hundred bytes per host-minute.
 *
 * Series are named by where they come from in the Observation (packages/contracts observations.ts):
 *   counters   (absolute, rising)    ns/<inode>/<nstat name>, cpu/<cpu>/<softnet field>,
 *                                    listenOverflow/<inode>/<port>, connect/<inode>/<pid>/<field>,
 *                                    icmpFragNeeded/<inode>
 *   gauges     (a value now)         ns/<inode>/sockstat/<field>, ns/<inode>/establishedTotal,
 *                                    ns/<inode>/listen/<address>:<port>/recvQ, netRx/<cpu>/intervalMaxUs,
 *                                    ns/<inode>/present (1 in each sample that carried the namespace)
 *   histograms (absolute log2 µs)    connect/<inode>/<pid>/latencyUs, netRx/<cpu>/durationUs,
 *                                    bcc/tcpconnlat/<pid>/latencyUs, bcc/softirq/<name>/durationUs
 *
 * Rates come from consecutive samples of the minute that both carry the series (the pair that
 * straddles the minute boundary belongs to neither minute; at 1 s that is one second in sixty, and
 * each rollup's `increase` still adds up exactly over the samples it saw). A decrease is a reset
 * (agent, namespace or probe restarted): as in Prometheus, the increase of that pair is the new
 * value. Rates are per second, to RATE_DIGITS significant digits; increases and histogram counts are
 * exact.
 * A series whose rates (or values) are all zero is left out: absent means zero or not reported.
 * ns/<inode>/present is never zero, so a namespace that was there but idle (no counter moved, no
 * socket) is still listed in a day's chart, with zero rates, as it is in the live one.
 */

export const ROLLUP_VERSION = 1;

/**
 * Significant digits kept of rates and gauge averages: a chart needs no more (relative error at most
 * 5e-4), and every digit dropped is about half a byte a number after compression (~280 numbers a
 * host-minute in the bench).
 */
export const RATE_DIGITS = 4;

/** [min, max, avg, last] of per-second rates, and the exact increase over the minute. */
export type RateStat = [min: number, max: number, avg: number, last: number, increase: number];
/** [min, max, avg, last] of a gauge's values. */
export type GaugeStat = [min: number, max: number, avg: number, last: number];

export interface MinuteRollup {
  v: typeof ROLLUP_VERSION;
  /** Samples rolled up. */
  samples: number;
  /** Seconds covered by the rate pairs (from the first to the last sample of the minute). */
  spanS: number;
  rates: Record<string, RateStat>;
  gauges: Record<string, GaugeStat>;
  /** Per log2 bucket, the observations added during the minute (trailing zeros left out). */
  histograms: Record<string, number[]>;
}

type Obj = { [key: string]: JsonValue };
const obj = (v: JsonValue | undefined): Obj =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? v : {};
const arr = (v: JsonValue | undefined): JsonValue[] => (Array.isArray(v) ? v : []);
const num = (v: JsonValue | undefined): number | null => (typeof v === "number" ? v : null);

interface SampleSeries {
  counters: Map<string, number>;
  gauges: Map<string, number>;
  histograms: Map<string, number[]>;
}

/** The series one Observation carries (names as in the header). */
/**
 * `ns/<inode>/<counter>` keys, made once per namespace and counter and reused: a minute of a real
 * host is 60 samples of a few hundred counters per namespace, and a key built anew for each was a
 * string to allocate, flatten and hash every time (most of a rollup's time and garbage). Bounded:
 * emptied when it holds KEY_CACHE_MAX keys (namespaces come and go on container hosts).
 */
const nsKeys = new Map<number | null, Map<string, string>>();
let nsKeyCount = 0;
const KEY_CACHE_MAX = 200_000;
function nsCounterKey(inode: number | null, name: string): string {
  let keys = nsKeys.get(inode);
  let key = keys?.get(name);
  if (key !== undefined) return key;
  // Counted per key, not per namespace: one namespace's names are a host's to choose.
  if (nsKeyCount >= KEY_CACHE_MAX) {
    nsKeys.clear();
    nsKeyCount = 0;
    keys = undefined;
  }
  if (keys === undefined) {
    keys = new Map();
    nsKeys.set(inode, keys);
  }
  key = `ns/${inode}/${name}`;
  keys.set(name, key);
  nsKeyCount++;
  return key;
}

export function seriesOf(payload: JsonValue): SampleSeries {
  const o = obj(payload);
  const counters = new Map<string, number>();
  const gauges = new Map<string, number>();
  const histograms = new Map<string, number[]>();
  const counter = (k: string, v: JsonValue | undefined) => {
    const n = num(v);
    if (n !== null) counters.set(k, n);
  };
  const gauge = (k: string, v: JsonValue | undefined) => {
    const n = num(v);
    if (n !== null) gauges.set(k, n);
  };
  const histogram = (k: string, v: JsonValue | undefined) => {
    if (Array.isArray(v))
      histograms.set(
        k,
        v.map((x) => num(x) ?? 0),
      );
  };
  for (const nsv of arr(o.namespaces)) {
    const ns = obj(nsv);
    const inode = num(obj(ns.netns).inode);
    gauge(`ns/${inode}/present`, 1);
    const nsCounters = obj(ns.counters);
    for (const name in nsCounters) {
      const n = num(nsCounters[name]);
      if (n !== null) counters.set(nsCounterKey(inode, name), n);
    }
    for (const [name, v] of Object.entries(obj(ns.sockstat))) gauge(`ns/${inode}/sockstat/${name}`, v);
    gauge(`ns/${inode}/establishedTotal`, ns.establishedTotal);
    for (const lv of arr(ns.listeners)) {
      const l = obj(lv);
      gauge(`ns/${inode}/listen/${String(l.address)}:${String(l.port)}/recvQ`, l.recvQ);
    }
  }
  for (const cv of arr(o.cpus)) {
    const c = obj(cv);
    for (const f of ["softnetProcessed", "softnetDropped", "softnetTimeSqueeze", "netRxSoftirqs"]) {
      counter(`cpu/${String(c.cpu)}/${f}`, c[f]);
    }
  }
  const pr = obj(o.probeResults);
  for (const v of arr(pr.listenOverflow)) {
    const x = obj(v);
    counter(`listenOverflow/${String(x.netnsInode)}/${String(x.port)}`, x.drops);
  }
  for (const v of arr(pr.connectLatency)) {
    const x = obj(v);
    const k = `connect/${String(x.netnsInode)}/${String(x.pid)}`;
    for (const f of ["eaddrnotavail", "evenPorts", "oddPorts"]) counter(`${k}/${f}`, x[f]);
    histogram(`${k}/latencyUs`, x.latencyUs);
  }
  for (const v of arr(pr.netRxSoftirq)) {
    const x = obj(v);
    histogram(`netRx/${String(x.cpu)}/durationUs`, x.durationUs);
    gauge(`netRx/${String(x.cpu)}/intervalMaxUs`, x.intervalMaxUs);
  }
  for (const v of arr(pr.icmpFragNeeded)) {
    const x = obj(v);
    counter(`icmpFragNeeded/${String(x.netnsInode)}`, x.sent);
  }
  const bcc = obj(o.bcc);
  for (const v of arr(bcc.tcpConnectLatency)) {
    const x = obj(v);
    histogram(`bcc/tcpconnlat/${String(x.pid)}/latencyUs`, x.latencyUs);
  }
  for (const v of arr(bcc.softirqTime)) {
    const x = obj(v);
    histogram(`bcc/softirq/${String(x.softirq)}/durationUs`, x.durationUs);
  }
  return { counters, gauges, histograms };
}

/** `x` to RATE_DIGITS significant digits. */
export const round = (x: number) => (x === 0 ? 0 : Number(x.toPrecision(RATE_DIGITS)));

/** Increase from `p` to `c` of an absolute counter (a decrease is a reset: the new value). */
export const increaseOf = (p: number, c: number) => (c >= p ? c - p : c);

/** Roll up the samples of one minute (any order). */
export function rollupMinute(samples: readonly TimedSample[]): MinuteRollup {
  const sorted = [...samples].sort((a, b) => a.sampledAt.getTime() - b.sampledAt.getTime());
  const series = sorted.map((s) => ({ t: s.sampledAt.getTime(), ...seriesOf(s.payload) }));
  const rateAcc = new Map<string, { min: number; max: number; last: number; inc: number; dtS: number }>();
  const histAcc = new Map<string, number[]>();
  for (let i = 1; i < series.length; i++) {
    const p = series[i - 1]!;
    const c = series[i]!;
    const dtS = (c.t - p.t) / 1000;
    const prev = p.counters;
    c.counters.forEach((cv, k) => {
      const pv = prev.get(k);
      if (pv === undefined) return;
      const inc = increaseOf(pv, cv);
      const rate = inc / dtS;
      const a = rateAcc.get(k);
      if (!a) rateAcc.set(k, { min: rate, max: rate, last: rate, inc, dtS });
      else {
        a.min = Math.min(a.min, rate);
        a.max = Math.max(a.max, rate);
        a.last = rate;
        a.inc += inc;
        a.dtS += dtS;
      }
    });
    for (const [k, ch] of c.histograms) {
      const ph = p.histograms.get(k);
      if (!ph) continue;
      const reset = ch.some((x, j) => x < (ph[j] ?? 0)) || ph.length > ch.length;
      const acc = histAcc.get(k) ?? [];
      ch.forEach((x, j) => (acc[j] = (acc[j] ?? 0) + (reset ? x : x - (ph[j] ?? 0))));
      histAcc.set(k, acc);
    }
  }
  const rates: Record<string, RateStat> = {};
  for (const [k, a] of rateAcc) {
    if (a.inc === 0 && a.max === 0) continue;
    rates[k] = [round(a.min), round(a.max), round(a.inc / a.dtS), round(a.last), a.inc];
  }
  const gaugeAcc = new Map<string, number[]>();
  for (const s of series) {
    for (const [k, v] of s.gauges) {
      const list = gaugeAcc.get(k) ?? [];
      list.push(v);
      gaugeAcc.set(k, list);
    }
  }
  const gauges: Record<string, GaugeStat> = {};
  for (const [k, list] of gaugeAcc) {
    if (list.every((v) => v === 0)) continue;
    const sum = list.reduce((x, y) => x + y, 0);
    gauges[k] = [Math.min(...list), Math.max(...list), round(sum / list.length), list[list.length - 1]!];
  }
  const histograms: Record<string, number[]> = {};
  for (const [k, acc] of histAcc) {
    const filled = Array.from(acc, (x) => x ?? 0);
    while (filled.length > 0 && filled[filled.length - 1] === 0) filled.pop();
    if (filled.length > 0) histograms[k] = filled;
  }
  const first = series[0]?.t ?? 0;
  const last = series[series.length - 1]?.t ?? 0;
  return {
    v: ROLLUP_VERSION,
    samples: sorted.length,
    spanS: (last - first) / 1000,
    rates,
    gauges,
    histograms,
  };
}

/** Bucket-wise sum of log2 histograms (the histogram of a longer interval). */
export function mergeHistograms(...hs: readonly number[][]): number[] {
  const out: number[] = [];
  for (const h of hs) h.forEach((x, i) => (out[i] = (out[i] ?? 0) + x));
  return Array.from(out, (x) => x ?? 0);
}

/**
 * The q-quantile (0..1) of a log2 µs histogram, as the bucket it falls in: the true value lies in
 * [lowUs, highUs), so the error is bounded by the bucket's width (a factor of 2). Null when empty.
 */
export function histogramQuantile(h: readonly number[], q: number): { lowUs: number; highUs: number } | null {
  const total = h.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let i = 0; i < h.length; i++) {
    seen += h[i]!;
    if (seen >= rank) return { lowUs: i === 0 ? 0 : 2 ** i, highUs: 2 ** (i + 1) };
  }
  return null;
}

/** A rollup as stored: brotli-compressed JSON (observation_rollups.data). */
export function encodeRollup(r: MinuteRollup): Buffer {
  // As the chunk codec: q5 is as small as q9 on a rollup, for a hundredth of the time.
  const body = Buffer.from(JSON.stringify(r));
  return brotliCompressSync(body, brotliOptions(body.length));
}

/** encodeRollup, compressing off the event loop (observation-codec.ts compressAsync). */
export function encodeRollupAsync(r: MinuteRollup): Promise<Buffer> {
  return compressAsync(Buffer.from(JSON.stringify(r)));
}

export function decodeRollup(data: Uint8Array): MinuteRollup {
  const r = JSON.parse(brotliDecompressSync(data).toString("utf8")) as MinuteRollup;
  if (r.v !== ROLLUP_VERSION) throw new Error(`observation rollup: version ${r.v} is not ${ROLLUP_VERSION}`);
  return r;
}

/**
 * Rollups of several minutes of one host in one buffer (observation_rollups rows with spanMinutes
 * > 1): brotli(JSON body), the body being
 *
 *   { v, m: minute offsets from the first, n: samples, s: spanS,
 *     r: { name: [mins, maxs, avgs, lasts, increases] }, g: { name: [mins, maxs, avgs, lasts] },
 *     h: { name: histograms } }
 *
 * every list aligned with `m` (null where the minute lacks the series): each name once, and the
 * same statistic of consecutive minutes side by side.
 */
interface PackedBody {
  v: typeof ROLLUP_VERSION;
  m: number[];
  n: number[];
  s: number[];
  r: Record<string, (number | null)[][]>;
  g: Record<string, (number | null)[][]>;
  h: Record<string, (number[] | null)[]>;
}

export interface RollupAt {
  minute: Date;
  rollup: MinuteRollup;
}

function columns<T extends number[]>(
  points: readonly RollupAt[],
  pick: (r: MinuteRollup) => Record<string, T>,
  width: number,
): Record<string, (number | null)[][]> {
  const out: Record<string, (number | null)[][]> = {};
  points.forEach((p, i) => {
    for (const [name, stat] of Object.entries(pick(p.rollup))) {
      out[name] ??= Array.from({ length: width }, () => points.map(() => null));
      stat.forEach((x, k) => (out[name]![k]![i] = x));
    }
  });
  return out;
}

/** Pack minute rollups (any order) that start at or after `first`. */
export function packRollups(first: Date, points: readonly RollupAt[]): Buffer {
  const sorted = [...points].sort((a, b) => a.minute.getTime() - b.minute.getTime());
  const h: Record<string, (number[] | null)[]> = {};
  sorted.forEach((p, i) => {
    for (const [name, hist] of Object.entries(p.rollup.histograms)) {
      h[name] ??= sorted.map(() => null);
      h[name][i] = hist;
    }
  });
  const body: PackedBody = {
    v: ROLLUP_VERSION,
    m: sorted.map((p) => Math.round((p.minute.getTime() - first.getTime()) / 60_000)),
    n: sorted.map((p) => p.rollup.samples),
    s: sorted.map((p) => p.rollup.spanS),
    r: columns(sorted, (r) => r.rates, 5),
    g: columns(sorted, (r) => r.gauges, 4),
    h,
  };
  const text = Buffer.from(JSON.stringify(body));
  return brotliCompressSync(text, brotliOptions(text.length));
}

/** The minute rollups of a packed buffer, oldest first (the inverse of packRollups). */
export function unpackRollups(first: Date, data: Uint8Array): RollupAt[] {
  const b = JSON.parse(brotliDecompressSync(data).toString("utf8")) as PackedBody;
  if (b.v !== ROLLUP_VERSION) throw new Error(`observation rollup: version ${b.v} is not ${ROLLUP_VERSION}`);
  return b.m.map((offset, i) => {
    const pick = <T>(cols: Record<string, (number | null)[][]>) => {
      const out: Record<string, T> = {};
      for (const [name, stat] of Object.entries(cols)) {
        if (stat[0]![i] !== null) out[name] = stat.map((c) => c[i]) as T;
      }
      return out;
    };
    const histograms: Record<string, number[]> = {};
    for (const [name, list] of Object.entries(b.h)) if (list[i]) histograms[name] = list[i];
    return {
      minute: new Date(first.getTime() + offset * 60_000),
      rollup: {
        v: ROLLUP_VERSION,
        samples: b.n[i]!,
        spanS: b.s[i]!,
        rates: pick<RateStat>(b.r),
        gauges: pick<GaugeStat>(b.g),
        histograms,
      },
    };
  });
}
