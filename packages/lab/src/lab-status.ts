/** What Lab.status() and Lab.consoleSync() report (the CLI prints it, tests assert on it). */
import { type DirectorCounters } from "@tide/contracts";
import { type ProxyState } from "@tide/forwarding";
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
  /** in_sync, out_of_sync, silent, no_agent, idle; "missing" when the console does not list it. */
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
