import {
  netnsKey,
  type DataPlaneState,
  type NetnsRef,
  type Observation,
  type PmtuPathResult,
  type ProbeAvailability,
} from "@tide/contracts";
import { latestSample, samplesBetween, type Db } from "@tide/db";
import pg from "pg";
import { apiEnv } from "../env";
import { findHost } from "../services/host.service";

/**
 * Live host view for the console: what the host page shows, computed from stored samples, and a
 * PostgreSQL LISTEN on the channel ingest notifies after each batch (payload: the host record id).
 * The console's SSE route sends one update on connect (the last LIVE_WINDOW_MS of samples) and one
 * per notification (only the samples after the last one sent).
 */

/** Channel ingestObservations notifies on, after its transaction commits (payload: host_… id). */
export const OBSERVATIONS_CHANNEL = "tide_observations";

/** Look-back of the first update of a live connection, in ms (five minutes of 1 s samples). */
export const LIVE_WINDOW_MS = 5 * 60_000;

/** The counters charted per namespace (nstat names), in display order. */
export const LIVE_COUNTERS = [
  "TcpExtListenOverflows",
  "TcpExtListenDrops",
  "TcpExtTCPReqQFullDoCookies",
  "TcpExtTCPReqQFullDrop",
  "TcpExtSyncookiesSent",
  "TcpExtTCPRcvCollapsed",
  "TcpExtPruneCalled",
  "IpFragFails",
  "IcmpMsgOutType3",
] as const;

export interface LivePoint {
  /** sampledAt (agent clock, UTC). */
  at: string;
  /** Per-second rate since the previous sample; null for the first point, a reset or a missing counter. */
  rates: Record<string, number | null>;
}

export interface LiveListener {
  address: string;
  port: number;
  recvQ: number;
  sendQ: number;
  requestedBacklog: number | null;
  /** Accept queue overflow drops per second on this port (listen_overflow probe), or null. */
  overflowRate: number | null;
  /** listen() asked for more than the kernel gave (requestedBacklog > Send-Q). */
  limited: boolean;
  /** The accept queue is full now (Recv-Q >= Send-Q) or the probe saw drops. */
  overflowing: boolean;
}

export interface LiveNamespace {
  key: string;
  netns: NetnsRef;
  somaxconn: number | null;
  points: LivePoint[];
  listeners: LiveListener[];
}

export interface LiveCpu {
  cpu: number;
  /** Per-second rates over the last two samples; null without two samples. */
  processed: number | null;
  dropped: number | null;
  timeSqueeze: number | null;
  netRx: number | null;
  /** Longest NET_RX run since the previous sample (net_rx_softirq probe), µs. */
  intervalMaxUs: number | null;
}

export interface HostLiveUpdate {
  hostId: string;
  hostName: string;
  /** Newest sample included, or null when the host has none. */
  sampledAt: string | null;
  /** True for the first update (points cover the window), false for increments (new points only). */
  full: boolean;
  counters: readonly string[];
  namespaces: LiveNamespace[];
  cpus: LiveCpu[];
  paths: PmtuPathResult[];
  probes: ProbeAvailability[];
  dataPlane: DataPlaneState[];
}

function rate(now: number | undefined, prev: number | undefined, dt: number): number | null {
  if (now === undefined || prev === undefined || dt <= 0 || now < prev) return null;
  return (now - prev) / dt;
}

/**
 * The live view of a host from stored samples. Without `after`: the last LIVE_WINDOW_MS. With
 * `after` (the sampledAt of the newest point already sent): only later points; the sample at
 * `after` itself is read as the base of the first new rate.
 */
export async function hostLiveUpdate(db: Db, ref: string, after: string | null): Promise<HostLiveUpdate> {
  const host = await findHost(db, ref);
  const newest = await latestSample(db, host.id);
  const from = after
    ? new Date(after)
    : new Date((newest?.sampledAt.getTime() ?? Date.now()) - LIVE_WINDOW_MS);
  const rows = await samplesBetween(db, host.id, from);
  const samples = rows.map((r) => ({ at: r.sampledAt, obs: r.payload as unknown as Observation }));
  const afterMs = after ? Date.parse(after) : -Infinity;

  const byKey = new Map<string, LiveNamespace>();
  let prev: (typeof samples)[number] | undefined;
  for (const s of samples) {
    const dt = prev ? (s.at.getTime() - prev.at.getTime()) / 1000 : 0;
    for (const ns of s.obs.namespaces) {
      const key = netnsKey(ns.netns);
      let live = byKey.get(key);
      if (!live) {
        live = { key, netns: ns.netns, somaxconn: ns.sysctls.somaxconn, points: [], listeners: [] };
        byKey.set(key, live);
      }
      if (s.at.getTime() <= afterMs) continue;
      const before = prev?.obs.namespaces.find((n) => netnsKey(n.netns) === key);
      const rates: Record<string, number | null> = {};
      for (const c of LIVE_COUNTERS) rates[c] = rate(ns.counters[c], before?.counters[c], dt);
      live.points.push({ at: s.at.toISOString(), rates });
    }
    prev = s;
  }

  const last = samples[samples.length - 1];
  const beforeLast = samples[samples.length - 2];
  const dt = last && beforeLast ? (last.at.getTime() - beforeLast.at.getTime()) / 1000 : 0;
  if (last) {
    for (const ns of last.obs.namespaces) {
      const live = byKey.get(netnsKey(ns.netns));
      if (!live) continue;
      live.somaxconn = ns.sysctls.somaxconn;
      live.listeners = ns.listeners.map((l) => {
        const drops = (o: Observation | undefined) =>
          o?.probeResults.listenOverflow.find((d) => d.netnsInode === ns.netns.inode && d.port === l.port)
            ?.drops;
        const overflowRate = rate(drops(last.obs), drops(beforeLast?.obs), dt);
        return {
          ...l,
          overflowRate,
          limited: l.requestedBacklog !== null && l.requestedBacklog > l.sendQ,
          overflowing: l.recvQ >= l.sendQ || (overflowRate ?? 0) > 0,
        };
      });
    }
  }
  const cpus: LiveCpu[] = (last?.obs.cpus ?? []).map((c) => {
    const p = beforeLast?.obs.cpus.find((x) => x.cpu === c.cpu);
    return {
      cpu: c.cpu,
      processed: rate(c.softnetProcessed, p?.softnetProcessed, dt),
      dropped: rate(c.softnetDropped, p?.softnetDropped, dt),
      timeSqueeze: rate(c.softnetTimeSqueeze, p?.softnetTimeSqueeze, dt),
      netRx: rate(c.netRxSoftirqs, p?.netRxSoftirqs, dt),
      intervalMaxUs: last?.obs.probeResults.netRxSoftirq.find((x) => x.cpu === c.cpu)?.intervalMaxUs ?? null,
    };
  });

  return {
    hostId: host.id,
    hostName: host.name,
    sampledAt: last?.at.toISOString() ?? newest?.sampledAt.toISOString() ?? null,
    full: after === null,
    counters: LIVE_COUNTERS,
    namespaces: [...byKey.values()],
    cpus,
    paths: last?.obs.paths ?? [],
    // The latest sample says which probes run now; the hello's list covers a host without samples.
    probes: last?.obs.probes ?? (host.probes as unknown as ProbeAvailability[]),
    dataPlane: host.dataPlane as unknown as DataPlaneState[],
  };
}

/**
 * LISTEN for new samples of one host on a dedicated connection (not the Prisma pool: a LISTEN holds
 * its connection for as long as the page is open). Returns the function that UNLISTENs and closes.
 */
export async function listenForHostSamples(
  hostId: string,
  onSamples: () => void,
  onError: (e: Error) => void,
): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: apiEnv().DATABASE_URL });
  client.on("notification", (n) => {
    if (n.channel === OBSERVATIONS_CHANNEL && n.payload === hostId) onSamples();
  });
  client.on("error", onError);
  await client.connect();
  await client.query(`LISTEN ${OBSERVATIONS_CHANNEL}`);
  let closed = false;
  return async () => {
    if (closed) return;
    closed = true;
    try {
      await client.query(`UNLISTEN ${OBSERVATIONS_CHANNEL}`);
    } catch {
      // the connection is already gone
    }
    await client.end().catch(() => undefined);
  };
}
