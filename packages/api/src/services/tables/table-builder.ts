import {
  assignRows,
  type HashField,
  computeRendezvousOrder,
  type Backend,
  type ForwardingTable,
  type RendezvousOrder,
} from "@tide/forwarding";

/**
 * Build a pool's forwarding table, reusing the rendezvous order. The order (65,536 rows of proxy
 * ranks) depends only on the pool's seed and proxy addresses, not on states or health, so a drain
 * or fill only re-runs the cheap row assignment. Keyed by seed + addresses; a few pools' worth.
 */
const ORDER_CACHE_ENTRIES = 16;
const orderCache = new Map<string, RendezvousOrder>();

function cachedOrder(seed: Uint8Array, addresses: readonly string[]): RendezvousOrder {
  const key = `${Buffer.from(seed).toString("hex")}|${addresses.join(",")}`;
  const hit = orderCache.get(key);
  if (hit) {
    orderCache.delete(key); // refresh LRU position
    orderCache.set(key, hit);
    return hit;
  }
  const order = computeRendezvousOrder(seed, addresses);
  orderCache.set(key, order);
  if (orderCache.size > ORDER_CACHE_ENTRIES) {
    const oldest = orderCache.keys().next().value;
    if (oldest !== undefined) orderCache.delete(oldest);
  }
  return order;
}

export interface PoolSecrets {
  hashKey: Uint8Array;
  seed: Uint8Array;
  binds: { address: string; prefixBits: number; proto: "tcp" | "udp"; portStart: number; portEnd: number }[];
  /** The pool's hash fields: written into every table (GLBD v3), so a table says how to hash it. */
  hashFields: readonly HashField[];
  /**
   * The fields it hashed on before, while a hash-field change migrates ([] or absent = none): the
   * director adds that hash's row as extra hops, so an established flow still reaches its proxy.
   */
  altHashFields?: readonly HashField[];
}

export function buildTableForPool(pool: PoolSecrets, backends: Backend[]): ForwardingTable {
  const order = cachedOrder(
    pool.seed,
    backends.map((b) => b.address),
  );
  const { primary, secondary } = assignRows(order, backends);
  return {
    hashKey: pool.hashKey,
    binds: pool.binds.map((b) => ({ ...b, address: b.address.split("/")[0]! })),
    backends,
    primary,
    secondary,
    hashFields: [...pool.hashFields],
    ...(pool.altHashFields?.length ? { altHashFields: [...pool.altHashFields] } : {}),
  };
}
