import {
  netnsKey,
  type DataPlaneState,
  type NetnsRef,
  type Observation,
  type PmtuPathResult,
  type ProbeAvailability,
} from "@tide/contracts";
import { counterDelta, perSecond } from "@tide/diagnostics";
import { latestSample, samplesBetween, type Db } from "@tide/db";
import pg from "pg";
import { apiEnv } from "../env";
import { findHost } from "../services/fleet/host.service";
import { AUTH_CHANNEL, DESIRED_CHANNEL, OBSERVATIONS_CHANNEL, POOLS_CHANNEL } from "./channels";

/**
 * Live host view for the console: what the host page shows, computed from stored samples, and a
 * PostgreSQL LISTEN on the channel ingest notifies after each batch (payload: the host record id).
 * The console's SSE route sends one update on connect (the last LIVE_WINDOW_MS of samples) and one
 * per notification (only the samples after the last one sent).
 */

export { OBSERVATIONS_CHANNEL };

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

/**
 * Per-second rate between two readings, finite by construction (issue 11 item 8): the same rules as
 * diagnostics (counterDelta: a reset, a missing reading or a value that is not a counter gives no
 * rate), so a live chart never shows what the findings would not.
 */
export function liveRate(now: number | undefined, prev: number | undefined, dt: number): number | null {
  if (!(dt > 0)) return null;
  const d = counterDelta(prev, now, dt);
  if (d === null) return null;
  const r = perSecond(d);
  return Number.isFinite(r) ? r : null;
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
      for (const c of LIVE_COUNTERS) rates[c] = liveRate(ns.counters[c], before?.counters[c], dt);
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
        const overflowRate = liveRate(drops(last.obs), drops(beforeLast?.obs), dt);
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
      processed: liveRate(c.softnetProcessed, p?.softnetProcessed, dt),
      dropped: liveRate(c.softnetDropped, p?.softnetDropped, dt),
      timeSqueeze: liveRate(c.softnetTimeSqueeze, p?.softnetTimeSqueeze, dt),
      netRx: liveRate(c.netRxSoftirqs, p?.netRxSoftirqs, dt),
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

/** What a notification on OBSERVATIONS_CHANNEL says changed for the host. */
export type HostChange = "samples" | "findings";

/** Subscriber key of desired-state changes on the shared connection (no host id looks like this). */
const DESIRED_KEY = "*desired";
/** Subscriber key of one pool's page (POOLS_CHANNEL payload: the pool id). */
const POOL_KEY_PREFIX = "*pool:";

/**
 * Channels whose subscribers are process-memory caches (listen-gate.ts): each gets the channel's
 * payloads under its key, and the connection's state (LISTEN_LOST, LISTEN_BACK), because a cache
 * must stop trusting what it holds the moment notifications may be missed.
 */
const AUTH_KEY = "*auth";
const SIGNAL_KEYS: Record<string, string> = { [AUTH_CHANNEL]: AUTH_KEY };
/** To a signal key: the connection was lost; notifications may be missed until LISTEN_BACK. */
export const LISTEN_LOST = "*lost";
/** To a signal key: the connection is back; anything may have changed meanwhile. */
export const LISTEN_BACK = "*back";
const isSignalKey = (key: string) => Object.values(SIGNAL_KEYS).includes(key);

type Subscriber = (change: string) => void;

/** Reconnect delays of the shared LISTEN connection after it failed, ms (the last one repeats). */
const RECONNECT_MS = [250, 1000, 2000, 5000];

/**
 * One LISTEN connection per console process, shared by every open host page (not the Prisma pool:
 * a LISTEN holds its connection). Connected on the first subscriber, closed with the last. If it
 * fails it reconnects with backoff and then tells every subscriber that both samples and findings
 * may have changed (notifications sent while it was down are lost), so pages re-read and catch up.
 *
 * Payloads: `<hostId>` after ingest stored samples, `<hostId> findings` after an evaluation
 * changed findings (services/findings/evaluation-scheduler.ts). DESIRED_CHANNEL notifications go to the
 * desired-state subscribers (agents waiting on /agent/desired).
 */
class SharedListener {
  private readonly subscribers = new Map<string, Set<Subscriber>>();
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private failures = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly url: () => string) {}

  async subscribe(hostId: string, fn: Subscriber): Promise<() => void> {
    let set = this.subscribers.get(hostId);
    if (!set) {
      set = new Set();
      this.subscribers.set(hostId, set);
    }
    set.add(fn);
    const unsubscribe = () => {
      const s = this.subscribers.get(hostId);
      if (!s?.delete(fn)) return;
      if (s.size === 0) this.subscribers.delete(hostId);
      if (this.subscribers.size === 0) this.close();
    };
    try {
      await this.ensure();
    } catch (e) {
      unsubscribe();
      throw e;
    }
    return unsubscribe;
  }

  /** Subscribed hosts and pages (tests, diagnostics). */
  size(): { hosts: number; subscribers: number; connected: boolean } {
    let subscribers = 0;
    for (const s of this.subscribers.values()) subscribers += s.size;
    return { hosts: this.subscribers.size, subscribers, connected: this.client !== null };
  }

  private ensure(): Promise<void> {
    if (this.client) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url() });
    client.on("notification", (n) => {
      const signalKey = SIGNAL_KEYS[n.channel];
      if (signalKey) {
        this.emit(signalKey, n.payload || "all");
        return;
      }
      if (n.channel === DESIRED_CHANNEL) {
        this.emit(DESIRED_KEY, "samples");
        return;
      }
      if (n.channel === POOLS_CHANNEL) {
        // "<pool id>" (a health verdict changed) or "<pool id> traffic" (a proxy host's new figures).
        const [poolId, what] = (n.payload ?? "").split(" ");
        if (poolId) this.emit(`${POOL_KEY_PREFIX}${poolId}`, what === "traffic" ? "samples" : "findings");
        return;
      }
      if (n.channel !== OBSERVATIONS_CHANNEL || !n.payload) return;
      const [hostId, what] = n.payload.split(" ");
      this.emit(hostId!, what === "findings" ? "findings" : "samples");
    });
    client.on("error", (e) => this.lost(client, e));
    client.on("end", () => this.lost(client, new Error("connection ended")));
    await client.connect();
    try {
      await client.query(
        `LISTEN ${OBSERVATIONS_CHANNEL}; LISTEN ${DESIRED_CHANNEL}; LISTEN ${POOLS_CHANNEL}; LISTEN ${AUTH_CHANNEL}`,
      );
    } catch (e) {
      await client.end().catch(() => undefined);
      throw e;
    }
    if (this.subscribers.size === 0) {
      await client.end().catch(() => undefined); // everyone left while we connected
      return;
    }
    this.client = client;
  }

  private emit(hostId: string, change: string): void {
    for (const fn of this.subscribers.get(hostId) ?? []) {
      try {
        fn(change);
      } catch (e) {
        console.error(`live host ${hostId}: subscriber failed`, e);
      }
    }
  }

  private lost(client: pg.Client, e: Error): void {
    if (this.client !== client) return; // closed on purpose, or an older connection
    this.client = null;
    client.removeAllListeners("end");
    void client.end().catch(() => undefined);
    console.error("live hosts: LISTEN connection lost; reconnecting", e);
    for (const key of Object.values(SIGNAL_KEYS)) this.emit(key, LISTEN_LOST);
    this.reconnect();
  }

  private reconnect(): void {
    if (this.timer || this.subscribers.size === 0) return;
    const delay = RECONNECT_MS[Math.min(this.failures, RECONNECT_MS.length - 1)]!;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.subscribers.size === 0) return;
      this.ensure().then(
        () => {
          this.failures = 0;
          // Whatever was notified while we were away is lost: everyone re-reads.
          for (const hostId of [...this.subscribers.keys()])
            this.emit(hostId, isSignalKey(hostId) ? LISTEN_BACK : "findings");
        },
        (err: unknown) => {
          this.failures++;
          console.error("live hosts: LISTEN reconnect failed", err);
          this.reconnect();
        },
      );
    }, delay);
    this.timer.unref();
  }

  private close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.failures = 0;
    const client = this.client;
    this.client = null;
    if (client) void client.end().catch(() => undefined);
  }
}

let shared: SharedListener | undefined;

function sharedListener(): SharedListener {
  shared ??= new SharedListener(() => apiEnv().DATABASE_URL);
  return shared;
}

/**
 * Subscribe to notifications about one host over the process's shared LISTEN connection.
 * `onChange("samples")` after ingest stored samples, `onChange("findings")` after findings changed
 * (and after a reconnect, when anything may have). Rejects if the connection cannot be made now;
 * later failures reconnect by themselves. Returns the function that unsubscribes.
 */
export async function listenForHostSamples(
  hostId: string,
  onChange: (change: HostChange) => void,
): Promise<() => void> {
  // A host's key only ever receives HostChange (the caches' signals go to their own keys).
  return sharedListener().subscribe(hostId, (c) => onChange(c as HostChange));
}

/**
 * Subscribe to desired-state changes (any host's: callers re-read their own) over the shared LISTEN
 * connection; also called after a reconnect, when anything may have changed. Returns the function
 * that unsubscribes.
 */
export async function listenForDesiredChanges(onChange: () => void): Promise<() => void> {
  return sharedListener().subscribe(DESIRED_KEY, () => onChange());
}

/**
 * Subscribe to changes of one pool's page: its directors' health verdicts and its proxies' new
 * traffic figures ("traffic") (POOLS_CHANNEL), and anything that changes a desired state (a table version: drains, fills, health changes; pool and
 * director changes). Returns the function that unsubscribes from both.
 */
export async function listenForPool(
  poolId: string,
  onChange: (what: "changed" | "traffic") => void,
): Promise<() => void> {
  const off = await sharedListener().subscribe(`${POOL_KEY_PREFIX}${poolId}`, (c) =>
    onChange(c === "samples" ? "traffic" : "changed"),
  );
  try {
    const offDesired = await sharedListener().subscribe(DESIRED_KEY, () => onChange("changed"));
    return () => {
      off();
      offDesired();
    };
  } catch (e) {
    off();
    throw e;
  }
}

/**
 * Subscribe to authentication changes (AUTH_CHANNEL payloads: "token:<id>", "user:<id>",
 * "host-token:<id>", "all") over the shared LISTEN connection, and to its state: LISTEN_LOST when it
 * broke (notifications may be missed from then on), LISTEN_BACK when it is back. Resolves once
 * the LISTEN is in place; rejects if the connection cannot be made now.
 */
export async function listenForAuthChanges(onChange: (change: string) => void): Promise<() => void> {
  return sharedListener().subscribe(AUTH_KEY, onChange);
}

/** A listener on another database (tests). */
export function createHostListener(databaseUrl: string) {
  const l = new SharedListener(() => databaseUrl);
  return {
    subscribe: (hostId: string, onChange: (change: HostChange) => void) =>
      l.subscribe(hostId, (c) => onChange(c as HostChange)),
    subscribeDesired: (onChange: () => void) => l.subscribe(DESIRED_KEY, () => onChange()),
    subscribePool: (poolId: string, onChange: (what: "changed" | "traffic") => void) =>
      l.subscribe(`${POOL_KEY_PREFIX}${poolId}`, (c) => onChange(c === "samples" ? "traffic" : "changed")),
    size: () => l.size(),
  };
}
