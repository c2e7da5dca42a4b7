import { parseAddress } from "@tide/forwarding";
import { bindLabel, bindsOverlap, type PlacedBind } from "./bind-overlap.plan";

type Bind = Omit<PlacedBind, "poolId" | "poolName">;

/**
 * Why a flow's destination cannot be explained in a pool's table, or null when it can: a director
 * only sends a pool's table the packets addressed to one of the pool's binds, so any other
 * destination never reaches these rows and "explaining" it would answer a question nobody asked.
 * Without a port, any port of a matching bind will do; the protocol is not part of the question.
 */
export function destinationRefusal(
  poolName: string,
  binds: readonly Bind[],
  dstAddr: string,
  dstPort: number | undefined,
): string | null {
  let bytes: Uint8Array;
  try {
    bytes = parseAddress(dstAddr).bytes;
  } catch {
    return `${dstAddr} is not an IPv4 or IPv6 address.`;
  }
  const probe = (proto: "tcp" | "udp"): Bind => ({
    address: dstAddr,
    prefixBits: bytes.length * 8,
    proto,
    portStart: dstPort ?? 0,
    portEnd: dstPort ?? 65535,
  });
  const ok = binds.some((b) =>
    bindsOverlap({ ...b, poolId: "", poolName: "" }, { ...probe(b.proto), poolId: "", poolName: "" }),
  );
  if (ok) return null;
  const shown =
    dstPort === undefined
      ? dstAddr
      : dstAddr.includes(":")
        ? `[${dstAddr}]:${dstPort}`
        : `${dstAddr}:${dstPort}`;
  const list = binds.map(bindLabel).join(", ") || "none";
  return `${shown} is not a bind of pool ${poolName}, so its packets never reach this table (its binds: ${list}). Leave the destination empty or use one of them.`;
}
