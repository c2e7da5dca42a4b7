/**
 * Strict IPv4 / IPv6 address parsing and canonical formatting.
 *
 * Accepted: dotted quad without leading zeros; IPv6 with at most one "::", 1-4 hex digits per
 * group and an optional dotted-quad tail. Rejected: zone ids, prefixes, whitespace, anything else.
 * IPv6 output follows RFC 5952 (lower case, longest zero run of >= 2 groups compressed).
 */

export type AddressFamily = "ipv4" | "ipv6";

export interface ParsedAddress {
  family: AddressFamily;
  /** Network byte order: 4 bytes for IPv4, 16 for IPv6. */
  bytes: Uint8Array;
}

export class AddressError extends Error {
  override name = "AddressError";
}

const IPV4_PART = /^(0|[1-9][0-9]{0,2})$/;
const IPV6_GROUP = /^[0-9a-fA-F]{1,4}$/;

function parseIpv4Into(text: string, out: Uint8Array, offset: number): boolean {
  const parts = text.split(".");
  if (parts.length !== 4) return false;
  for (let i = 0; i < 4; i++) {
    const part = parts[i] ?? "";
    if (!IPV4_PART.test(part)) return false;
    const value = Number(part);
    if (value > 255) return false;
    out[offset + i] = value;
  }
  return true;
}

function parseIpv6(text: string): Uint8Array | null {
  const bytes = new Uint8Array(16);
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const parseGroups = (part: string): string[] => (part === "" ? [] : part.split(":"));
  const head = parseGroups(halves[0] ?? "");
  const tail = halves.length === 2 ? parseGroups(halves[1] ?? "") : [];
  const groups: number[] = [];
  const all = [...head, ...tail];
  // A dotted-quad may only be the very last group.
  const tailList = halves.length === 2 ? tail : head;
  let v4Tail: Uint8Array | null = null;
  const last = tailList[tailList.length - 1];
  if (last !== undefined && last.includes(".")) {
    v4Tail = new Uint8Array(4);
    if (!parseIpv4Into(last, v4Tail, 0)) return null;
    tailList.pop();
    all.pop();
  }
  for (const g of all) {
    if (!IPV6_GROUP.test(g)) return null;
    groups.push(parseInt(g, 16));
  }
  const needed = v4Tail ? 6 : 8;
  const headGroups = head.length;
  if (halves.length === 2) {
    // "::" stands for at least one zero group.
    if (groups.length > needed - 1) return null;
  } else if (groups.length !== needed) {
    return null;
  }
  const headValues = groups.slice(0, headGroups);
  const tailValues = groups.slice(headGroups);
  headValues.forEach((g, i) => {
    bytes[i * 2] = g >> 8;
    bytes[i * 2 + 1] = g & 0xff;
  });
  const tailStart = needed - tailValues.length;
  tailValues.forEach((g, i) => {
    bytes[(tailStart + i) * 2] = g >> 8;
    bytes[(tailStart + i) * 2 + 1] = g & 0xff;
  });
  if (v4Tail) bytes.set(v4Tail, 12);
  return bytes;
}

/** Parses an IPv4 or IPv6 address. Throws AddressError with the offending text. */
export function parseAddress(text: string): ParsedAddress {
  if (typeof text !== "string" || text.length === 0 || text.length > 45) {
    throw new AddressError(`invalid IP address ${JSON.stringify(text)}`);
  }
  if (text.includes(":")) {
    const bytes = parseIpv6(text);
    if (!bytes) throw new AddressError(`invalid IPv6 address ${JSON.stringify(text)}`);
    return { family: "ipv6", bytes };
  }
  const bytes = new Uint8Array(4);
  if (!parseIpv4Into(text, bytes, 0)) throw new AddressError(`invalid IPv4 address ${JSON.stringify(text)}`);
  return { family: "ipv4", bytes };
}

/** Formats 4 or 16 network-order bytes as canonical text. */
export function formatAddress(bytes: Uint8Array): string {
  if (bytes.length === 4) return Array.from(bytes).join(".");
  if (bytes.length !== 16) throw new AddressError(`an address has 4 or 16 bytes, got ${bytes.length}`);
  const groups: number[] = [];
  for (let i = 0; i < 8; i++) groups.push(((bytes[i * 2] ?? 0) << 8) | (bytes[i * 2 + 1] ?? 0));
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (gs: number[]): string => gs.map((g) => g.toString(16)).join(":");
  if (bestLen < 2) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLen))}`;
}

/** Parses and re-formats: "2001:DB8:0::1" -> "2001:db8::1". */
export function canonicalAddress(text: string): string {
  return formatAddress(parseAddress(text).bytes);
}

/** Parses "addr" or "addr/bits". Without a prefix the full length (32 / 128) is used. */
export function parseCidr(text: string): { address: ParsedAddress; prefixBits: number } {
  const slash = text.indexOf("/");
  if (slash < 0) {
    const address = parseAddress(text);
    return { address, prefixBits: address.family === "ipv4" ? 32 : 128 };
  }
  const address = parseAddress(text.slice(0, slash));
  const bitsText = text.slice(slash + 1);
  const max = address.family === "ipv4" ? 32 : 128;
  if (!/^(0|[1-9][0-9]{0,2})$/.test(bitsText) || Number(bitsText) > max) {
    throw new AddressError(`invalid prefix length in ${JSON.stringify(text)} (0..${max})`);
  }
  return { address, prefixBits: Number(bitsText) };
}

/** Parses a port 0..65535 written in decimal. */
export function parsePort(text: string): number {
  if (!/^(0|[1-9][0-9]{0,4})$/.test(text) || Number(text) > 65535) {
    throw new AddressError(`invalid port ${JSON.stringify(text)} (0..65535)`);
  }
  return Number(text);
}

/**
 * Parses an endpoint: "10.0.0.1", "10.0.0.1:443", "[2001:db8::1]:443", "[2001:db8::1]" or a bare
 * IPv6 address. Returns the canonical address text and the port when given.
 */
export function parseEndpoint(text: string): { address: string; port?: number } {
  if (text.startsWith("[")) {
    const close = text.indexOf("]");
    if (close < 0) throw new AddressError(`missing "]" in ${JSON.stringify(text)}`);
    const inner = parseAddress(text.slice(1, close));
    if (inner.family !== "ipv6")
      throw new AddressError(`brackets are only for IPv6 in ${JSON.stringify(text)}`);
    const rest = text.slice(close + 1);
    if (rest === "") return { address: formatAddress(inner.bytes) };
    if (!rest.startsWith(":"))
      throw new AddressError(`expected ":port" after "]" in ${JSON.stringify(text)}`);
    return { address: formatAddress(inner.bytes), port: parsePort(rest.slice(1)) };
  }
  const colons = text.split(":").length - 1;
  if (colons === 1) {
    const [host = "", port = ""] = text.split(":");
    const address = parseAddress(host);
    if (address.family !== "ipv4") throw new AddressError(`invalid endpoint ${JSON.stringify(text)}`);
    return { address: formatAddress(address.bytes), port: parsePort(port) };
  }
  return { address: canonicalAddress(text) };
}
