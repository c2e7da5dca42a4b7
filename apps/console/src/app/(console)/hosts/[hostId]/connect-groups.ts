import type { RouterOutputs } from "~/trpc/types";

type ConnectLatencySummary = RouterOutputs["hosts"]["latency"]["connect"][number];
type LatencyBucket = ConnectLatencySummary["buckets"][number];

/**
 * connect() latency per command rather than per pid: a health checker that forks curl every second
 * is one line, not sixty. Processes of the same command in the same namespace are summed (their
 * histograms too, so p50/p99 are of the group's calls), ranked by impact, and only the first
 * `limit` kept; the rest are counted so the table can say what it left out.
 */

export interface ConnectGroup {
  /** Namespace inode (0 when the sample no longer lists it) and command: unique per group. */
  key: string;
  netns: ConnectLatencySummary["netns"];
  comm: string;
  pids: number[];
  calls: number;
  perSecond: number;
  p50Us: number | null;
  p99Us: number | null;
  /** Calls at or above the slow threshold, from the histogram. */
  slowCalls: number;
  eaddrnotavail: number;
  evenPorts: number;
  oddPorts: number;
  buckets: LatencyBucket[];
}

export interface ConnectGroups {
  shown: ConnectGroup[];
  /** Groups left out after `limit`, with their calls and pids. */
  hidden: { groups: number; pids: number; calls: number; slowCalls: number; eaddrnotavail: number };
}

/**
 * Quantile q (0..1) in µs of a bucket list, interpolated linearly inside the bucket that holds it,
 * as the API computes it per process; null with no events.
 */
export function bucketQuantile(buckets: readonly LatencyBucket[], q: number): number | null {
  const total = buckets.reduce((s, b) => s + b.count, 0);
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (const b of buckets) {
    if (b.count > 0 && seen + b.count >= rank) return b.loUs + ((b.hiUs - b.loUs) * (rank - seen)) / b.count;
    seen += b.count;
  }
  return buckets[buckets.length - 1]!.hiUs;
}

/**
 * Impact order: failed calls (EADDRNOTAVAIL) and slow calls hurt clients, so the group with the
 * most of them comes first; then the slower p99, then the busier group, then the command name.
 */
function byImpact(a: ConnectGroup, b: ConnectGroup): number {
  return (
    b.eaddrnotavail + b.slowCalls - (a.eaddrnotavail + a.slowCalls) ||
    (b.p99Us ?? 0) - (a.p99Us ?? 0) ||
    b.calls - a.calls ||
    a.comm.localeCompare(b.comm)
  );
}

export function groupConnectLatency(
  processes: readonly ConnectLatencySummary[],
  { slowFromUs, limit }: { slowFromUs: number; limit: number },
): ConnectGroups {
  const groups = new Map<string, ConnectGroup & { byHi: Map<number, LatencyBucket> }>();
  for (const p of processes) {
    const key = `${p.netns?.inode ?? 0}:${p.comm}`;
    let g = groups.get(key);
    if (!g) {
      g = {
        key,
        netns: p.netns,
        comm: p.comm,
        pids: [],
        calls: 0,
        perSecond: 0,
        p50Us: null,
        p99Us: null,
        slowCalls: 0,
        eaddrnotavail: 0,
        evenPorts: 0,
        oddPorts: 0,
        buckets: [],
        byHi: new Map(),
      };
      groups.set(key, g);
    }
    g.pids.push(p.pid);
    g.calls += p.calls;
    g.perSecond += p.perSecond;
    g.eaddrnotavail += p.eaddrnotavail;
    g.evenPorts += p.evenPorts;
    g.oddPorts += p.oddPorts;
    for (const b of p.buckets) {
      const into = g.byHi.get(b.hiUs);
      if (into) into.count += b.count;
      else g.byHi.set(b.hiUs, { ...b });
    }
  }
  const all = [...groups.values()].map(({ byHi, ...g }) => {
    const buckets = [...byHi.values()].sort((a, b) => a.hiUs - b.hiUs);
    return {
      ...g,
      pids: g.pids.sort((a, b) => a - b),
      buckets,
      p50Us: bucketQuantile(buckets, 0.5),
      p99Us: bucketQuantile(buckets, 0.99),
      slowCalls: buckets.filter((b) => b.loUs >= slowFromUs).reduce((s, b) => s + b.count, 0),
    };
  });
  all.sort(byImpact);
  const rest = all.slice(limit);
  return {
    shown: all.slice(0, limit),
    hidden: {
      groups: rest.length,
      pids: rest.reduce((s, g) => s + g.pids.length, 0),
      calls: rest.reduce((s, g) => s + g.calls, 0),
      slowCalls: rest.reduce((s, g) => s + g.slowCalls, 0),
      eaddrnotavail: rest.reduce((s, g) => s + g.eaddrnotavail, 0),
    },
  };
}
