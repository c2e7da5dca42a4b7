import type { RedirectCounters, RedirectVip, RedirectVipCounters } from "@tide/contracts";
import { counterDelta, perSecond } from "@tide/diagnostics";
import { isIP } from "node:net";

/**
 * A proxy host's live traffic (issue 12 item 3, issue 26 item 5), recomputed from each of its
 * agent's batches and kept on the host (hosts.traffic): tide-redirect's rates over the last
 * interval between two readings, host-wide and per VIP (so each pool the host is a proxy of gets
 * the figures of its own VIPs: trafficForBinds), and the ESTABLISHED TCP sockets per local
 * address:port, with a short history of the total so a draining proxy shows how fast its
 * connections fall. Pure: ingest reads the previous value and writes the next.
 */

/** Points of established history kept (one per batch: about a minute at 1 s). */
export const ESTABLISHED_HISTORY = 60;
/**
 * Readings of accepted_alternate_hash kept per host: those of the last ALTERNATE_HASH_KEEP_MS (and
 * the one before them, where a window starts), at most ALTERNATE_HASH_MAX_POINTS (readings every
 * second: 2 minutes). Long enough for a hash migration's quiet window (hash-migration.plan.ts,
 * 30 s); a window longer than what is kept has no answer (alternateHashRate: null).
 */
export const ALTERNATE_HASH_KEEP_MS = 120_000;
export const ALTERNATE_HASH_MAX_POINTS = 150;

/**
 * A reading is late when it comes more than LATE_INTERVAL_FACTOR expected intervals plus
 * LATE_MARGIN_MS after the one before (or none has come that long): an agent a second behind is
 * jitter (a slow sample, a batch that waited for the one before it), twice its interval is a
 * missed reading. Rates over a late interval are not shown: they would average a gap.
 */
export const LATE_INTERVAL_FACTOR = 2;
export const LATE_MARGIN_MS = 1000;

/** How long after a reading the next one is late, ms, for readings every `expectedIntervalMs`. */
export function lateAfterMs(expectedIntervalMs: number): number {
  return LATE_INTERVAL_FACTOR * expectedIntervalMs + LATE_MARGIN_MS;
}

/** The per-VIP counters tide-redirect keeps (RedirectVipCounters), by their rate's name. */
const VIP_RATES = {
  forwardedToAlternate: "forwarded_to_alternate",
  acceptedSecondChance: "accepted_second_chance",
  acceptedAlternateHash: "accepted_alternate_hash",
  acceptedLastResort: "accepted_last_resort",
  acceptedEstablished: "accepted_established",
  acceptedSyn: "accepted_syn",
} as const satisfies Record<string, keyof RedirectVipCounters>;
export type VipRateName = keyof typeof VIP_RATES;

/** Packets per second of one VIP over the last interval; null = unknown (a reset). */
export type VipRates = Record<VipRateName, number | null>;

export interface VipTraffic {
  address: string;
  port: number;
  proto: "tcp" | "udp";
  /** Absolute counters at the reading (the next reading's rates are counted from them). */
  counters: RedirectVipCounters;
  /** Per second since the reading before; null without one (first reading, late interval). */
  rates: VipRates | null;
}

export interface HostTraffic {
  /** sampledAt of the newest sample these figures are from. */
  at: string;
  /**
   * When tide-redirect's counters were read (DataPlaneState.countersReadAt; the sample's time
   * from older agents). Rates are taken between readings: a batch that repeats a reading moves
   * nothing. Absent from values stored before it (read as `at`).
   */
  readAt?: string;
  /** The interval the host's readings are expected at, ms (its batch interval). */
  expectedIntervalMs?: number;
  /** Seconds between the last two readings; null without two. */
  intervalS?: number | null;
  /** Why the last interval's rates are not shown (it was late); null when they are. */
  lateReason?: string | null;
  /** tide-redirect's absolute counters then (the next batch's rates are counted from them). */
  counters: Partial<Record<keyof RedirectCounters, number>> | null;
  /** Host-wide, per second over the last interval; null without two readings or after a reset. */
  rates: {
    /** accepted_syn: new connections landing on this proxy. */
    newConnections: number | null;
    /** forwarded_to_alternate: packets of flows this proxy does not own, sent to the row's other proxy. */
    forwardedToAlternate: number | null;
    /** accepted_established: packets of flows a local socket owns (first hop or not). */
    acceptedEstablished: number | null;
    /** accepted_second_chance: packets of local flows that arrived as a hop (null: older tide-redirect). */
    acceptedSecondChance?: number | null;
    /** accepted_alternate_hash: of those, through the alternate pair of a hash-field migration. */
    acceptedAlternateHash?: number | null;
  };
  /** Per VIP (tide-redirect's VIP map); null when the host's tide-redirect or agent does not report it. */
  vips?: VipTraffic[] | null;
  /**
   * [readAt, accepted_alternate_hash per VIP key ("tcp|address|port"; absent = 0)] of the
   * readings with VIP counters of the last ALTERNATE_HASH_KEEP_MS, oldest first: whether flows
   * still take the alternate hash over a window (alternateHashRate), not just the last interval.
   */
  alternateHash?: [string, Record<string, number>][];
  /** ESTABLISHED sockets per local address:port (the agent's busiest 256), summed over namespaces. */
  established: { address: string; port: number; count: number }[] | null;
  /**
   * [at, count] of ESTABLISHED connections to the VIPs of the pools this host is a proxy of, oldest
   * first: a draining proxy's remaining connections and how fast they fall.
   */
  history: [string, number][];
}

export interface TrafficSample {
  at: string;
  redirect: RedirectCounters | null;
  /** tide-redirect's per-VIP counters; null/undefined when not reported. */
  vips?: readonly RedirectVip[] | null;
  /** When the counters were read; undefined = at (older agents). */
  readAt?: string;
  /** The interval readings are expected at, ms; undefined = never late. */
  expectedIntervalMs?: number;
  /** null when the agent does not report established sockets (older agents). */
  established: { address: string; port: number; count: number }[] | null;
  /** Of those, the connections to the VIPs of this host's pools (establishedToBinds); null = unknown. */
  vipEstablished: number | null;
}

function rate(prev: number | undefined, cur: number | undefined, dt: number): number | null {
  if (!(dt > 0)) return null;
  const d = counterDelta(prev, cur, dt);
  return d === null ? null : perSecond(d);
}

const vipKey = (v: { address: string; port: number; proto: string }) => `${v.proto}|${v.address}|${v.port}`;

/** A VIP key's parts again (the address may hold colons, the other two never do). */
function parseVipKey(key: string): { proto: string; address: string; port: number } {
  const first = key.indexOf("|");
  const last = key.lastIndexOf("|");
  return {
    proto: key.slice(0, first),
    address: key.slice(first + 1, last),
    port: Number(key.slice(last + 1)),
  };
}

/**
 * Each VIP's rates since `prev` (dt seconds before; null = no usable interval). A VIP the previous
 * reading did not list had no packets then (the program makes its entry on its first packet).
 */
function vipTraffic(
  prev: readonly VipTraffic[] | null,
  cur: readonly RedirectVip[],
  dt: number | null,
): VipTraffic[] {
  const before = new Map((prev ?? []).map((v) => [vipKey(v), v.counters]));
  return cur.map((v) => {
    const p = before.get(vipKey(v));
    let rates: VipRates | null = null;
    if (dt !== null && prev !== null) {
      const r: Partial<VipRates> = {};
      for (const [name, counter] of Object.entries(VIP_RATES) as [VipRateName, keyof RedirectVipCounters][])
        r[name] = rate(p?.[counter] ?? 0, v.counters[counter], dt);
      rates = r as VipRates;
    }
    return { address: v.address, port: v.port, proto: v.proto, counters: { ...v.counters }, rates };
  });
}

const round1 = (s: number) => Math.round(s * 10) / 10;

/**
 * The traffic after one more sample. A sample not newer than the last one changes nothing; one
 * whose reading is not newer than the last reading (a batch of the same delivery) moves only the
 * established connections, so it never shows an interval with no packets followed by a double.
 */
export function nextTraffic(prev: HostTraffic | null, s: TrafficSample): HostTraffic {
  if (prev !== null && Date.parse(s.at) <= Date.parse(prev.at)) return prev;
  const history = prev?.history ?? [];
  const base = {
    at: s.at,
    established: s.established,
    history:
      s.vipEstablished === null
        ? history
        : [...history, [s.at, s.vipEstablished] as [string, number]].slice(-ESTABLISHED_HISTORY),
  };
  const readAt = s.readAt ?? s.at;
  const prevReadAt = prev === null ? null : (prev.readAt ?? prev.at);
  if (
    prev !== null &&
    prevReadAt !== null &&
    s.redirect !== null &&
    Date.parse(readAt) <= Date.parse(prevReadAt)
  )
    return { ...prev, ...base };
  const expected = s.expectedIntervalMs ?? prev?.expectedIntervalMs;
  const dtMs =
    prevReadAt === null || prev?.counters === null ? null : Date.parse(readAt) - Date.parse(prevReadAt);
  const late = dtMs !== null && expected !== undefined && dtMs > lateAfterMs(expected);
  const dt = dtMs === null || late ? 0 : dtMs / 1000;
  const p = prev?.counters ?? undefined;
  const c = s.redirect ?? undefined;
  return {
    ...base,
    readAt,
    ...(expected !== undefined ? { expectedIntervalMs: expected } : {}),
    intervalS: dtMs === null ? null : round1(dtMs / 1000),
    lateReason: late
      ? `the last reading came ${round1(dtMs / 1000)} s after the one before (expected every ${round1(expected / 1000)} s)`
      : null,
    counters: s.redirect,
    rates: {
      newConnections: rate(p?.accepted_syn, c?.accepted_syn, dt),
      forwardedToAlternate: rate(p?.forwarded_to_alternate, c?.forwarded_to_alternate, dt),
      acceptedEstablished: rate(p?.accepted_established, c?.accepted_established, dt),
      acceptedSecondChance: rate(p?.accepted_second_chance, c?.accepted_second_chance, dt),
      acceptedAlternateHash: rate(p?.accepted_alternate_hash, c?.accepted_alternate_hash, dt),
    },
    vips:
      s.vips === null || s.vips === undefined
        ? null
        : vipTraffic(prev?.vips ?? null, s.vips, dtMs === null || late || s.redirect === null ? null : dt),
    alternateHash:
      s.vips === null || s.vips === undefined
        ? (prev?.alternateHash ?? [])
        : keptAlternateHash([
            ...(prev?.alternateHash ?? []),
            [
              readAt,
              Object.fromEntries(
                s.vips
                  .filter((v) => v.counters.accepted_alternate_hash > 0)
                  .map((v) => [vipKey(v), v.counters.accepted_alternate_hash]),
              ),
            ],
          ]),
  };
}

/** The readings to keep: see ALTERNATE_HASH_KEEP_MS. */
function keptAlternateHash(points: [string, Record<string, number>][]): [string, Record<string, number>][] {
  const newest = Date.parse(points[points.length - 1]![0]);
  let drop = 0;
  // Drop a reading when the one after it is already older than the kept time, or too many are kept.
  while (
    points.length - drop > ALTERNATE_HASH_MAX_POINTS ||
    (points.length - drop > 1 && newest - Date.parse(points[drop + 1]![0]) > ALTERNATE_HASH_KEEP_MS)
  )
    drop++;
  return points.slice(drop);
}

/**
 * accepted_alternate_hash on the VIPs of `binds`, per second, from `from` to `now`, out of a host's
 * readings (HostTraffic.alternateHash). The readings must cover the window: one at most `slackMs`
 * after `from` (the interval starts at the last one at or before `from` when there is one) and one
 * at most `slackMs` before `now`; otherwise null (the host did not report over the whole window).
 * Growth is summed between consecutive readings (a counter that went down is a restarted
 * tide-redirect, counting from 0) and divided by the time from the first reading to the last.
 */
export function alternateHashRate(
  history: readonly [string, Record<string, number>][] | undefined,
  binds: readonly BindRange[],
  from: Date,
  now: Date,
  slackMs: number,
): number | null {
  const all = history ?? [];
  let start = 0;
  for (let i = 0; i < all.length; i++) if (Date.parse(all[i]![0]) <= from.getTime()) start = i;
  const points = all.slice(start);
  if (points.length < 2) return null;
  const first = Date.parse(points[0]![0]);
  const last = Date.parse(points[points.length - 1]![0]);
  if (first > from.getTime() + slackMs || last < now.getTime() - slackMs || last <= first) return null;
  const inPool = new Map<string, boolean>();
  const mine = (key: string) => {
    let m = inPool.get(key);
    if (m === undefined) {
      const v = parseVipKey(key);
      m = binds.some(
        (b) => b.proto === v.proto && v.port >= b.portStart && v.port <= b.portEnd && inBind(v.address, b),
      );
      inPool.set(key, m);
    }
    return m;
  };
  let packets = 0;
  for (let i = 1; i < points.length; i++) {
    const [, before] = points[i - 1]!;
    const [, after] = points[i]!;
    for (const [key, n] of Object.entries(after)) {
      if (!mine(key)) continue;
      const b = before[key] ?? 0;
      packets += n >= b ? n - b : n;
    }
  }
  return packets / ((last - first) / 1000);
}

/** One proxy's figures for one pool: what ProxyTraffic shows, before staleness. */
export interface PoolFigures {
  /** "pool": from the VIP counters of the pool's binds; "host": the host's totals (older tide-redirect). */
  scope: "pool" | "host";
  newConnectionsPerS: number | null;
  forwardedToAlternatePerS: number | null;
  acceptedEstablishedPerS: number | null;
  acceptedSecondChancePerS: number | null;
  acceptedAlternateHashPerS: number | null;
  acceptedLastResortPerS: number | null;
  /** forwarded_to_alternate + accepted_second_chance: packets moved or taken because of a second chance. */
  secondChancePerS: number | null;
}

const sumOrNull = (a: number | null, b: number | null) => (a === null || b === null ? null : a + b);

/**
 * A proxy host's figures for the pool whose binds are `binds`: the sum of the VIPs of its traffic
 * that lie in one of them (address or network, port range, protocol), so a host in two pools
 * shows each its own. A VIP with no packets has no entry and adds 0. Without VIP counters (an
 * older tide-redirect or agent) the host-wide rates, scope "host". null = unknown.
 */
export function trafficForBinds(t: HostTraffic, binds: readonly BindRange[]): PoolFigures {
  if (t.vips === null || t.vips === undefined) {
    const r = t.rates;
    const secondChance = r.acceptedSecondChance ?? null;
    return {
      scope: "host",
      newConnectionsPerS: r.newConnections,
      forwardedToAlternatePerS: r.forwardedToAlternate,
      acceptedEstablishedPerS: r.acceptedEstablished,
      acceptedSecondChancePerS: secondChance,
      acceptedAlternateHashPerS: r.acceptedAlternateHash ?? null,
      acceptedLastResortPerS: null,
      secondChancePerS: sumOrNull(r.forwardedToAlternate, secondChance),
    };
  }
  // Rates need an interval: without one (first reading, a late one, a reset) every figure is unknown.
  const known = t.intervalS !== null && t.intervalS !== undefined && !t.lateReason && t.counters !== null;
  const mine = t.vips.filter((v) =>
    binds.some(
      (b) => b.proto === v.proto && v.port >= b.portStart && v.port <= b.portEnd && inBind(v.address, b),
    ),
  );
  const total = (name: VipRateName): number | null => {
    if (!known) return null;
    let sum = 0;
    for (const v of mine) {
      const r = v.rates?.[name] ?? null;
      if (r === null) return null;
      sum += r;
    }
    return sum;
  };
  const forwarded = total("forwardedToAlternate");
  const secondChance = total("acceptedSecondChance");
  return {
    scope: "pool",
    newConnectionsPerS: total("acceptedSyn"),
    forwardedToAlternatePerS: forwarded,
    acceptedEstablishedPerS: total("acceptedEstablished"),
    acceptedSecondChancePerS: secondChance,
    acceptedAlternateHashPerS: total("acceptedAlternateHash"),
    acceptedLastResortPerS: total("acceptedLastResort"),
    secondChancePerS: sumOrNull(forwarded, secondChance),
  };
}

/**
 * Whether the host's figures are late at `now`: its last interval was (lateReason), or no reading
 * has come for longer than lateAfterMs of its expected interval. null = on time.
 */
export function trafficLateness(t: HostTraffic, now: Date): string | null {
  if (t.lateReason) return t.lateReason;
  if (t.expectedIntervalMs === undefined) return null;
  const since = now.getTime() - Date.parse(t.readAt ?? t.at);
  return since > lateAfterMs(t.expectedIntervalMs) ? `no reading for ${Math.round(since / 1000)} s` : null;
}

export interface BindRange {
  address: string;
  prefixBits: number;
  proto: "tcp" | "udp";
  portStart: number;
  portEnd: number;
}

function ipv4Bits(a: string): number {
  return a.split(".").reduce((n, o) => (n << 8) + Number(o), 0) >>> 0;
}

/** Whether `address` lies in the bind's address or network (IPv4 CIDRs; IPv6 exact). */
export function inBind(address: string, bind: BindRange): boolean {
  const net = bind.address.split("/")[0]!;
  if (isIP(address) !== isIP(net)) return false;
  if (isIP(address) === 6) return address.toLowerCase() === net.toLowerCase();
  const bits = bind.prefixBits;
  if (bits === 0) return true;
  const mask = bits >= 32 ? 0xffffffff : (0xffffffff << (32 - bits)) >>> 0;
  return (ipv4Bits(address) & mask) === (ipv4Bits(net) & mask);
}

/** ESTABLISHED connections to the pool's VIPs (TCP binds: address and port range); null = unknown. */
export function establishedToBinds(
  established: HostTraffic["established"] | undefined,
  binds: readonly BindRange[],
): number | null {
  if (established === null || established === undefined) return null;
  const tcp = binds.filter((b) => b.proto === "tcp");
  return established
    .filter((e) => tcp.some((b) => inBind(e.address, b) && e.port >= b.portStart && e.port <= b.portEnd))
    .reduce((sum, e) => sum + e.count, 0);
}

/**
 * How fast the established total falls, connections per second, over the last `windowS` seconds of
 * history (positive = falling); null with less than two points in the window.
 */
export function fallRate(history: readonly [string, number][], windowS = 10): number | null {
  if (history.length < 2) return null;
  const last = history[history.length - 1]!;
  const from = Date.parse(last[0]) - windowS * 1000;
  const first = history.find(([at]) => Date.parse(at) >= from) ?? history[0]!;
  const dt = (Date.parse(last[0]) - Date.parse(first[0])) / 1000;
  if (dt <= 0) return null;
  return (first[1] - last[1]) / dt;
}
