/**
 * The lab's forwarding table (pure): one pool "web" whose backends are the topology's proxies, bound
 * to the VIP on the test servers' ports, built with @tide/forwarding and encoded as a 1-table GLBD
 * file, whose sha256 is the content hash every director must report.
 */
import {
  buildTable,
  encodeGlbd,
  tableContentHash,
  type Bind,
  type ForwardingTable,
  type HashField,
  type ProxyState,
  type TableSpec,
} from "@tide/forwarding";
import { LabError } from "./errors";
import { type GlbTopology } from "./topology";

export const LAB_POOL = "web";
/** Fixed keys: the table is a pure function of the proxies' states (16 bytes each). */
export const LAB_HASH_KEY = Uint8Array.from(Buffer.from("7469646520676c62206c616220686b31", "hex"));
export const LAB_SEED = Uint8Array.from(Buffer.from("7469646520676c62206c616220736431", "hex"));
/**
 * Flow-hash fields the lab's directors use. With one client address, hashing the source address
 * alone would put every connection on one row; adding the source port spreads them.
 */
export const LAB_HASH_FIELDS: readonly HashField[] = ["src_addr", "src_port"];

/** Each proxy's state; proxies left out are active. */
export type ProxyStates = Partial<Record<string, ProxyState>>;
/** Each proxy's health bit; proxies left out are healthy. */
export type ProxyHealth = Partial<Record<string, boolean>>;

export interface LabTable {
  table: ForwardingTable;
  /** The GLBD v2 file (one table). */
  bytes: Uint8Array;
  /** sha256 of `bytes`: the content hash the directors report for the pool. */
  hash: string;
  /** Every proxy's state, including the defaulted ones. */
  states: Record<string, ProxyState>;
  health: Record<string, boolean>;
}

/** A VIP prefix the table binds beside the lab's own (added with `lab vip add`). */
export interface VipPrefix {
  address: string;
  prefixBits: number;
}

/**
 * The lab's binds: the test servers' ports (HTTP, stream TCP and UDP) on its VIP, and the same
 * ports on every added VIP prefix (without a bind a director drops the packet: `no_bind`).
 */
export function labBinds(topology: GlbTopology, vips: readonly VipPrefix[] = []): Bind[] {
  const binds = (address: string, prefixBits: number) => {
    const bind = (proto: "tcp" | "udp", port: number): Bind => ({
      address,
      prefixBits,
      proto,
      portStart: port,
      portEnd: port,
    });
    return [
      bind("tcp", topology.ports.http),
      bind("tcp", topology.ports.stream),
      bind("udp", topology.ports.stream),
    ];
  };
  return [binds(topology.vip, 32), ...vips.map((v) => binds(v.address, v.prefixBits))].flat();
}

const STATES: readonly ProxyState[] = ["active", "draining", "inactive", "filling"];

export function labTableSpec(
  topology: GlbTopology,
  states: ProxyStates = {},
  health: ProxyHealth = {},
  vips: readonly VipPrefix[] = [],
): { spec: TableSpec; states: Record<string, ProxyState>; health: Record<string, boolean> } {
  const names = new Set(topology.proxies.map((p) => p.name));
  for (const name of [...Object.keys(states), ...Object.keys(health)]) {
    if (!names.has(name)) {
      throw new LabError("bad_argument", `no proxy ${JSON.stringify(name)}`, { proxies: [...names] });
    }
  }
  const fullStates: Record<string, ProxyState> = {};
  const fullHealth: Record<string, boolean> = {};
  for (const p of topology.proxies) {
    const state = states[p.name] ?? "active";
    if (!STATES.includes(state)) {
      throw new LabError("bad_argument", `${p.name}: unknown state ${JSON.stringify(state)}`, {
        states: STATES,
      });
    }
    fullStates[p.name] = state;
    fullHealth[p.name] = health[p.name] ?? true;
  }
  const spec: TableSpec = {
    hashKey: LAB_HASH_KEY,
    seed: LAB_SEED,
    binds: labBinds(topology, vips),
    backends: topology.proxies.map((p) => ({
      address: p.address,
      state: fullStates[p.name] ?? "active",
      healthy: fullHealth[p.name] ?? true,
    })),
  };
  return { spec, states: fullStates, health: fullHealth };
}

export function buildLabTable(
  topology: GlbTopology,
  states: ProxyStates = {},
  health: ProxyHealth = {},
  vips: readonly VipPrefix[] = [],
): LabTable {
  const { spec, states: s, health: h } = labTableSpec(topology, states, health, vips);
  let table: ForwardingTable;
  try {
    table = buildTable(spec);
  } catch (e) {
    throw new LabError("bad_argument", `cannot build the table: ${(e as Error).message}`, { states: s });
  }
  const bytes = encodeGlbd([table]);
  return { table, bytes, hash: tableContentHash(bytes), states: s, health: h };
}
