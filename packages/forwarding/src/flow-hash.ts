/**
 * Flow hash: which table row a packet uses, and the outer UDP source port of its GUE packet.
 *
 *   digest = SipHash-2-4(hash_key, enabled fields in the fixed order
 *            src addr, dst addr, src port, dst port; addresses as 4/16 network-order bytes,
 *            ports as 2 bytes big-endian)
 *   row    = digest (little-endian u64) & 0xffff
 *   outer source port = 0x8000 | ((digest ^ client source port) & 0x7fff)
 */
import { parseAddress } from "./address";
import { siphash24Digest, sipKey, type SipDigest } from "./siphash";
import { type HashField } from "./types";

export const HASH_FIELD_ORDER: readonly HashField[] = ["src_addr", "dst_addr", "src_port", "dst_port"];
export const DEFAULT_HASH_FIELDS: readonly HashField[] = ["src_addr"];

export interface Flow {
  srcAddr: string;
  srcPort?: number;
  dstAddr?: string;
  dstPort?: number;
}

export class FlowError extends Error {
  override name = "FlowError";
}

/** Validates a field list (non-empty, known, no duplicates) and returns it in hashing order. */
export function normalizeHashFields(fields: readonly string[]): HashField[] {
  if (fields.length === 0) throw new FlowError("at least one hash field is required");
  const seen = new Set<string>();
  for (const f of fields) {
    if (!(HASH_FIELD_ORDER as readonly string[]).includes(f)) {
      throw new FlowError(
        `unknown hash field ${JSON.stringify(f)} (expected ${HASH_FIELD_ORDER.join(", ")})`,
      );
    }
    if (seen.has(f)) throw new FlowError(`hash field ${JSON.stringify(f)} given twice`);
    seen.add(f);
  }
  return HASH_FIELD_ORDER.filter((f) => seen.has(f));
}

function checkPort(name: string, port: number | undefined): number {
  if (port === undefined) throw new FlowError(`hash field ${name} is enabled but the flow has no ${name}`);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new FlowError(`${name} must be 0..65535, got ${port}`);
  return port;
}

/** The bytes that are hashed for `flow` with `fields`. */
export function flowHashInput(flow: Flow, fields: readonly HashField[] = DEFAULT_HASH_FIELDS): Uint8Array {
  const parts: number[] = [];
  for (const field of normalizeHashFields(fields)) {
    if (field === "src_addr") parts.push(...parseAddress(flow.srcAddr).bytes);
    else if (field === "dst_addr") {
      if (flow.dstAddr === undefined)
        throw new FlowError("hash field dst_addr is enabled but the flow has no dstAddr");
      parts.push(...parseAddress(flow.dstAddr).bytes);
    } else {
      const port =
        field === "src_port" ? checkPort("srcPort", flow.srcPort) : checkPort("dstPort", flow.dstPort);
      parts.push(port >> 8, port & 0xff);
    }
  }
  return Uint8Array.from(parts);
}

/** Flow digest as unsigned 32-bit halves. */
export function flowDigestWords(hashKey: Uint8Array, flow: Flow, fields?: readonly HashField[]): SipDigest {
  return siphash24Digest(sipKey(hashKey), flowHashInput(flow, fields));
}

/** Flow digest as an unsigned 64-bit BigInt. */
export function flowDigest(hashKey: Uint8Array, flow: Flow, fields?: readonly HashField[]): bigint {
  const d = flowDigestWords(hashKey, flow, fields);
  return (BigInt(d.hi) << 32n) | BigInt(d.lo);
}

/** Table row of a digest: its low 16 bits. */
export function flowRow(digest: bigint): number {
  return Number(digest & 0xffffn);
}

/** Outer UDP source port: 0x8000 | ((digest ^ clientSrcPort) & 0x7fff), always 32768..65535. */
export function outerSourcePort(digest: bigint, clientSrcPort: number): number {
  if (!Number.isInteger(clientSrcPort) || clientSrcPort < 0 || clientSrcPort > 65535) {
    throw new FlowError(`client source port must be 0..65535, got ${clientSrcPort}`);
  }
  return 0x8000 | ((Number(digest & 0xffffn) ^ clientSrcPort) & 0x7fff);
}

/** 16 lower-case hex digits of a digest, e.g. "008972f1657a5cbd". */
export function formatDigest(digest: bigint): string {
  return digest.toString(16).padStart(16, "0");
}
