import {
  TideError,
  type BindsPreview,
  type ChangeSafety,
  type DirectorRemovalPreview,
  type ProxyState,
  type UnassignPreview,
} from "@tide/contracts";
import { parseAddress } from "@tide/forwarding";
import { bindLabel } from "../tables/bind-overlap.plan";
import { inBind, type BindRange } from "../telemetry/proxy-traffic.plan";

/**
 * Whether a bind change or a director unassigned (or removed) breaks established connections
 * (issue 26 item 1), from the connections each proxy's agent reports per local address:port. Pure:
 * change-safety.service.ts reads the pool, its directors and its proxies' reports.
 *
 * GLB directors are stateless and forward a packet by the binds of the pools they serve; routers
 * spread flows over the directors by ECMP. So a connection breaks when no director forwards its
 * VIP:port any more: its bind was removed or narrowed, or the last director of its pool left.
 * Another director serving the pool serves the same table, and the routers move the flows to it.
 * Only TCP is counted (the agents report ESTABLISHED TCP sockets); only proxies in the table
 * (every state but inactive) hold connections that reach them through Tide.
 */

/** ESTABLISHED sockets on one local address:port of a proxy host. */
export interface EstablishedEntry {
  address: string;
  port: number;
  count: number;
}

/** A proxy's fresh per-address:port report, or why there is none. */
export type ProxyEstablished = { entries: readonly EstablishedEntry[] } | { entries: null; reason: string };

export interface SafetyProxy {
  id: string;
  hostname: string;
  state: ProxyState;
}

type Core = Omit<ChangeSafety, "message">;

/** Endpoints named in a message before "and N more". */
export const ENDPOINTS_NAMED = 4;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** Whether a connection to `e` is forwarded by one of `binds` (TCP: the agents report TCP only). */
export function forwards(binds: readonly BindRange[], e: { address: string; port: number }): boolean {
  return binds.some(
    (b) => b.proto === "tcp" && e.port >= b.portStart && e.port <= b.portEnd && inBind(e.address, b),
  );
}

/** Whether network `outer` (address/bits) contains network `inner`. */
function contains(outer: BindRange, inner: BindRange): boolean {
  if (outer.prefixBits > inner.prefixBits) return false;
  const x = parseAddress(outer.address.split("/")[0]!).bytes;
  const y = parseAddress(inner.address.split("/")[0]!).bytes;
  if (x.length !== y.length) return false;
  for (let i = 0; i < outer.prefixBits; i++) {
    const mask = 0x80 >> (i & 7);
    if ((x[i >> 3]! & mask) !== (y[i >> 3]! & mask)) return false;
  }
  return true;
}

/**
 * The binds of `before` that `after` does not cover in full (as labels): no bind of `after` with
 * the same protocol contains its network, or those that do leave a port of its range out. A
 * network split over several narrower binds counts as not covered (the connection counts, taken
 * address by address, are exact all the same).
 */
export function uncoveredBinds(before: readonly BindRange[], after: readonly BindRange[]): string[] {
  return before
    .filter((b) => {
      const ranges = after
        .filter((a) => a.proto === b.proto && contains(a, b))
        .map((a) => [a.portStart, a.portEnd] as const)
        .sort((x, y) => x[0] - y[0]);
      let next = b.portStart;
      for (const [start, end] of ranges) {
        if (start > next) break;
        next = Math.max(next, end + 1);
        if (next > b.portEnd) return false;
      }
      return next <= b.portEnd;
    })
    .map(bindLabel);
}

/**
 * The connections `cut` selects on each proxy in the table. A proxy without a fresh report is
 * unknown (null), never 0: `breaks` is true when the reported ones break any, null when none of
 * those do but some proxy is unknown, false when every proxy reported and none breaks.
 */
export function planBreak(
  proxies: readonly SafetyProxy[],
  established: ReadonlyMap<string, ProxyEstablished>,
  cut: (e: EstablishedEntry) => boolean,
): Core {
  const rows: Core["proxies"] = [];
  const unknown: Core["unknown"] = [];
  const byEndpoint = new Map<string, { address: string; port: number; count: number }>();
  let broken = 0;
  for (const p of proxies) {
    if (p.state === "inactive") continue;
    const figure = established.get(p.id) ?? { entries: null, reason: "no report from its host" };
    if (figure.entries === null) {
      unknown.push({ proxyId: p.id, hostname: p.hostname, reason: figure.reason });
      rows.push({ proxyId: p.id, hostname: p.hostname, broken: null });
      continue;
    }
    let mine = 0;
    for (const e of figure.entries) {
      if (e.count <= 0 || !cut(e)) continue;
      mine += e.count;
      const key = `${e.address}|${e.port}`;
      const at = byEndpoint.get(key);
      if (at) at.count += e.count;
      else byEndpoint.set(key, { address: e.address, port: e.port, count: e.count });
    }
    if (mine > 0) rows.push({ proxyId: p.id, hostname: p.hostname, broken: mine });
    broken += mine;
  }
  const endpoints = [...byEndpoint.values()].sort(
    (a, b) => b.count - a.count || a.address.localeCompare(b.address) || a.port - b.port,
  );
  return {
    breaks: broken > 0 ? true : unknown.length > 0 ? null : false,
    broken,
    proxies: rows,
    endpoints,
    unknown,
  };
}

/** A change that cannot break anything: no proxy is asked. */
const nothing = (): Core => ({ breaks: false, broken: 0, proxies: [], endpoints: [], unknown: [] });

const endpointText = (e: { address: string; port: number }) =>
  e.address.includes(":") ? `[${e.address}]:${e.port}` : `${e.address}:${e.port}`;

/**
 * "12 established connections (7 on lab-proxy-1, 5 on lab-proxy-2) to 10.77.0.1:8081": what breaks,
 * where, and to which VIPs (the busiest ENDPOINTS_NAMED, then how many more).
 */
export function breakSummary(core: Core): string {
  const where = core.proxies
    .filter((p) => p.broken !== null)
    .map((p) => `${p.broken} on ${p.hostname}`)
    .join(", ");
  const named = core.endpoints.slice(0, ENDPOINTS_NAMED).map(endpointText).join(", ");
  const more = core.endpoints.length - ENDPOINTS_NAMED;
  return (
    `${plural(core.broken, "established connection")} (${where}) to ${named}` +
    (more > 0 ? ` and ${plural(more, "more address:port", "more addresses:ports")}` : "")
  );
}

/** "lab-proxy-3 (no report for 12 s), …": the proxies whose count is unknown. */
function unknownText(core: Core): string {
  return core.unknown.map((u) => `${u.hostname} (${u.reason})`).join(", ");
}

/** The sentence on unknown proxies, after the known figures; "" when every proxy reported. */
function unknownSentence(core: Core): string {
  if (core.unknown.length === 0) return "";
  return (
    ` ${core.unknown.length === 1 ? "One proxy" : `${core.unknown.length} proxies`} sent no fresh ` +
    `report: ${unknownText(core)}${core.broken > 0 ? `, so at least ${core.broken} break` : ""}.`
  );
}

export interface BindChangeInput {
  /** A director serves the pool and it has a table: only then do its binds forward anything. */
  served: boolean;
  before: readonly BindRange[];
  after: readonly BindRange[];
  proxies: readonly SafetyProxy[];
  established: ReadonlyMap<string, ProxyEstablished>;
}

/**
 * Replacing a pool's binds: the connections to the VIP:ports the old binds forward and the new
 * ones do not break. Adding binds, or moving none out of reach, breaks nothing.
 */
export function planBindChange(input: BindChangeInput): Omit<BindsPreview, "poolId"> {
  const uncovered = uncoveredBinds(input.before, input.after);
  const base = { served: input.served, uncovered };
  if (!input.served)
    return {
      ...base,
      ...nothing(),
      message:
        "No director serves this pool with a table: nothing forwards its VIPs through Tide, so " +
        "changing its binds breaks no connection.",
    };
  if (uncovered.length === 0)
    return {
      ...base,
      ...nothing(),
      message: "Every address:port the pool's binds forward now stays forwarded: nothing breaks.",
    };
  const stop = `The directors stop forwarding ${uncovered.join(", ")}`;
  if (!uncovered.some((l) => l.startsWith("tcp/")))
    return {
      ...base,
      ...nothing(),
      message: `${stop}. No established TCP connection is cut (UDP keeps no connections; its packets stop).`,
    };
  const core = planBreak(
    input.proxies,
    input.established,
    (e) => forwards(input.before, e) && !forwards(input.after, e),
  );
  const message =
    core.breaks === true
      ? `${stop}: ${breakSummary(core)} break.${unknownSentence(core)}`
      : core.breaks === null
        ? `${stop}: connections to them break, and how many is unknown: no fresh report from ${unknownText(core)}.`
        : `${stop}, but the proxies report no established connection to them: nothing breaks.`;
  return { ...base, ...core, message };
}

export interface UnassignInput {
  director: { id: string; hostname: string };
  pool: { id: string; name: string; binds: readonly BindRange[]; hasTable: boolean };
  /** The other directors that serve the pool. */
  others: readonly { id: string; hostname: string }[];
  proxies: readonly SafetyProxy[];
  established: ReadonlyMap<string, ProxyEstablished>;
}

/**
 * Unassigning a director from a pool: while another serves it, the routers move the flows there
 * and the same table keeps them on their proxies; as the last one (of a pool with a table), every
 * established connection to the pool's binds breaks.
 */
export function planUnassign(input: UnassignInput): UnassignPreview {
  const { director, pool, others } = input;
  const base = {
    directorId: director.id,
    poolId: pool.id,
    poolName: pool.name,
    last: others.length === 0,
    stillServedBy: others.map((d) => ({ id: d.id, hostname: d.hostname })),
  };
  if (others.length > 0)
    return {
      ...base,
      ...nothing(),
      message:
        `Nothing breaks: ${others.map((d) => d.hostname).join(", ")} still serve${others.length === 1 ? "s" : ""} ` +
        `${pool.name} with the same table, and the routers move ${director.hostname}'s flows there.`,
    };
  if (!pool.hasTable)
    return {
      ...base,
      ...nothing(),
      message: `${director.hostname} is the last director of ${pool.name}, but the pool has no table yet: nothing breaks.`,
    };
  const core = planBreak(input.proxies, input.established, (e) => forwards(pool.binds, e));
  const last = `${director.hostname} is the last director of ${pool.name}: its VIPs stop being forwarded`;
  const message =
    core.breaks === true
      ? `${last}, and ${breakSummary(core)} break.${unknownSentence(core)}`
      : core.breaks === null
        ? `${last}, and every established connection of the pool breaks; how many is unknown: no fresh ` +
          `report from ${unknownText(core)}.`
        : `${last}, but the proxies report no established connection to them: nothing breaks.`;
  return { ...base, ...core, message };
}

/** Removing a director: unassigning it from each of its pools. */
export function planDirectorRemoval(
  director: { id: string; hostname: string },
  pools: readonly UnassignPreview[],
): DirectorRemovalPreview {
  const broken = pools.reduce((n, p) => n + p.broken, 0);
  const breaks = pools.some((p) => p.breaks === true)
    ? true
    : pools.some((p) => p.breaks === null)
      ? null
      : false;
  const message =
    pools.length === 0
      ? `${director.hostname} serves no pool: nothing breaks.`
      : pools.map((p) => p.message).join(" ");
  return { directorId: director.id, hostname: director.hostname, breaks, broken, pools: [...pools], message };
}

const GIVE_REASON = "Give a reason to apply it anyway";

/** The refusal of a bind change that breaks reported connections (null: none to refuse). */
export function bindChangeRefusal(p: Omit<BindsPreview, "poolId">, poolName: string): TideError | null {
  if (p.breaks !== true) return null;
  return new TideError(
    "unprocessable",
    `This change would break ${breakSummary(p)}, as the proxies last reported: the directors stop ` +
      `forwarding ${p.uncovered.join(", ")} of pool ${poolName}.${unknownSentence(p)} ${GIVE_REASON}, or ` +
      `keep those binds until the connections end.`,
    { broken: p.broken, uncovered: p.uncovered },
  );
}

/** The refusal of an unassign that breaks reported connections, with the way that breaks none. */
export function unassignRefusal(p: UnassignPreview, directorHostname: string): TideError | null {
  if (p.breaks !== true) return null;
  return new TideError(
    "unprocessable",
    `Unassigning ${directorHostname} would break ${breakSummary(p)}, as the proxies last reported: it is ` +
      `the last director of pool ${p.poolName}, and nothing would forward its VIPs.${unknownSentence(p)} ` +
      `Assign another director to ${p.poolName} first (then ${directorHostname}'s flows move to it and ` +
      `nothing breaks), or: ${GIVE_REASON}.`,
    { broken: p.broken, poolId: p.poolId },
  );
}

/** The refusal of a director's removal that breaks reported connections in any of its pools. */
export function removalRefusal(p: DirectorRemovalPreview): TideError | null {
  if (p.breaks !== true) return null;
  const breaking = p.pools.filter((x) => x.breaks === true);
  const names = breaking.map((x) => x.poolName).join(", ");
  return new TideError(
    "unprocessable",
    `Removing ${p.hostname} would break ${breaking
      .map((x) => `${breakSummary(x)} of pool ${x.poolName}`)
      .join("; ")}, as the proxies last reported: it is the last director of ${names}, and nothing ` +
      `would forward ${breaking.length === 1 ? "its" : "their"} VIPs. Assign another director to ` +
      `${names} first (then nothing breaks), or: ${GIVE_REASON}.`,
    { broken: p.broken, poolIds: breaking.map((x) => x.poolId) },
  );
}

const LABEL = /^(tcp|udp)\/(.+):(\d{1,5})(?:-(\d{1,5}))?$/;

/**
 * The binds of a preview's query, "tcp/203.0.113.10:443,udp/2001:db8::10:53" (bindLabel's form;
 * the port follows the last colon, so an IPv6 address needs no brackets). Syntax only: the pool
 * service validates each bind; a malformed one is a bad_request naming `binds[i]`.
 */
export function parseBindLabels(
  text: string,
): { address: string; proto: "tcp" | "udp"; portStart: number; portEnd: number }[] {
  return text.split(",").map((raw, i) => {
    const m = LABEL.exec(raw.trim());
    if (!m) {
      const message = `Bind "${raw.trim()}" is not PROTO/ADDRESS[/BITS]:PORT[-PORT], e.g. tcp/203.0.113.10:443.`;
      throw new TideError("bad_request", message, { fields: { [`binds[${i}]`]: message } });
    }
    const portStart = Number(m[3]);
    return {
      proto: m[1] as "tcp" | "udp",
      address: m[2]!,
      portStart,
      portEnd: m[4] === undefined ? portStart : Number(m[4]),
    };
  });
}
