import {
  directorControlReplies,
  redirectControlResults,
  type DataPlaneState,
  type DirectorLoadTableResult,
} from "@tide/contracts";
import { z } from "zod";
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
export function servedHashes(pools: readonly { name: string; content_hash: string }[]): Record<string, string> {
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
      return { reachable: false, error: `status: ${s.data.error.code}: ${s.data.error.message}`, tableHashes: {} };
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
    if (!s.data.ok) return unreachable("director", socket, `status: ${s.data.error.code}: ${s.data.error.message}`);
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

/** status + stats of tide-redirect over its control socket. */
export async function redirectState(socket: string): Promise<DataPlaneState> {
  try {
    const [status, stats] = await controlExchange(socket, [
      { id: 1, cmd: "status" },
      { id: 2, cmd: "stats" },
    ]);
    const s = RedirectReply(redirectControlResults.status).safeParse(status);
    const t = RedirectReply(redirectControlResults.stats).safeParse(stats);
    if (!s.success) return unreachable("redirect", socket, "bad status reply");
    if (!s.data.ok) return unreachable("redirect", socket, `status: ${s.data.error.code}: ${s.data.error.message}`);
    return {
      component: "redirect",
      socket,
      reachable: true,
      error: t.success ? (t.data.ok ? null : `stats: ${t.data.error.code}`) : "bad stats reply",
      version: s.data.result.version,
      tableHashes: {},
      directorCounters: null,
      redirectCounters: t.success && t.data.ok ? t.data.result.counters : null,
    };
  } catch (err) {
    return unreachable("redirect", socket, message(err));
  }
}

/** Ask the director to load a GLBD file; resolves with the result or rejects with the director's error. */
export async function directorLoadTable(socket: string, path: string, poolNames: string[]): Promise<DirectorLoadTableResult> {
  const [reply] = await controlExchange(socket, [{ id: 1, cmd: "load_table", path, pool_names: poolNames }], 30_000);
  const r = directorControlReplies.load_table.safeParse(reply);
  if (!r.success) throw new Error("bad load_table reply");
  if (!r.data.ok) throw new Error(`load_table: ${r.data.error.code}: ${r.data.error.message}`);
  return r.data.result;
}
