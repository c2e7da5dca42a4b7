/**
 * Domain types shared by the forwarding modules.
 *
 * Addresses are always canonical text (IPv4 dotted quad, IPv6 RFC 5952 lower case);
 * see address.ts for parsing and formatting.
 */

/** Number of rows in every forwarding table (GLB: 2^16; C: TIDE_TABLE_ROWS, checked by types.test.ts). */
export const TABLE_ROWS = 65536;
/** Backend slots per table in the GLBD v2 file. */
export const MAX_BACKENDS = 256;
/** Bind slots per table in the GLBD v2 file. */
export const MAX_BINDS = 256;

export type ProxyState = "active" | "draining" | "inactive" | "filling";

/** Lifecycle state plus health of one proxy, index-aligned with the table's backends. */
export interface ProxyStatus {
  state: ProxyState;
  healthy: boolean;
}

/** A proxy (GLB "backend") as it appears in a table. */
export interface Backend extends ProxyStatus {
  /** Canonical address text, IPv4 or IPv6. */
  address: string;
}

export type BindProto = "tcp" | "udp";

/** A VIP bind: address/prefix + protocol + inclusive port range. */
export interface Bind {
  /** Canonical network address text (host bits as given). */
  address: string;
  /** 0..32 for IPv4, 0..128 for IPv6. A single address has 32 / 128. */
  prefixBits: number;
  proto: BindProto;
  /** Inclusive port range, portStart <= portEnd. */
  portStart: number;
  portEnd: number;
}

/** Everything needed to build one table (one service). */
export interface TableSpec {
  /** 16-byte SipHash key for the flow hash; stored in the table file. */
  hashKey: Uint8Array;
  /** 16-byte SipHash key for rendezvous ordering; build-time only (not stored). */
  seed: Uint8Array;
  binds: Bind[];
  /** Backend slot order = index order in the table file. */
  backends: Backend[];
}

/** A built or decoded table. Row r uses backends[primary[r]] then backends[secondary[r]]. */
export interface ForwardingTable {
  hashKey: Uint8Array;
  binds: Bind[];
  backends: Backend[];
  /** TABLE_ROWS entries, index into backends. */
  primary: Uint16Array;
  /** TABLE_ROWS entries, index into backends. */
  secondary: Uint16Array;
  /**
   * Flow-hash fields of this table, in the canonical order (src_addr, dst_addr, src_port,
   * dst_port). Set: the table is written to / was read from a GLBD v3 file, which carries them.
   * Unset: a v2 table, hashed on the director's configured default fields.
   */
  hashFields?: HashField[];
  /** Second field set while a pool migrates hash fields ([] = none); only with hashFields. */
  altHashFields?: HashField[];
}

/**
 * Which row-assignment rules to use.
 * - "glb": byte-for-byte what glb-director's builder produces.
 * - "tide": Tide's rules (default); see assign.ts.
 */
export type Variant = "glb" | "tide";

export type HashField = "src_addr" | "dst_addr" | "src_port" | "dst_port";

/** Internal prepared state for one seed + address list; shared with assignRows' fallback path and the Wasm ranker. */
export interface RendezvousContext {
  readonly initState: Int32Array;
  /** Per proxy message blocks (address || length), see proxyWordStart/proxyBlocks. */
  readonly proxyWords: Int32Array;
  readonly proxyWordStart: Int32Array;
  readonly proxyBlocks: Int32Array;
  readonly count: number;
  /** When every proxy is IPv4: each address as one little-endian word (fast path), else null. */
  readonly ipv4Words: Int32Array | null;
}
