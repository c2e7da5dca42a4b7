/**
 * What Lab.status(), Lab.healthy() and Lab.consoleSync() report (the CLI prints it, tests assert
 * on it), and how it is gathered from the lab's processes, directors, proxies and console.
 */
import { type DirectorCounters } from "@tide/contracts";
import { type ProxyState } from "@tide/forwarding";
import { type ConsoleClient } from "./console/console-client";
import { type LabConsoleState } from "./lab-files";
import { type LabDirectors } from "./lab-directors";
import { isAlive } from "./lab-process";
import { type LabProxies } from "./lab-proxies";
import { type LabRuntime } from "./lab-runtime";
import { listNamespaces } from "./host-command";
import { type RedirectCounters } from "./redirect-control";

export interface DirectorStatusSummary {
  name: string;
  running: boolean;
  inEcmp: boolean;
  tableHash: string | null;
  generation: number | null;
  counters: DirectorCounters | null;
  error: string | null;
}

export interface ProxyStatusSummary {
  name: string;
  address: string;
  state: ProxyState | null;
  serverRunning: boolean;
  redirectRunning: boolean;
  redirectCounters: RedirectCounters | null;
  /** GUE datagrams the kernel found no socket for (what arrives when nothing decapsulates). */
  udpNoPorts: number | null;
  error: string | null;
}

/** One director as the console sees it (GET /api/v1/sync). */
export interface ConsoleDirectorSync {
  name: string;
  hostname: string;
  directorId: string;
  /** in_sync, propagating, unknown, out_of_sync, silent, no_agent, idle; "missing" when the console does not list it. */
  state: string;
  /** The lab pool's version the director serves, and the pool's current one (null: none). */
  servedVersion: number | null;
  desiredVersion: number | null;
  since: string | null;
  lastCheckIn: string | null;
  error: string | null;
}

export interface ConsoleSyncStatus {
  url: string;
  poolId: string;
  poolName: string;
  /** Every lab director serves the pool's current version. */
  inSync: boolean;
  directors: ConsoleDirectorSync[];
  /** Why the console could not be asked (no token, unreachable), or null. */
  error: string | null;
}

export interface LabStatus {
  topology: string;
  prefix: string;
  vip: string;
  /** VIPs added with `lab vip add` (prefix and pool), beside the lab's own. */
  addedVips: { cidr: string; pool: string }[];
  ready: boolean;
  redirect: boolean;
  tableHash: string | null;
  namespaces: { name: string; exists: boolean }[];
  processes: { key: string; kind: string; pid: number; alive: boolean }[];
  ecmp: string[];
  directors: DirectorStatusSummary[];
  proxies: ProxyStatusSummary[];
  /** Console mode: the console's view of the lab's directors; null in standalone mode. */
  console: ConsoleSyncStatus | null;
}

/** Whether every namespace exists, every process runs and every running director answers. */
export async function labHealthy(rt: LabRuntime, directors: LabDirectors): Promise<boolean> {
  if (!rt.state.ready) return false;
  const existing = new Set(await listNamespaces());
  if (!rt.state.namespaces.every((n) => existing.has(n))) return false;
  if (!rt.state.processes.every((p) => isAlive(p))) return false;
  try {
    await directors.tableHashes();
    return true;
  } catch {
    return false;
  }
}

/** Everything about a lab in one report; a director or proxy that does not answer says why. */
export async function labStatus(
  rt: LabRuntime,
  parts: {
    directors: LabDirectors;
    proxies: LabProxies;
    consoleSync: () => Promise<ConsoleSyncStatus | null>;
  },
): Promise<LabStatus> {
  const { topology, state } = rt;
  const existing = new Set(await listNamespaces());
  const table = state.table;
  const directors: DirectorStatusSummary[] = [];
  for (const name of parts.directors.names) {
    const running = rt.running(name);
    const summary: DirectorStatusSummary = {
      name,
      running,
      inEcmp: state.ecmp.includes(name),
      tableHash: null,
      generation: null,
      counters: null,
      error: null,
    };
    if (running) {
      try {
        const ctl = parts.directors.control(name);
        const status = await ctl.status();
        summary.tableHash = status.pools.find((p) => p.name === rt.poolName)?.content_hash ?? null;
        summary.generation = status.table?.generation ?? null;
        summary.counters = (await ctl.stats()).totals;
      } catch (e) {
        summary.error = (e as Error).message;
      }
    }
    directors.push(summary);
  }
  const proxies: ProxyStatusSummary[] = [];
  for (const p of topology.proxies) {
    const summary: ProxyStatusSummary = {
      name: p.name,
      address: p.address,
      state: table?.states[p.name] ?? null,
      serverRunning: rt.running(`${p.name}.server`),
      redirectRunning: rt.running(`${p.name}.redirect`),
      redirectCounters: null,
      udpNoPorts: null,
      error: null,
    };
    try {
      if (existing.has(p.namespace)) summary.udpNoPorts = (await rt.netCounters(p.name)).Udp?.NoPorts ?? null;
      if (summary.redirectRunning)
        summary.redirectCounters = await parts.proxies.redirectControl(p.name).counters();
    } catch (e) {
      summary.error = (e as Error).message;
    }
    proxies.push(summary);
  }
  return {
    topology: topology.name,
    prefix: topology.prefix,
    vip: topology.vip,
    addedVips: structuredClone(state.vips ?? []),
    ready: state.ready,
    redirect: state.redirect,
    tableHash: table?.hash ?? null,
    namespaces: state.namespaces.map((name) => ({ name, exists: existing.has(name) })),
    processes: state.processes.map((p) => ({ key: p.key, kind: p.kind, pid: p.pid, alive: isAlive(p) })),
    ecmp: [...state.ecmp],
    directors,
    proxies,
    console: state.console ? await parts.consoleSync() : null,
  };
}

/** The console's view of the lab's directors (GET /api/v1/sync); errors are reported, not thrown. */
export async function consoleSyncStatus(
  c: LabConsoleState,
  client: () => ConsoleClient,
): Promise<ConsoleSyncStatus> {
  const out: ConsoleSyncStatus = {
    url: c.url,
    poolId: c.poolId,
    poolName: c.poolName,
    inSync: false,
    directors: [],
    error: null,
  };
  try {
    const fleet = await client().fleetSync();
    for (const [name, d] of Object.entries(c.directors)) {
      const sync = fleet.directors.find((x) => x.directorId === d.directorId);
      const pool = sync?.pools.find((p) => p.poolId === c.poolId);
      out.directors.push({
        name,
        hostname: d.hostname,
        directorId: d.directorId,
        state: sync?.state ?? "missing",
        servedVersion: pool?.served?.version ?? null,
        desiredVersion: pool?.desired?.version ?? null,
        since: sync?.since ?? null,
        lastCheckIn: sync?.lastCheckIn ?? null,
        error: sync?.error ?? null,
      });
    }
    out.inSync =
      out.directors.length > 0 &&
      out.directors.every(
        (d) => d.state === "in_sync" && d.desiredVersion !== null && d.servedVersion === d.desiredVersion,
      );
  } catch (e) {
    out.error = (e as Error).message;
  }
  return out;
}
