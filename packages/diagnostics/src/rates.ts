import type { NetnsRef, Observation, ProbeName } from "@tide/contracts";
import { RATE_WINDOW_S } from "./thresholds";

/**
 * Rates from absolute counters. A counter that went down was reset (agent, namespace or probe
 * restart; a recreated namespace gets a new inode anyway): that interval says nothing about it and
 * is left out rather than guessed. Namespaces and CPUs present in only one sample have no rate.
 *
 * Every rate is finite by construction: a reading above COUNTER_MAX is not a kernel counter (the
 * contract only says "a whole number"; 1e308 is one) and its intervals are left out like a reset,
 * so a delta is at most 2^64 and a rate at most 2^64 per millisecond of sample spacing. The u32
 * counters of /proc/net/softnet_stat and /proc/softirqs wrap at 2^32 and are unwrapped instead.
 */

/** Largest reading a kernel counter can hold: nstat and probe counters are u64. */
export const COUNTER_MAX = 2 ** 64 - 1;
/** softnet_stat columns and /proc/softirqs counts are u32: they wrap to 0 after 2^32 - 1. */
export const U32_COUNTER_RANGE = 2 ** 32;

/** How much a counter grew over some seconds. */
export interface CounterDelta {
  delta: number;
  seconds: number;
}

export interface NamespaceRates {
  netns: NetnsRef;
  /** Per nstat name; counters that reset (or are missing from one sample) are absent. */
  counters: Map<string, CounterDelta>;
  /** Names of counters that went down in some interval. */
  resets: string[];
}

export interface CpuRates {
  softnetProcessed: CounterDelta | null;
  softnetDropped: CounterDelta | null;
  softnetTimeSqueeze: CounterDelta | null;
  netRxSoftirqs: CounterDelta | null;
}

export interface ConnectDelta {
  netnsInode: number;
  pid: number;
  comm: string;
  seconds: number;
  /** connect() calls per log2 µs bucket during the interval(s). */
  latencyUs: number[];
  eaddrnotavail: number;
  evenPorts: number;
  oddPorts: number;
}

export interface Rates {
  hostId: string;
  from: string;
  to: string;
  /** Time between the first and the last sample used. */
  seconds: number;
  namespaces: Map<number, NamespaceRates>;
  /** Namespaces present at the end but not at the start, and the other way round. */
  appeared: NetnsRef[];
  disappeared: NetnsRef[];
  cpus: Map<number, CpuRates>;
  /** Key `${netnsInode}:${port}`. */
  listenOverflow: Map<string, CounterDelta & { netnsInode: number; port: number }>;
  /** Key `${netnsInode}:${pid}`. */
  connect: Map<string, ConnectDelta>;
  /** NET_RX durations per CPU: calls per log2 µs bucket. */
  netRx: Map<number, { seconds: number; durationUs: number[] }>;
  /** Per netns inode. */
  icmpFragNeeded: Map<number, CounterDelta>;
}

/** Per-second value of a delta (0 for no time). */
export function perSecond(d: CounterDelta): number {
  return d.seconds > 0 ? d.delta / d.seconds : 0;
}

/**
 * Growth of a counter between two readings, or null when the interval says nothing: a reading is
 * missing or not a counter (above COUNTER_MAX), or the counter went down (reset). A u32 counter
 * (`u32`) that went down from the upper half of its range to the lower half wrapped: its growth is
 * what it took to get round, less than half the range (a bigger "wrap" is a reset).
 */
export function counterDelta(
  prev: number | undefined,
  curr: number | undefined,
  seconds: number,
  u32 = false,
): CounterDelta | null {
  const delta = counterGrowth(prev, curr, u32);
  return delta === null ? null : { delta, seconds };
}

/** counterDelta's growth alone (no object: windowRates adds a minute of every counter with it). */
function counterGrowth(prev: number | undefined, curr: number | undefined, u32: boolean): number | null {
  if (prev === undefined || curr === undefined) return null;
  const max = u32 ? U32_COUNTER_RANGE - 1 : COUNTER_MAX;
  if (!(prev >= 0 && prev <= max && curr >= 0 && curr <= max)) return null;
  if (curr >= prev) return curr - prev;
  const wrapped = U32_COUNTER_RANGE - prev + curr;
  return u32 && wrapped < U32_COUNTER_RANGE / 2 ? wrapped : null;
}

function histogramDelta(prev: readonly number[], curr: readonly number[]): number[] | null {
  const out: number[] = [];
  for (let i = 0; i < Math.max(prev.length, curr.length); i++) {
    const b = prev[i] ?? 0;
    const c = curr[i] ?? 0;
    if (b > COUNTER_MAX || c > COUNTER_MAX) return null;
    const d = c - b;
    if (d < 0) return null;
    out.push(d);
  }
  return out;
}

/** startedAt of a probe that is on, or null. */
export function probeStartedAt(o: Observation, probe: ProbeName): string | null {
  const p = o.probes.find((x) => x.probe === probe);
  return p !== undefined && p.state === "on" ? p.startedAt : null;
}

/** Whether a probe ran through the whole interval without being reloaded. */
function probeContinuous(prev: Observation, curr: Observation, probe: ProbeName): boolean {
  const a = probeStartedAt(prev, probe);
  return a !== null && a === probeStartedAt(curr, probe);
}

/** Rates of nothing yet over [from, to]: every map and list empty. */
function noRates(hostId: string, from: string, to: string, seconds: number): Rates {
  return {
    hostId,
    from,
    to,
    seconds,
    namespaces: new Map(),
    appeared: [],
    disappeared: [],
    cpus: new Map(),
    listenOverflow: new Map(),
    connect: new Map(),
    netRx: new Map(),
    icmpFragNeeded: new Map(),
  };
}

/** Rates between two samples of the same host (curr later than prev). */
export function rates(prev: Observation, curr: Observation): Rates {
  return intervalRates(prev, curr, true);
}

/** Seconds from one sample to the next of the same host. */
function intervalSeconds(prev: Observation, curr: Observation): number {
  if (prev.hostId !== curr.hostId)
    throw new Error(`rates: samples of two hosts (${prev.hostId}, ${curr.hostId})`);
  return (Date.parse(curr.sampledAt) - Date.parse(prev.sampledAt)) / 1000;
}

/**
 * Add the namespace counters of the interval prev -> curr (`seconds` > 0) into `acc`, in place:
 * per counter the growth and the seconds, a reset's name once in its namespace's resets, the
 * namespace's identity the latest one. Into an empty `acc` this is the interval's own namespace
 * rates (rates()); windowRates adds every interval of its window with it, without building them.
 */
function addNamespaceCountersInto(acc: Rates, prev: Observation, curr: Observation, seconds: number): void {
  const prevNs = new Map(prev.namespaces.map((n) => [n.netns.inode, n]));
  for (const c of curr.namespaces) {
    const p = prevNs.get(c.netns.inode);
    if (p === undefined) continue;
    let ns = acc.namespaces.get(c.netns.inode);
    if (ns === undefined) {
      ns = { netns: c.netns, counters: new Map(), resets: [] };
      acc.namespaces.set(c.netns.inode, ns);
    } else ns.netns = c.netns;
    for (const name of Object.keys(c.counters)) {
      const before = p.counters[name];
      const delta = counterGrowth(before, c.counters[name], false);
      if (delta !== null) {
        const into = ns.counters.get(name);
        if (into === undefined) ns.counters.set(name, { delta, seconds });
        else {
          into.delta += delta;
          into.seconds += seconds;
        }
      } else if (before !== undefined && !ns.resets.includes(name)) ns.resets.push(name);
    }
  }
}

/** rates(), or without `namespaces` everything but namespace counters and appeared/disappeared. */
function intervalRates(prev: Observation, curr: Observation, namespaces: boolean): Rates {
  const seconds = intervalSeconds(prev, curr);
  const out = noRates(curr.hostId, prev.sampledAt, curr.sampledAt, Math.max(seconds, 0));
  if (namespaces) {
    const prevNs = new Set(prev.namespaces.map((n) => n.netns.inode));
    const currNs = new Set(curr.namespaces.map((n) => n.netns.inode));
    for (const n of curr.namespaces) if (!prevNs.has(n.netns.inode)) out.appeared.push(n.netns);
    for (const n of prev.namespaces) if (!currNs.has(n.netns.inode)) out.disappeared.push(n.netns);
  }
  // Clock went backwards or the same sample twice: no interval, no rates.
  if (seconds <= 0) return out;
  if (namespaces) addNamespaceCountersInto(out, prev, curr, seconds);

  const prevCpu = new Map(prev.cpus.map((c) => [c.cpu, c]));
  for (const c of curr.cpus) {
    const p = prevCpu.get(c.cpu);
    if (p === undefined) continue;
    out.cpus.set(c.cpu, {
      softnetProcessed: counterDelta(p.softnetProcessed, c.softnetProcessed, seconds, true),
      softnetDropped: counterDelta(p.softnetDropped, c.softnetDropped, seconds, true),
      softnetTimeSqueeze: counterDelta(p.softnetTimeSqueeze, c.softnetTimeSqueeze, seconds, true),
      netRxSoftirqs: counterDelta(p.netRxSoftirqs, c.netRxSoftirqs, seconds, true),
    });
  }

  const pr = prev.probeResults;
  const cr = curr.probeResults;
  if (probeContinuous(prev, curr, "listen_overflow")) {
    const before = new Map(pr.listenOverflow.map((x) => [`${x.netnsInode}:${x.port}`, x.drops]));
    for (const x of cr.listenOverflow) {
      const key = `${x.netnsInode}:${x.port}`;
      // A port first seen in this interval had no drops before: the probe counts from zero.
      const d = counterDelta(before.get(key) ?? 0, x.drops, seconds);
      if (d !== null) out.listenOverflow.set(key, { ...d, netnsInode: x.netnsInode, port: x.port });
    }
  }
  if (probeContinuous(prev, curr, "connect_latency")) {
    const before = new Map(pr.connectLatency.map((x) => [`${x.netnsInode}:${x.pid}`, x]));
    for (const x of cr.connectLatency) {
      const key = `${x.netnsInode}:${x.pid}`;
      const b = before.get(key);
      const hist = histogramDelta(b?.latencyUs ?? [], x.latencyUs);
      const fail = counterDelta(b?.eaddrnotavail ?? 0, x.eaddrnotavail, seconds);
      const even = counterDelta(b?.evenPorts ?? 0, x.evenPorts, seconds);
      const odd = counterDelta(b?.oddPorts ?? 0, x.oddPorts, seconds);
      if (hist === null || fail === null || even === null || odd === null) continue;
      out.connect.set(key, {
        netnsInode: x.netnsInode,
        pid: x.pid,
        comm: x.comm,
        seconds,
        latencyUs: hist,
        eaddrnotavail: fail.delta,
        evenPorts: even.delta,
        oddPorts: odd.delta,
      });
    }
  }
  if (probeContinuous(prev, curr, "net_rx_softirq")) {
    const before = new Map(pr.netRxSoftirq.map((x) => [x.cpu, x.durationUs]));
    for (const x of cr.netRxSoftirq) {
      const hist = histogramDelta(before.get(x.cpu) ?? [], x.durationUs);
      if (hist !== null) out.netRx.set(x.cpu, { seconds, durationUs: hist });
    }
  }
  if (probeContinuous(prev, curr, "icmp_frag_needed")) {
    const before = new Map(pr.icmpFragNeeded.map((x) => [x.netnsInode, x.sent]));
    for (const x of cr.icmpFragNeeded) {
      const d = counterDelta(before.get(x.netnsInode) ?? 0, x.sent, seconds);
      if (d !== null) out.icmpFragNeeded.set(x.netnsInode, d);
    }
  }
  return out;
}

/** `into` plus `d` as a new delta (null + null is null). */
function addDelta(into: CounterDelta | null | undefined, d: CounterDelta | null): CounterDelta | null {
  if (d === null) return into ?? null;
  if (into === null || into === undefined) return { ...d };
  return { delta: into.delta + d.delta, seconds: into.seconds + d.seconds };
}

/** Add `d` to the accumulator's own delta `into` (in place); a copy of `d` when there is none. */
function accumulate<T extends CounterDelta>(into: T | undefined, d: T): T {
  if (into === undefined) return { ...d };
  into.delta += d.delta;
  into.seconds += d.seconds;
  return into;
}

/** Add histogram `b` into `into` (in place). */
function addHistogramInto(into: number[], b: readonly number[]): void {
  for (let i = 0; i < b.length; i++) into[i] = (into[i] ?? 0) + b[i]!;
}

/**
 * Sum of the per-interval rates of consecutive samples: for each counter, the growth over the
 * intervals where it did not reset, and the seconds those intervals cover, so perSecond() is the
 * time-weighted average. Samples must be of one host, oldest first; fewer than two give no rates.
 *
 * The sum is accumulated in place into objects of its own (an evaluation adds a minute of intervals
 * of every counter: copying the maps at each step, as a fold of immutable merges would, was most of
 * diagnose()'s time). Namespace counters, most of a sample, are added straight from the samples
 * (addNamespaceCountersInto) without building each interval's rates first: at 1,000 hosts that was
 * 5 % of the console's event loop, and garbage.
 */
export function windowRates(samples: readonly Observation[], sums?: NamespaceWindowSums): Rates | null {
  if (samples.length < 2) return null;
  const first = samples[0]!;
  const last = samples[samples.length - 1]!;
  const acc = noRates(last.hostId, first.sampledAt, first.sampledAt, 0);
  const seconds: number[] = [];
  for (let i = 1; i < samples.length; i++) {
    const r = intervalRates(samples[i - 1]!, samples[i]!, false);
    addRatesInto(acc, r);
    seconds.push(r.seconds);
  }
  const summed = sums?.namespaces(samples, acc.seconds);
  if (summed) acc.namespaces = summed;
  else {
    for (let i = 1; i < samples.length; i++) {
      if (seconds[i - 1]! > 0) addNamespaceCountersInto(acc, samples[i - 1]!, samples[i]!, seconds[i - 1]!);
    }
  }
  const firstNs = new Set(first.namespaces.map((n) => n.netns.inode));
  const lastNs = new Set(last.namespaces.map((n) => n.netns.inode));
  acc.appeared = last.namespaces.filter((n) => !firstNs.has(n.netns.inode)).map((n) => n.netns);
  acc.disappeared = first.namespaces.filter((n) => !lastNs.has(n.netns.inode)).map((n) => n.netns);
  return acc;
}

/**
 * Add the rates of the interval after `acc` into it, in place, except namespace counters (windowRates
 * adds those with addNamespaceCountersInto; `b` has none). Every object `acc` holds is its own
 * (copied from `b` when first seen), so `b` is never changed; what is per interval and not summed
 * (a pid's comm) is the latest interval's.
 */
function addRatesInto(acc: Rates, b: Rates): void {
  acc.to = b.to;
  acc.seconds += b.seconds;
  for (const [cpu, cb] of b.cpus) {
    const ca = acc.cpus.get(cpu);
    acc.cpus.set(cpu, {
      softnetProcessed: addDelta(ca?.softnetProcessed, cb.softnetProcessed),
      softnetDropped: addDelta(ca?.softnetDropped, cb.softnetDropped),
      softnetTimeSqueeze: addDelta(ca?.softnetTimeSqueeze, cb.softnetTimeSqueeze),
      netRxSoftirqs: addDelta(ca?.netRxSoftirqs, cb.netRxSoftirqs),
    });
  }
  for (const [k, d] of b.listenOverflow) {
    const p = acc.listenOverflow.get(k);
    acc.listenOverflow.set(
      k,
      p === undefined ? { ...d } : { ...d, delta: p.delta + d.delta, seconds: p.seconds + d.seconds },
    );
  }
  for (const [k, d] of b.connect) {
    const p = acc.connect.get(k);
    if (p === undefined) {
      acc.connect.set(k, { ...d, latencyUs: [...d.latencyUs] });
      continue;
    }
    addHistogramInto(p.latencyUs, d.latencyUs);
    acc.connect.set(k, {
      ...d,
      seconds: p.seconds + d.seconds,
      latencyUs: p.latencyUs,
      eaddrnotavail: p.eaddrnotavail + d.eaddrnotavail,
      evenPorts: p.evenPorts + d.evenPorts,
      oddPorts: p.oddPorts + d.oddPorts,
    });
  }
  for (const [cpu, d] of b.netRx) {
    const p = acc.netRx.get(cpu);
    if (p === undefined) {
      acc.netRx.set(cpu, { seconds: d.seconds, durationUs: [...d.durationUs] });
      continue;
    }
    p.seconds += d.seconds;
    addHistogramInto(p.durationUs, d.durationUs);
  }
  for (const [k, d] of b.icmpFragNeeded) acc.icmpFragNeeded.set(k, accumulate(acc.icmpFragNeeded.get(k), d));
}

/**
 * An interval's growth of one counter above which a window is not summed (NamespaceWindowSums):
 * 2^46 a second-ish interval is far beyond any kernel counter's, and a minute of such growths
 * still adds up below 2^53, where every sum and difference of whole numbers is exact.
 */
const SUMMED_GROWTH_MAX = 2 ** 46;

/** One host's running namespace-counter sums (NamespaceWindowSums). */
interface HostSums {
  /** The window the sums are of (its Observation objects, oldest first). */
  samples: readonly Observation[];
  /** Namespace inodes in every sample's order, and each one's counter names in order. */
  inodes: number[];
  names: string[][];
  /** Per namespace, per counter: the sum of its growths over the window's intervals. */
  sums: Float64Array[];
}

/**
 * The namespace counters of windowRates, kept per host and slid instead of summed again: the
 * finding evaluator asks for a host's last minute every few seconds, so consecutive windows share
 * all but a few samples, and the namespace counters (a few hundred per namespace on a real host)
 * are most of what windowRates adds up. A window that moved forward costs the intervals that left
 * (subtracted) and the ones that came (added), not the whole minute.
 *
 * Exactly windowRates' namespaces, or nothing: only for a "uniform" window, where every sample has
 * the same namespaces with the same counter names in the same order, every interval is longer than
 * zero, and no counter reset, went missing or grew by more than SUMMED_GROWTH_MAX. Then each
 * counter's growth over the window is the sum of its interval growths (whole numbers below 2^53:
 * exact in any order) over all of the window's seconds, maps keep the samples' order and nothing
 * reset. Any other window gives null (windowRates then adds it up as before), and is remembered,
 * so windows that still hold the interval that broke uniformity are not tried again.
 *
 * Windows are matched by Observation identity (the evaluation window cache hands out the same
 * objects until it reads a host again): a window whose first sample is not in the last one, or
 * whose overlap differs, is summed from scratch. Bounded: `maxHosts` hosts, least recently used
 * dropped first.
 */
export class NamespaceWindowSums {
  private readonly hosts = new Map<string, HostSums | { blockedUntil: number }>();
  /** Windows answered by sliding the last sums, by summing anew, or not (null): tests, benches. */
  readonly stats = { slid: 0, summed: 0, notUniform: 0 };

  constructor(private readonly maxHosts = 10_000) {}

  /** Hosts remembered (tests). */
  get size(): number {
    return this.hosts.size;
  }

  /**
   * windowRates' namespaces for `samples` (one host, oldest first, at least two), given the
   * window's total `seconds`, or null when the window is not uniform.
   */
  namespaces(samples: readonly Observation[], seconds: number): Map<number, NamespaceRates> | null {
    if (samples.length < 2) return null;
    const last = samples[samples.length - 1]!;
    const hostId = last.hostId;
    const known = this.hosts.get(hostId);
    this.hosts.delete(hostId);
    if (known && "blockedUntil" in known && Date.parse(samples[0]!.sampledAt) < known.blockedUntil) {
      this.keep(hostId, known);
      this.stats.notUniform++;
      return null;
    }
    const slid = known !== undefined && !("blockedUntil" in known) && slide(known, samples);
    const st = slid ? (known as HostSums) : sumWindow(samples);
    this.keep(hostId, st);
    if ("blockedUntil" in st) {
      this.stats.notUniform++;
      return null;
    }
    if (slid) this.stats.slid++;
    else this.stats.summed++;
    const out = new Map<number, NamespaceRates>();
    for (let k = 0; k < st.inodes.length; k++) {
      const names = st.names[k]!;
      const sums = st.sums[k]!;
      const counters = new Map<string, CounterDelta>();
      for (let j = 0; j < names.length; j++) counters.set(names[j]!, { delta: sums[j]!, seconds });
      out.set(st.inodes[k]!, { netns: last.namespaces[k]!.netns, counters, resets: [] });
    }
    return out;
  }

  private keep(hostId: string, st: HostSums | { blockedUntil: number }): void {
    this.hosts.set(hostId, st);
    for (const id of this.hosts.keys()) {
      if (this.hosts.size <= this.maxHosts) break;
      this.hosts.delete(id);
    }
  }
}

/**
 * Add (sign 1) or subtract (-1) the interval prev -> curr's counter growths into st.sums. False
 * when the interval is not uniform with st's namespaces and names (st.sums is then half-changed:
 * the caller drops it). Only curr's names and order count, as in windowRates, which reads prev's
 * values by curr's names: every sample of a window but the first is a curr once.
 */
function addInterval(st: HostSums, prev: Observation, curr: Observation, sign: 1 | -1): boolean {
  if (!(Date.parse(curr.sampledAt) > Date.parse(prev.sampledAt))) return false;
  const n = st.inodes.length;
  if (prev.namespaces.length !== n || curr.namespaces.length !== n) return false;
  for (let k = 0; k < n; k++) {
    const p = prev.namespaces[k]!;
    const c = curr.namespaces[k]!;
    if (p.netns.inode !== st.inodes[k] || c.netns.inode !== st.inodes[k]) return false;
    const names = st.names[k]!;
    const sums = st.sums[k]!;
    let j = 0;
    for (const name in c.counters) {
      if (name !== names[j]) return false;
      const g = counterGrowth(p.counters[name], c.counters[name], false);
      if (g === null || g > SUMMED_GROWTH_MAX) return false;
      sums[j] = sign === 1 ? sums[j]! + g : sums[j]! - g;
      j++;
    }
    if (j !== names.length) return false;
  }
  return true;
}

/** Sums of a whole window, or where it stops being uniform (its newest interval that is not). */
function sumWindow(samples: readonly Observation[]): HostSums | { blockedUntil: number } {
  const last = samples[samples.length - 1]!;
  const names = last.namespaces.map((ns) => Object.keys(ns.counters));
  const st: HostSums = {
    samples,
    inodes: last.namespaces.map((ns) => ns.netns.inode),
    names,
    sums: names.map((n) => new Float64Array(n.length)),
  };
  // Newest first: the first interval found not uniform is the newest one, which says how long
  // every later window still holds it.
  for (let i = samples.length - 1; i > 0; i--) {
    if (!addInterval(st, samples[i - 1]!, samples[i]!, 1)) {
      return { blockedUntil: Date.parse(samples[i]!.sampledAt) };
    }
  }
  return st;
}

/** Move st's sums from its window to `samples`, a later one overlapping it; false when it cannot. */
function slide(st: HostSums, samples: readonly Observation[]): boolean {
  const old = st.samples;
  const j = old.indexOf(samples[0]!);
  if (j < 0) return false;
  const kept = old.length - j;
  if (samples.length < kept) return false;
  for (let i = 0; i < kept; i++) if (old[j + i] !== samples[i]) return false;
  for (let i = 1; i <= j; i++) if (!addInterval(st, old[i - 1]!, old[i]!, -1)) return false;
  for (let i = kept; i < samples.length; i++) {
    if (!addInterval(st, samples[i - 1]!, samples[i]!, 1)) return false;
  }
  st.samples = samples;
  return true;
}

/** One host's samples in a rolling window ending at its latest sample. */
export interface HostWindow {
  hostId: string;
  /** Samples within the window, oldest first (at least one). */
  samples: Observation[];
  latest: Observation;
  /** Counter rates over the window, or null with a single sample. */
  rates: Rates | null;
}

/**
 * Split observations by host and keep, for each, the samples of the last `seconds` before its
 * latest one (inclusive). Input order does not matter; duplicate sample times keep the last copy.
 */
export function rollingWindows(
  observations: readonly Observation[],
  seconds = RATE_WINDOW_S,
  sums?: NamespaceWindowSums,
): HostWindow[] {
  const byHost = new Map<string, Map<string, Observation>>();
  for (const o of observations) {
    const m = byHost.get(o.hostId) ?? new Map<string, Observation>();
    m.set(o.sampledAt, o);
    byHost.set(o.hostId, m);
  }
  const out: HostWindow[] = [];
  for (const [hostId, m] of [...byHost].sort(([a], [b]) => a.localeCompare(b))) {
    const all = [...m.values()].sort((a, b) => Date.parse(a.sampledAt) - Date.parse(b.sampledAt));
    const latest = all[all.length - 1]!;
    const start = Date.parse(latest.sampledAt) - seconds * 1000;
    const samples = all.filter((o) => Date.parse(o.sampledAt) >= start);
    out.push({ hostId, samples, latest, rates: windowRates(samples, sums) });
  }
  return out;
}
