import {
  directorControlReplies,
  redirectControlResults,
  type AgentRedirectFlow,
  type DataPlaneState,
  type DirectorLoadTableResult,
} from "@tide/contracts";
import { z } from "zod";
import { redirectStatsSource, type RedirectStatsSource } from "../bpf/redirect-stats-source";
import { controlExchange } from "./control-client";

const RedirectReply = <T extends z.ZodType>(result: T) =>
  z.union([
    z.object({ ok: z.literal(true), result }),
    z.object({ ok: z.literal(false), error: z.object({ code: z.string(), message: z.string() }) }),
  ]);

function unreachable(component: DataPlaneState["component"], socket: string, error: string): DataPlaneState {
  return {
    component,
    socket,
    reachable: false,
    error: error.slice(0, 500),
    version: null,
    tableHashes: {},
    directorCounters: null,
    redirectCounters: null,
  };
}

/** Pool name -> content hash, from a director's status or load_table result. */
export function servedHashes(
  pools: readonly { name: string; content_hash: string }[],
): Record<string, string> {
  return Object.fromEntries(pools.map((p) => [p.name, p.content_hash]));
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** What a director serves, from `status` alone (the reconciler's check, several times a second at most). */
export interface DirectorServed {
  reachable: boolean;
  error: string | null;
  /** Pool name -> content hash. */
  tableHashes: Record<string, string>;
}

export async function directorServed(socket: string): Promise<DirectorServed> {
  try {
    const [status] = await controlExchange(socket, [{ id: 1, cmd: "status" }]);
    const s = directorControlReplies.status.safeParse(status);
    if (!s.success) return { reachable: false, error: "bad status reply", tableHashes: {} };
    if (!s.data.ok)
      return {
        reachable: false,
        error: `status: ${s.data.error.code}: ${s.data.error.message}`,
        tableHashes: {},
      };
    return { reachable: true, error: null, tableHashes: servedHashes(s.data.result.pools) };
  } catch (err) {
    return { reachable: false, error: message(err), tableHashes: {} };
  }
}

/** status + stats of tide-director over its control socket; unreachable (with the error) on any failure. */
export async function directorState(socket: string): Promise<DataPlaneState> {
  try {
    const [status, stats] = await controlExchange(socket, [
      { id: 1, cmd: "status" },
      { id: 2, cmd: "stats" },
    ]);
    const s = directorControlReplies.status.safeParse(status);
    const t = directorControlReplies.stats.safeParse(stats);
    if (!s.success) return unreachable("director", socket, "bad status reply");
    if (!s.data.ok)
      return unreachable("director", socket, `status: ${s.data.error.code}: ${s.data.error.message}`);
    return {
      component: "director",
      socket,
      reachable: true,
      error: t.success ? (t.data.ok ? null : `stats: ${t.data.error.code}`) : "bad stats reply",
      version: s.data.result.version,
      tableHashes: servedHashes(s.data.result.pools),
      directorCounters: t.success && t.data.ok ? t.data.result.totals : null,
      redirectCounters: null,
    };
  } catch (err) {
    return unreachable("director", socket, message(err));
  }
}

/** How redirectState reads the counters; both optional. */
export interface RedirectReadOptions {
  /**
   * tide-redirect's --pin-dir: its counters are read from the pinned stats map (npm `bpf`), not
   * from the socket's JSON, when the module loads and the pin is readable. null = JSON only.
   */
  pinDir?: string | null;
  /** Chooses and remembers the path (the agent's shared one unless a test passes its own). */
  source?: RedirectStatsSource;
}

/**
 * status and stats of tide-redirect over its control socket: its counters from the pinned stats map
 * when it can be read (see RedirectReadOptions), else from the `stats` reply (the fallback); its
 * per-VIP counters from that reply always (the VIP map is a hash the pin does not cover), null when
 * an older tide-redirect does not send them. countersReadAt says when the counters were read, so
 * the console takes rates between readings, not between batches (several batches of one delivery
 * carry the same reading).
 */
export async function redirectState(
  socket: string,
  options: RedirectReadOptions = {},
  now: () => Date = () => new Date(),
): Promise<DataPlaneState> {
  const fromMap = (options.source ?? redirectStatsSource).read(options.pinDir ?? null);
  const mapReadAt = now().toISOString();
  try {
    const replies = await controlExchange(socket, [
      { id: 1, cmd: "status" },
      { id: 2, cmd: "stats" },
      // Answered unknown_command by a tide-redirect before the command: then no flows (null).
      { id: 3, cmd: "flows", since_ms: FLOWS_SINCE_MS },
    ]);
    const readAt = now();
    const statsReadAt = readAt.toISOString();
    const s = RedirectReply(redirectControlResults.status).safeParse(replies[0]);
    if (!s.success) return unreachable("redirect", socket, "bad status reply");
    if (!s.data.ok)
      return unreachable("redirect", socket, `status: ${s.data.error.code}: ${s.data.error.message}`);
    const state: DataPlaneState = {
      component: "redirect",
      socket,
      reachable: true,
      error: null,
      version: s.data.result.version,
      tableHashes: {},
      directorCounters: null,
      redirectCounters: fromMap,
    };
    const t = RedirectReply(redirectControlResults.stats).safeParse(replies[1]);
    const stats = t.success && t.data.ok ? t.data.result : null;
    const counters = fromMap ?? stats?.counters ?? null;
    const statsError = !t.success ? "bad stats reply" : t.data.ok ? null : `stats: ${t.data.error.code}`;
    return {
      ...state,
      // The map's counters stand without the reply (only the VIPs are then missing).
      error: fromMap !== null ? null : statsError,
      redirectCounters: counters,
      redirectVips: stats?.vips ?? null,
      ...flowsOf(replies[2], readAt),
      ...(counters !== null ? { countersReadAt: fromMap !== null ? mapReadAt : statsReadAt } : {}),
    };
  } catch (err) {
    return unreachable("redirect", socket, message(err));
  }
}

/**
 * How far back each reading asks for flows, ms: several readings' worth (readings come every
 * second), so a reading that failed or a batch the console refused loses none; the console keeps
 * each flow's newest record.
 */
export const FLOWS_SINCE_MS = 10_000;

/**
 * tide-redirect's `flows` reply as the agent sends it: ages (ms before the reply) turned into times
 * from `readAt`. Nothing (no fields) for a reply that is not a flows result: an older tide-redirect
 * (unknown_command) or a failure, so the console knows flows were not read.
 */
export function flowsOf(
  reply: unknown,
  readAt: Date,
): Pick<DataPlaneState, "redirectFlows" | "redirectFlowsMatched"> {
  const r = RedirectReply(redirectControlResults.flows).safeParse(reply);
  if (!r.success || !r.data.ok) return { redirectFlows: null };
  const at = (msAgo: number) => new Date(readAt.getTime() - msAgo).toISOString();
  const kind = (k: { packets: number; last_seen_ms_ago: number } | null) =>
    k === null ? null : { packets: k.packets, lastSeenAt: at(k.last_seen_ms_ago) };
  const flows = r.data.result.flows.map((f): AgentRedirectFlow => ({
    clientAddress: f.client_address,
    clientPort: f.client_port,
    address: f.address,
    port: f.port,
    proto: f.proto,
    firstSeenAt: at(f.first_seen_ms_ago),
    secondChance: kind(f.second_chance),
    alternateHash: kind(f.alternate_hash),
    lastResort: kind(f.last_resort),
  }));
  return { redirectFlows: flows, redirectFlowsMatched: r.data.result.matched };
}

/** Ask the director to load a GLBD file; resolves with the result or rejects with the director's error. */
export async function directorLoadTable(
  socket: string,
  path: string,
  poolNames: string[],
): Promise<DirectorLoadTableResult> {
  const [reply] = await controlExchange(
    socket,
    [{ id: 1, cmd: "load_table", path, pool_names: poolNames }],
    30_000,
  );
  const r = directorControlReplies.load_table.safeParse(reply);
  if (!r.success) throw new Error("bad load_table reply");
  if (!r.data.ok) throw new Error(`load_table: ${r.data.error.code}: ${r.data.error.message}`);
  return r.data.result;
}
