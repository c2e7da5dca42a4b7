import type { RedirectCounters } from "@tide/contracts";
import { counterDelta, perSecond } from "@tide/diagnostics";
import { isIP } from "node:net";

/**
 * A proxy host's live traffic (issue 12 item 3), recomputed from each of its agent's batches and
 * kept on the host (hosts.traffic): tide-redirect's rates over the last interval and the ESTABLISHED
 * TCP sockets per local address:port, with a short history of the total so a draining proxy shows
 * how fast its connections fall. Pure: ingest reads the previous value and writes the next.
 */

/** Points of established history kept (one per batch: about a minute at 1 s). */
export const ESTABLISHED_HISTORY = 60;

export interface HostTraffic {
  /** sampledAt of the newest sample these figures are from. */
  at: string;
  /** tide-redirect's absolute counters then (the next batch's rates are counted from them). */
  counters: Partial<Record<keyof RedirectCounters, number>> | null;
  /** Per second over the last interval; null without two readings or after a reset. */
  rates: {
    /** accepted_syn: new connections landing on this proxy. */
    newConnections: number | null;
    /** forwarded_to_alternate: packets of flows this proxy does not own, sent to the row's other proxy. */
    forwardedToAlternate: number | null;
    /** accepted_established: packets of flows a local socket owns (a second chance after a table change). */
    acceptedEstablished: number | null;
  };
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

/** The traffic after one more sample. A sample not newer than the last one changes nothing. */
export function nextTraffic(prev: HostTraffic | null, s: TrafficSample): HostTraffic {
  if (prev !== null && Date.parse(s.at) <= Date.parse(prev.at)) return prev;
  const dt = prev === null ? 0 : (Date.parse(s.at) - Date.parse(prev.at)) / 1000;
  const p = prev?.counters ?? undefined;
  const c = s.redirect ?? undefined;
  const history = prev?.history ?? [];
  return {
    at: s.at,
    counters: s.redirect,
    rates: {
      newConnections: rate(p?.accepted_syn, c?.accepted_syn, dt),
      forwardedToAlternate: rate(p?.forwarded_to_alternate, c?.forwarded_to_alternate, dt),
      acceptedEstablished: rate(p?.accepted_established, c?.accepted_established, dt),
    },
    established: s.established,
    history:
      s.vipEstablished === null
        ? history
        : [...history, [s.at, s.vipEstablished] as [string, number]].slice(-ESTABLISHED_HISTORY),
  };
}

interface BindRange {
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
