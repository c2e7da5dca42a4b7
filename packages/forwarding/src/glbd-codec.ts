/**
 * glb-director's binary forwarding table file, "GLBD" version 2, and Tide's version 3.
 *
 * Little-endian integers, addresses in network order, packed:
 *   header (24 B): "GLBD", u32 version = 2, u32 num_tables, u32 table_entries = 65536,
 *                  u32 max_backends = 256, u32 max_binds = 256
 *   per table (537,624 B):
 *     u32 num_backends; 256 x backend {u32 family (1 v4, 2 v6), addr[16] (v4 in the first 4),
 *                                      u16 state (0 filling, 1 active, 2 draining or inactive),
 *                                      u16 healthy (0/1)}            = 4 + 6,144
 *     u32 num_binds; 256 x bind {u32 family, addr[16], u16 prefix_bits, u16 port_start,
 *                                u16 port_end, u8 proto (6 tcp, 17 udp), u8 reserved}  = 4 + 7,168
 *     hash_key[16]; 65,536 x {u32 primary, u32 secondary} (backend slot indexes)  = 16 + 524,288
 * Unused slots are all zero. The rendezvous seed is not stored.
 *
 * Version 3 = the version 2 layout unchanged, then a trailer of num_tables x 4 bytes, one per
 * table in order: u8 hash_fields (bitmask: src_addr 0x1, dst_addr 0x2, src_port 0x4,
 * dst_port 0x8; non-zero, no other bits), u8 alt_hash_fields (same bits, 0 = no migration),
 * u16 reserved = 0. So a file says what each of its tables is hashed on (the content hash covers
 * it); a v2 table is hashed on the director's configured default fields. encodeGlbd writes v3
 * iff a table has hashFields; glb-director's own tools only know v2.
 *
 * The original writes inactive proxies into their backend slot with state 2 (like draining)
 * and leaves them out of every row; decodeGlbd reports a state-2 backend that no row uses as
 * "inactive", otherwise as "draining".
 */
import { formatAddress, parseAddress } from "./address";
import { HASH_FIELD_ORDER } from "./flow-hash";
import {
  MAX_BACKENDS,
  MAX_BINDS,
  TABLE_ROWS,
  type Backend,
  type Bind,
  type ForwardingTable,
  type HashField,
  type ProxyState,
} from "./types";

export const GLBD_MAGIC = "GLBD";
/** glb-director's version: no hash fields in the file. */
export const GLBD_VERSION_2 = 2;
/** Version 2 + a per-table hash-field trailer. */
export const GLBD_VERSION_3 = 3;
export type GlbdVersion = typeof GLBD_VERSION_2 | typeof GLBD_VERSION_3;
export const GLBD_HEADER_SIZE = 24;
/** Bytes per table in the v3 trailer: hash_fields, alt_hash_fields, u16 reserved. */
export const GLBD_TRAILER_ENTRY_SIZE = 4;
const BACKEND_SLOT_SIZE = 24;
const BIND_SLOT_SIZE = 28;
const BACKENDS_OFFSET = 4;
const BINDS_COUNT_OFFSET = BACKENDS_OFFSET + MAX_BACKENDS * BACKEND_SLOT_SIZE; // 6,148
const BINDS_OFFSET = BINDS_COUNT_OFFSET + 4; // 6,152
const HASH_KEY_OFFSET = BINDS_OFFSET + MAX_BINDS * BIND_SLOT_SIZE; // 13,320
const ROWS_OFFSET = HASH_KEY_OFFSET + 16; // 13,336
/** Bytes per table: 537,624. */
export const GLBD_TABLE_SIZE = ROWS_OFFSET + TABLE_ROWS * 8;

/** Size of a GLBD file of `version` holding `numTables` tables. */
export function glbdFileSize(numTables: number, version: GlbdVersion = GLBD_VERSION_2): number {
  const perTable = GLBD_TABLE_SIZE + (version === GLBD_VERSION_3 ? GLBD_TRAILER_ENTRY_SIZE : 0);
  return GLBD_HEADER_SIZE + perTable * numTables;
}

/** Bit of each hash field in the v3 trailer (the bit order is the hashing order). */
const HASH_FIELD_BITS: Record<HashField, number> = {
  src_addr: 0x1,
  dst_addr: 0x2,
  src_port: 0x4,
  dst_port: 0x8,
};
const ALL_HASH_FIELD_BITS = 0xf;

/** The trailer byte for a field list; throws bad_hash_fields for an unknown or repeated field. */
function hashFieldBits(fields: readonly string[], what: string, table: number): number {
  let bits = 0;
  for (const f of fields) {
    const bit = (HASH_FIELD_BITS as Record<string, number | undefined>)[f];
    if (bit === undefined)
      throw new GlbdFormatError("bad_hash_fields", `${what}: unknown hash field ${JSON.stringify(f)}`, {
        table,
      });
    if (bits & bit) throw new GlbdFormatError("bad_hash_fields", `${what}: ${f} given twice`, { table });
    bits |= bit;
  }
  return bits;
}

/** Field list of a trailer byte, in the canonical order. */
function hashFieldsOf(bits: number): HashField[] {
  return HASH_FIELD_ORDER.filter((f) => bits & HASH_FIELD_BITS[f]);
}

const FAMILY_IPV4 = 1;
const FAMILY_IPV6 = 2;
const PROTO_TCP = 6;
const PROTO_UDP = 17;

export type GlbdErrorCode =
  | "bad_magic"
  | "bad_version"
  | "bad_header"
  | "bad_size"
  | "too_many_backends"
  | "no_backends"
  | "too_many_binds"
  | "bad_family"
  | "bad_address"
  | "bad_state"
  | "bad_health"
  | "bad_prefix"
  | "bad_port_range"
  | "bad_proto"
  | "bad_reserved"
  | "dirty_slot"
  | "duplicate_backend"
  | "backend_index_out_of_range"
  | "bad_rows"
  | "bad_hash_key"
  | "bad_hash_fields"
  | "bad_alt_hash_fields";

export interface GlbdErrorLocation {
  /** Byte offset in the file (decode) where the problem is. */
  offset?: number;
  table?: number;
  row?: number;
  slot?: number;
}

export class GlbdFormatError extends Error {
  override name = "GlbdFormatError";
  readonly code: GlbdErrorCode;
  readonly location: GlbdErrorLocation;
  constructor(code: GlbdErrorCode, message: string, location: GlbdErrorLocation = {}) {
    const where = [
      location.table !== undefined ? `table ${location.table}` : null,
      location.slot !== undefined ? `slot ${location.slot}` : null,
      location.row !== undefined ? `row ${location.row}` : null,
      location.offset !== undefined ? `byte offset ${location.offset}` : null,
    ].filter((x) => x !== null);
    super(where.length > 0 ? `${message} (${where.join(", ")})` : message);
    this.code = code;
    this.location = location;
  }
}

const STATE_CODES: Record<ProxyState, number> = { filling: 0, active: 1, draining: 2, inactive: 2 };

function familyOf(bytes: Uint8Array): number {
  return bytes.length === 4 ? FAMILY_IPV4 : FAMILY_IPV6;
}

/**
 * Encodes tables into a GLBD file: v3 when any table has hashFields (then every table must),
 * else glb-director's v2. Throws GlbdFormatError for a table the format cannot hold.
 */
export function encodeGlbd(tables: readonly ForwardingTable[]): Uint8Array {
  const version = tables.some((t) => t.hashFields !== undefined) ? GLBD_VERSION_3 : GLBD_VERSION_2;
  // Checked before any byte is written, so the trailer needs no second pass over the tables.
  const trailer = version === GLBD_VERSION_3 ? tables.map(trailerEntry) : [];
  const out = new Uint8Array(glbdFileSize(tables.length, version));
  const view = new DataView(out.buffer);
  out.set([0x47, 0x4c, 0x42, 0x44], 0); // "GLBD"
  view.setUint32(4, version, true);
  view.setUint32(8, tables.length, true);
  view.setUint32(12, TABLE_ROWS, true);
  view.setUint32(16, MAX_BACKENDS, true);
  view.setUint32(20, MAX_BINDS, true);
  tables.forEach((table, t) => {
    const base = GLBD_HEADER_SIZE + t * GLBD_TABLE_SIZE;
    const n = table.backends.length;
    if (n > MAX_BACKENDS)
      throw new GlbdFormatError("too_many_backends", `${n} backends, at most ${MAX_BACKENDS}`, { table: t });
    if (n === 0) throw new GlbdFormatError("no_backends", "a table needs at least one backend", { table: t });
    if (table.binds.length > MAX_BINDS) {
      throw new GlbdFormatError("too_many_binds", `${table.binds.length} binds, at most ${MAX_BINDS}`, {
        table: t,
      });
    }
    if (table.hashKey.length !== 16)
      throw new GlbdFormatError("bad_hash_key", "hash key must be 16 bytes", { table: t });
    view.setUint32(base, n, true);
    table.backends.forEach((b, i) => {
      const o = base + BACKENDS_OFFSET + i * BACKEND_SLOT_SIZE;
      const ip = parseAddress(b.address).bytes;
      const state = STATE_CODES[b.state];
      if (state === undefined)
        throw new GlbdFormatError("bad_state", `unknown state ${JSON.stringify(b.state)}`, {
          table: t,
          slot: i,
        });
      view.setUint32(o, familyOf(ip), true);
      out.set(ip, o + 4);
      view.setUint16(o + 20, state, true);
      view.setUint16(o + 22, b.healthy ? 1 : 0, true);
    });
    view.setUint32(base + BINDS_COUNT_OFFSET, table.binds.length, true);
    table.binds.forEach((b, i) => {
      const o = base + BINDS_OFFSET + i * BIND_SLOT_SIZE;
      const ip = parseAddress(b.address).bytes;
      const maxBits = ip.length * 8;
      if (!Number.isInteger(b.prefixBits) || b.prefixBits < 0 || b.prefixBits > maxBits) {
        throw new GlbdFormatError("bad_prefix", `prefix /${b.prefixBits} for ${b.address}`, {
          table: t,
          slot: i,
        });
      }
      if (!validPort(b.portStart) || !validPort(b.portEnd) || b.portStart > b.portEnd) {
        throw new GlbdFormatError("bad_port_range", `ports ${b.portStart}-${b.portEnd}`, {
          table: t,
          slot: i,
        });
      }
      if (b.proto !== "tcp" && b.proto !== "udp") {
        throw new GlbdFormatError("bad_proto", `protocol ${JSON.stringify(b.proto)}`, { table: t, slot: i });
      }
      view.setUint32(o, familyOf(ip), true);
      out.set(ip, o + 4);
      view.setUint16(o + 20, b.prefixBits, true);
      view.setUint16(o + 22, b.portStart, true);
      view.setUint16(o + 24, b.portEnd, true);
      out[o + 26] = b.proto === "tcp" ? PROTO_TCP : PROTO_UDP;
    });
    out.set(table.hashKey, base + HASH_KEY_OFFSET);
    if (table.primary.length !== TABLE_ROWS || table.secondary.length !== TABLE_ROWS) {
      throw new GlbdFormatError("bad_rows", `a table has exactly ${TABLE_ROWS} rows`, { table: t });
    }
    const rows = base + ROWS_OFFSET;
    for (let r = 0; r < TABLE_ROWS; r++) {
      const p = table.primary[r]!;
      const s = table.secondary[r]!;
      if (p >= n || s >= n) {
        throw new GlbdFormatError(
          "backend_index_out_of_range",
          `row points at backend ${Math.max(p, s)} of ${n}`,
          {
            table: t,
            row: r,
          },
        );
      }
      view.setUint32(rows + r * 8, p, true);
      view.setUint32(rows + r * 8 + 4, s, true);
    }
  });
  const trailerBase = GLBD_HEADER_SIZE + tables.length * GLBD_TABLE_SIZE;
  trailer.forEach(([fields, alt], t) => {
    out[trailerBase + t * GLBD_TRAILER_ENTRY_SIZE] = fields;
    out[trailerBase + t * GLBD_TRAILER_ENTRY_SIZE + 1] = alt;
  });
  return out;
}

/** [hash_fields, alt_hash_fields] bytes of one table of a v3 file. */
function trailerEntry(table: ForwardingTable, t: number): [number, number] {
  if (table.hashFields === undefined) {
    throw new GlbdFormatError(
      "bad_hash_fields",
      "table has no hashFields while another table has: a v3 file carries them for every table",
      { table: t },
    );
  }
  const fields = hashFieldBits(table.hashFields, "hashFields", t);
  if (fields === 0) throw new GlbdFormatError("bad_hash_fields", "hashFields is empty", { table: t });
  return [fields, hashFieldBits(table.altHashFields ?? [], "altHashFields", t)];
}

function validPort(p: number): boolean {
  return Number.isInteger(p) && p >= 0 && p <= 65535;
}

function allZero(bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (bytes[i] !== 0) return false;
  return true;
}

/** Reads an address field; checks family and the zero padding after an IPv4 address. */
function readAddress(bytes: Uint8Array, view: DataView, o: number, where: GlbdErrorLocation): Uint8Array {
  const family = view.getUint32(o, true);
  if (family === FAMILY_IPV4) {
    if (!allZero(bytes, o + 8, o + 20)) {
      throw new GlbdFormatError("bad_address", "IPv4 address with non-zero padding", {
        ...where,
        offset: o + 8,
      });
    }
    return bytes.slice(o + 4, o + 8);
  }
  if (family === FAMILY_IPV6) return bytes.slice(o + 4, o + 20);
  throw new GlbdFormatError("bad_family", `address family ${family} (expected 1 IPv4 or 2 IPv6)`, {
    ...where,
    offset: o,
  });
}

/**
 * Decodes and fully validates a GLBD v2 or v3 file. Throws GlbdFormatError on the first problem
 * (in file order: header, tables, then the v3 trailer; the C validator checks the same order).
 */
export function decodeGlbd(bytes: Uint8Array): ForwardingTable[] {
  if (bytes.length < GLBD_HEADER_SIZE) {
    throw new GlbdFormatError(
      "bad_size",
      `file is ${bytes.length} bytes, shorter than the ${GLBD_HEADER_SIZE}-byte header`,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes[0] !== 0x47 || bytes[1] !== 0x4c || bytes[2] !== 0x42 || bytes[3] !== 0x44) {
    throw new GlbdFormatError("bad_magic", `magic is not "GLBD"`, { offset: 0 });
  }
  const version = view.getUint32(4, true);
  if (version !== GLBD_VERSION_2 && version !== GLBD_VERSION_3)
    throw new GlbdFormatError("bad_version", `version ${version}, expected 2 or 3`, { offset: 4 });
  const numTables = view.getUint32(8, true);
  const header: [number, number, string][] = [
    [12, TABLE_ROWS, "table_entries"],
    [16, MAX_BACKENDS, "max_backends"],
    [20, MAX_BINDS, "max_binds"],
  ];
  for (const [offset, expected, name] of header) {
    const value = view.getUint32(offset, true);
    if (value !== expected)
      throw new GlbdFormatError("bad_header", `${name} is ${value}, expected ${expected}`, { offset });
  }
  const expectedSize = glbdFileSize(numTables, version);
  if (bytes.length !== expectedSize) {
    const trailer = version === GLBD_VERSION_3 ? ` + ${numTables} x ${GLBD_TRAILER_ENTRY_SIZE}` : "";
    throw new GlbdFormatError(
      "bad_size",
      `file is ${bytes.length} bytes; ${numTables} v${version} tables need ${GLBD_HEADER_SIZE} + ${numTables} x ${GLBD_TABLE_SIZE}${trailer} = ${expectedSize}`,
    );
  }
  const tables: ForwardingTable[] = [];
  for (let t = 0; t < numTables; t++) {
    const base = GLBD_HEADER_SIZE + t * GLBD_TABLE_SIZE;
    const n = view.getUint32(base, true);
    if (n > MAX_BACKENDS) {
      throw new GlbdFormatError("too_many_backends", `num_backends ${n} > ${MAX_BACKENDS}`, {
        table: t,
        offset: base,
      });
    }
    if (n === 0) throw new GlbdFormatError("no_backends", "num_backends is 0", { table: t, offset: base });
    const states: number[] = [];
    const backends: Backend[] = [];
    const seen = new Map<string, number>();
    for (let i = 0; i < MAX_BACKENDS; i++) {
      const o = base + BACKENDS_OFFSET + i * BACKEND_SLOT_SIZE;
      const where = { table: t, slot: i };
      if (i >= n) {
        if (!allZero(bytes, o, o + BACKEND_SLOT_SIZE)) {
          throw new GlbdFormatError("dirty_slot", `unused backend slot is not zero`, { ...where, offset: o });
        }
        continue;
      }
      const address = formatAddress(readAddress(bytes, view, o, where));
      const state = view.getUint16(o + 20, true);
      const health = view.getUint16(o + 22, true);
      if (state > 2)
        throw new GlbdFormatError("bad_state", `backend state ${state} (0..2)`, { ...where, offset: o + 20 });
      if (health > 1)
        throw new GlbdFormatError("bad_health", `backend health ${health} (0/1)`, {
          ...where,
          offset: o + 22,
        });
      const dup = seen.get(address);
      if (dup !== undefined) {
        throw new GlbdFormatError("duplicate_backend", `backend ${address} also in slot ${dup}`, {
          ...where,
          offset: o + 4,
        });
      }
      seen.set(address, i);
      states.push(state);
      backends.push({
        address,
        state: state === 0 ? "filling" : state === 1 ? "active" : "draining",
        healthy: health === 1,
      });
    }
    const numBinds = view.getUint32(base + BINDS_COUNT_OFFSET, true);
    if (numBinds > MAX_BINDS) {
      throw new GlbdFormatError("too_many_binds", `num_binds ${numBinds} > ${MAX_BINDS}`, {
        table: t,
        offset: base + BINDS_COUNT_OFFSET,
      });
    }
    const binds: Bind[] = [];
    for (let i = 0; i < MAX_BINDS; i++) {
      const o = base + BINDS_OFFSET + i * BIND_SLOT_SIZE;
      const where = { table: t, slot: i };
      if (i >= numBinds) {
        if (!allZero(bytes, o, o + BIND_SLOT_SIZE)) {
          throw new GlbdFormatError("dirty_slot", `unused bind slot is not zero`, { ...where, offset: o });
        }
        continue;
      }
      const ip = readAddress(bytes, view, o, where);
      const prefixBits = view.getUint16(o + 20, true);
      const portStart = view.getUint16(o + 22, true);
      const portEnd = view.getUint16(o + 24, true);
      const proto = bytes[o + 26];
      if (prefixBits > ip.length * 8) {
        throw new GlbdFormatError("bad_prefix", `prefix /${prefixBits} for a ${ip.length * 8}-bit address`, {
          ...where,
          offset: o + 20,
        });
      }
      if (portStart > portEnd) {
        throw new GlbdFormatError("bad_port_range", `port_start ${portStart} > port_end ${portEnd}`, {
          ...where,
          offset: o + 22,
        });
      }
      if (proto !== PROTO_TCP && proto !== PROTO_UDP) {
        throw new GlbdFormatError("bad_proto", `protocol ${proto} (expected 6 tcp or 17 udp)`, {
          ...where,
          offset: o + 26,
        });
      }
      if (bytes[o + 27] !== 0)
        throw new GlbdFormatError("bad_reserved", "reserved byte is not 0", { ...where, offset: o + 27 });
      binds.push({
        address: formatAddress(ip),
        prefixBits,
        proto: proto === PROTO_TCP ? "tcp" : "udp",
        portStart,
        portEnd,
      });
    }
    const hashKey = bytes.slice(base + HASH_KEY_OFFSET, base + HASH_KEY_OFFSET + 16);
    const primary = new Uint16Array(TABLE_ROWS);
    const secondary = new Uint16Array(TABLE_ROWS);
    const used = new Uint8Array(n);
    const rows = base + ROWS_OFFSET;
    for (let r = 0; r < TABLE_ROWS; r++) {
      const o = rows + r * 8;
      const p = view.getUint32(o, true);
      const s = view.getUint32(o + 4, true);
      if (p >= n || s >= n) {
        const bad = p >= n ? p : s;
        throw new GlbdFormatError("backend_index_out_of_range", `backend index ${bad} >= num_backends ${n}`, {
          table: t,
          row: r,
          offset: p >= n ? o : o + 4,
        });
      }
      primary[r] = p;
      secondary[r] = s;
      used[p] = 1;
      used[s] = 1;
    }
    // State 2 is shared by draining and inactive; only inactive proxies are in no row at all.
    backends.forEach((b, i) => {
      if (states[i] === 2 && !used[i]) b.state = "inactive";
    });
    tables.push({ hashKey, binds, backends, primary, secondary });
  }
  if (version === GLBD_VERSION_3) {
    const trailerBase = GLBD_HEADER_SIZE + numTables * GLBD_TABLE_SIZE;
    tables.forEach((table, t) => {
      const o = trailerBase + t * GLBD_TRAILER_ENTRY_SIZE;
      const fields = bytes[o]!;
      const alt = bytes[o + 1]!;
      if (fields === 0 || (fields & ~ALL_HASH_FIELD_BITS) !== 0) {
        throw new GlbdFormatError(
          "bad_hash_fields",
          `hash_fields 0x${fields.toString(16)} (non-zero, bits 0x1..0x8)`,
          {
            table: t,
            offset: o,
          },
        );
      }
      if ((alt & ~ALL_HASH_FIELD_BITS) !== 0) {
        throw new GlbdFormatError(
          "bad_alt_hash_fields",
          `alt_hash_fields 0x${alt.toString(16)} (bits 0x1..0x8)`,
          {
            table: t,
            offset: o + 1,
          },
        );
      }
      if (view.getUint16(o + 2, true) !== 0)
        throw new GlbdFormatError("bad_reserved", "trailer reserved field is not 0", {
          table: t,
          offset: o + 2,
        });
      table.hashFields = hashFieldsOf(fields);
      table.altHashFields = hashFieldsOf(alt);
    });
  }
  return tables;
}
