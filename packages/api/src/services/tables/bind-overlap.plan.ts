import { parseAddress } from "@tide/forwarding";

/** A bind as stored (canonical address text, possibly "net/prefix"), with the pool it belongs to. */
export interface PlacedBind {
  poolId: string;
  poolName: string;
  address: string;
  prefixBits: number;
  proto: "tcp" | "udp";
  portStart: number;
  portEnd: number;
}

export interface BindOverlap {
  a: PlacedBind;
  b: PlacedBind;
}

/** "tcp/203.0.113.64/26:8000-8099" — how binds are named in errors and the audit log. */
export function bindLabel(b: Pick<PlacedBind, "address" | "proto" | "portStart" | "portEnd">): string {
  const ports = b.portStart === b.portEnd ? `${b.portStart}` : `${b.portStart}-${b.portEnd}`;
  return `${b.proto}/${b.address}:${ports}`;
}

/** Network bytes of a bind's address (the part before any "/"). */
function networkBytes(address: string): Uint8Array {
  return parseAddress(address.split("/")[0]!).bytes;
}

/** Whether the first `bits` bits of two equal-length byte strings agree. */
function samePrefix(x: Uint8Array, y: Uint8Array, bits: number): boolean {
  for (let i = 0; i < bits; i++) {
    const byte = i >> 3;
    const mask = 0x80 >> (i & 7);
    if ((x[byte]! & mask) !== (y[byte]! & mask)) return false;
  }
  return true;
}

/**
 * Two binds overlap when one packet could match both: same protocol, intersecting port ranges and
 * intersecting networks (same family, and the shorter prefix contains the other network). A
 * director picks the table by bind, so such a packet would have two tables.
 */
export function bindsOverlap(a: PlacedBind, b: PlacedBind): boolean {
  if (a.proto !== b.proto) return false;
  if (a.portEnd < b.portStart || b.portEnd < a.portStart) return false;
  const x = networkBytes(a.address);
  const y = networkBytes(b.address);
  if (x.length !== y.length) return false;
  return samePrefix(x, y, Math.min(a.prefixBits, b.prefixBits));
}

/**
 * Every overlapping pair between `incoming` (a pool's new binds) and `others` (binds of other pools
 * on the same director), plus pairs within `incoming` itself. Pure; O(n·m) on at most 256 binds
 * per pool, which is fine.
 */
export function findBindOverlaps(
  incoming: readonly PlacedBind[],
  others: readonly PlacedBind[],
): BindOverlap[] {
  const found: BindOverlap[] = [];
  incoming.forEach((a, i) => {
    for (const b of incoming.slice(i + 1)) if (bindsOverlap(a, b)) found.push({ a, b });
    for (const b of others) if (b.poolId !== a.poolId && bindsOverlap(a, b)) found.push({ a, b });
  });
  return found;
}

/** One sentence naming both pools and both binds. */
export function describeOverlap(o: BindOverlap): string {
  return o.a.poolId === o.b.poolId
    ? `Binds ${bindLabel(o.a)} and ${bindLabel(o.b)} of pool "${o.a.poolName}" overlap.`
    : `Bind ${bindLabel(o.a)} of pool "${o.a.poolName}" overlaps bind ${bindLabel(o.b)} of pool "${o.b.poolName}".`;
}
