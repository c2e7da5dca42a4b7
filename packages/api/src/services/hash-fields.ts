import { HashField, TideError, type HashField as HashFieldT } from "@tide/contracts";
import { flowDigest, flowRow, normalizeHashFields, type Flow, type ForwardingTable } from "@tide/forwarding";

/**
 * Sample size of the hash-field preview. The moved fraction of n independent flows has a standard
 * error of at most 0.5/sqrt(n): 0.55 percentage points at 8,192 flows, and two SipHash runs per flow
 * take a few tens of milliseconds.
 */
export const PREVIEW_SAMPLE_FLOWS = 8192;

/** Linux's default ephemeral port range (net.ipv4.ip_local_port_range), where client ports come from. */
const EPHEMERAL_FIRST = 32768;
const EPHEMERAL_COUNT = 61000 - 32768;

/** mulberry32: a tiny seeded PRNG, so every preview of a pool maps the same sample. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/**
 * A deterministic sample of client flows to a pool's first bind: sources anywhere in IPv4 unicast
 * space, ports from the ephemeral range, destination the bind's address and first port.
 */
export function sampleFlows(
  dst: { address: string; portStart: number } | undefined,
  n = PREVIEW_SAMPLE_FLOWS,
): Flow[] {
  const next = prng(0x7469_6465); // "tide"
  const dstAddr = dst?.address.split("/")[0] ?? "203.0.113.1";
  const dstPort = dst?.portStart ?? 443;
  return Array.from({ length: n }, () => {
    const v = next();
    // 1.0.0.0 .. 223.255.255.255: unicast, first octet never 0.
    const srcAddr = `${1 + ((v >>> 24) % 223)}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
    return { srcAddr, srcPort: EPHEMERAL_FIRST + (next() % EPHEMERAL_COUNT), dstAddr, dstPort };
  });
}

/** Flows whose primary proxy differs between hashing with `from` and with `to` on the same table. */
export function countMovedFlows(
  table: ForwardingTable,
  from: readonly HashFieldT[],
  to: readonly HashFieldT[],
  flows: readonly Flow[],
): number {
  const primaryOf = (flow: Flow, fields: readonly HashFieldT[]) =>
    table.backends[table.primary[flowRow(flowDigest(table.hashKey, flow, fields))]!]!.address;
  let moved = 0;
  for (const flow of flows) if (primaryOf(flow, from) !== primaryOf(flow, to)) moved += 1;
  return moved;
}

/**
 * Parse hash fields from a list or "src_addr,src_port" text into hashing order. Unknown or
 * repeated fields are a bad_request naming `field`.
 */
export function parseHashFields(input: string | readonly string[], field = "hashFields"): HashFieldT[] {
  const parts = typeof input === "string" ? input.split(",").map((s) => s.trim()) : [...input];
  for (const p of parts) {
    if (!HashField.safeParse(p).success) {
      const message = `Unknown hash field "${p}"; use ${HashField.options.join(", ")}.`;
      throw new TideError("bad_request", message, { fields: { [field]: message } });
    }
  }
  try {
    return normalizeHashFields(parts);
  } catch (e) {
    const message = `Hash fields: ${e instanceof Error ? e.message : String(e)}.`;
    throw new TideError("bad_request", message, { fields: { [field]: message } });
  }
}
