/**
 * diffTables: what changes for traffic between two versions of a table.
 * Backends are matched by address (slot indexes may differ between versions).
 *
 * Row counts alone do not tell the whole story: a new hash key or new hash fields send
 * nearly every flow to another row while no row changes, and a state or health change of a
 * proxy that is nowhere primary moves no row either. The diff reports those separately, and
 * estimates the flows a hash change moves from a fixed sample of synthetic client flows.
 *
 * The rendezvous seed is not stored in a table, so a seed change cannot be seen as such: it
 * shows up as rows whose proxies changed.
 */
import { DEFAULT_HASH_FIELDS, flowDigestWords, normalizeHashFields, type Flow } from "./flow-hash";
import { TABLE_ROWS, type Backend, type Bind, type ForwardingTable, type HashField } from "./types";

export interface RowChanges {
  count: number;
  /** The changed row numbers, ascending. */
  rows: Uint16Array;
}

export interface ShareCounts {
  /** Rows where the proxy is primary / secondary. */
  primary: number;
  secondary: number;
  /** The same as a fraction of all rows (0..1). */
  primaryFraction: number;
  secondaryFraction: number;
}

export interface ProxyShareChange {
  address: string;
  /** null when the proxy is not a backend of that table. */
  before: ShareCounts | null;
  after: ShareCounts | null;
  /** Rows whose primary changed and that have this proxy as primary before or after. */
  primaryRowsChanged: number;
}

/** A proxy in both tables whose lifecycle state or health differs. */
export interface BackendStatusChange {
  address: string;
  before: { state: Backend["state"]; healthy: boolean };
  after: { state: Backend["state"]; healthy: boolean };
  /** Same as ProxyShareChange.primaryRowsChanged: 0 when the change moves no row. */
  primaryRowsChanged: number;
}

/** How many sampled client flows get another primary proxy (hash key / field changes). */
export interface FlowMoveEstimate {
  /** Number of synthetic client flows hashed with both tables' key and fields. */
  sampled: number;
  /** Flows whose primary proxy differs between the tables. */
  moved: number;
  /** moved / sampled (0..1). */
  fraction: number;
}

export interface TableDiff {
  rows: number;
  /** Rows whose primary address differs. */
  primaryChanged: RowChanges;
  /** Rows whose secondary address differs. */
  secondaryChanged: RowChanges;
  /** Every proxy of either table: a's backends in slot order, then b's new ones. */
  proxies: ProxyShareChange[];
  /** The flow hash key differs: flows land on other rows even where no row changed. */
  hashKeyChanged: boolean;
  /** Hash fields of each table (DEFAULT_HASH_FIELDS when the table does not carry them). */
  hashFields: { before: HashField[]; after: HashField[]; changed: boolean };
  /** Alternate (migration) hash fields; null when the table has none. */
  altHashFields: { before: HashField[] | null; after: HashField[] | null; changed: boolean };
  /**
   * Estimated flows that change primary proxy when the hash key or fields changed (this also
   * counts flows whose row changed); null when both are unchanged, the row counts are exact then.
   */
  flowsMoved: FlowMoveEstimate | null;
  /** Binds only in b (added) or only in a (removed), as written by bindLabel. */
  binds: { added: string[]; removed: string[] };
  /** Backend addresses only in b (added) or only in a (removed). */
  backends: { added: string[]; removed: string[] };
  /** Proxies in both tables whose state or health changed, a's slot order. */
  statusChanges: BackendStatusChange[];
}

export interface DiffOptions {
  /** Synthetic client flows hashed to estimate flowsMoved (default FLOW_SAMPLE_SIZE). */
  sampleFlows?: number;
}

/**
 * Client flows sampled for flowsMoved. 10,000 flows put the 95% confidence interval of the
 * fraction within about ±1 percentage point (1.96 * sqrt(0.25 / 10,000) = 0.0098).
 */
export const FLOW_SAMPLE_SIZE = 10_000;

/** Fixed seed of the flow sample, so the same two tables always give the same estimate. */
const FLOW_SAMPLE_SEED = 0x7469_6465; // "tide"

/** "tcp 203.0.113.10/32:443", "udp [2001:db8::/64]:53-54". */
export function bindLabel(b: Bind): string {
  const net = `${b.address}/${b.prefixBits}`;
  const ports = b.portStart === b.portEnd ? `${b.portStart}` : `${b.portStart}-${b.portEnd}`;
  return `${b.proto} ${b.address.includes(":") ? `[${net}]` : net}:${ports}`;
}

function shares(table: ForwardingTable): Map<string, ShareCounts> {
  const p = new Uint32Array(table.backends.length);
  const s = new Uint32Array(table.backends.length);
  for (let r = 0; r < TABLE_ROWS; r++) {
    p[table.primary[r]!]!++;
    s[table.secondary[r]!]!++;
  }
  const out = new Map<string, ShareCounts>();
  table.backends.forEach((b, i) => {
    out.set(b.address, {
      primary: p[i]!,
      secondary: s[i]!,
      primaryFraction: p[i]! / TABLE_ROWS,
      secondaryFraction: s[i]! / TABLE_ROWS,
    });
  });
  return out;
}

function checkRows(table: ForwardingTable, name: string): void {
  if (table.primary.length !== TABLE_ROWS || table.secondary.length !== TABLE_ROWS) {
    throw new RangeError(`table ${name} must have ${TABLE_ROWS} rows`);
  }
  for (let r = 0; r < TABLE_ROWS; r++) {
    if (table.primary[r]! >= table.backends.length || table.secondary[r]! >= table.backends.length) {
      throw new RangeError(`table ${name} row ${r} points outside its ${table.backends.length} backends`);
    }
  }
}

function sameBytes(x: Uint8Array, y: Uint8Array): boolean {
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

function sameFields(x: readonly HashField[] | null, y: readonly HashField[] | null): boolean {
  if (x === null || y === null) return x === y;
  return x.length === y.length && x.every((f, i) => f === y[i]);
}

/** A v3 table carries its fields; a v2 table is hashed on the default fields. */
function fieldsOf(t: ForwardingTable): HashField[] {
  const f = t.hashFields;
  return f && f.length > 0 ? normalizeHashFields(f) : [...DEFAULT_HASH_FIELDS];
}

/** [] and unset both mean "no migration in progress". */
function altFieldsOf(t: ForwardingTable): HashField[] | null {
  const f = t.altHashFields;
  return f && f.length > 0 ? normalizeHashFields(f) : null;
}

/** mulberry32: a small deterministic 32-bit generator; statistical quality is enough for a sample. */
function sampler(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/**
 * The sampled flows: random client addresses of the VIP's family and ephemeral source ports
 * (1024..65535), all to the first bind's address and first port (192.0.2.1:443 without binds).
 */
function sampleFlows(a: ForwardingTable, b: ForwardingTable, count: number): Flow[] {
  const bind = a.binds[0] ?? b.binds[0];
  const dstAddr = bind?.address ?? "192.0.2.1";
  const dstPort = bind?.portStart ?? 443;
  const v6 = dstAddr.includes(":");
  const next = sampler(FLOW_SAMPLE_SEED);
  const flows: Flow[] = [];
  for (let i = 0; i < count; i++) {
    const w = next();
    const srcAddr = v6
      ? `2001:db8:${(w >>> 16).toString(16)}:${(w & 0xffff).toString(16)}::${(next() & 0xffff).toString(16)}`
      : `${w >>> 24}.${(w >>> 16) & 0xff}.${(w >>> 8) & 0xff}.${w & 0xff}`;
    const srcPort = 1024 + (next() % (65536 - 1024));
    flows.push({ srcAddr, srcPort, dstAddr, dstPort });
  }
  return flows;
}

function primaryOf(t: ForwardingTable, fields: readonly HashField[], flow: Flow): string {
  // The row is the digest's low 16 bits (flow-hash.ts), i.e. the low half of its low word.
  const row = flowDigestWords(t.hashKey, flow, fields).lo & 0xffff;
  return t.backends[t.primary[row]!]!.address;
}

function estimateFlowsMoved(
  a: ForwardingTable,
  b: ForwardingTable,
  fieldsA: readonly HashField[],
  fieldsB: readonly HashField[],
  count: number,
): FlowMoveEstimate {
  let moved = 0;
  for (const flow of sampleFlows(a, b, count)) {
    if (primaryOf(a, fieldsA, flow) !== primaryOf(b, fieldsB, flow)) moved++;
  }
  return { sampled: count, moved, fraction: count === 0 ? 0 : moved / count };
}

export function diffTables(a: ForwardingTable, b: ForwardingTable, options: DiffOptions = {}): TableDiff {
  checkRows(a, "a");
  checkRows(b, "b");
  const sampleSize = options.sampleFlows ?? FLOW_SAMPLE_SIZE;
  if (!Number.isInteger(sampleSize) || sampleSize < 1)
    throw new RangeError(`sampleFlows must be a positive integer, got ${sampleSize}`);
  // Map every address to one id so rows compare by address with two small lookup arrays.
  const ids = new Map<string, number>();
  const idOf = (address: string): number => {
    let id = ids.get(address);
    if (id === undefined) {
      id = ids.size;
      ids.set(address, id);
    }
    return id;
  };
  const aIds = Uint16Array.from(a.backends, (x) => idOf(x.address));
  const bIds = Uint16Array.from(b.backends, (x) => idOf(x.address));
  const pRows = new Uint16Array(TABLE_ROWS);
  const sRows = new Uint16Array(TABLE_ROWS);
  // Per address id: rows whose primary changed with that proxy on either side.
  const movedById = new Uint32Array(ids.size);
  let pCount = 0;
  let sCount = 0;
  for (let r = 0; r < TABLE_ROWS; r++) {
    const pa = aIds[a.primary[r]!]!;
    const pb = bIds[b.primary[r]!]!;
    if (pa !== pb) {
      pRows[pCount++] = r;
      movedById[pa]!++;
      movedById[pb]!++;
    }
    if (aIds[a.secondary[r]!] !== bIds[b.secondary[r]!]) sRows[sCount++] = r;
  }
  const before = shares(a);
  const after = shares(b);

  const fieldsA = fieldsOf(a);
  const fieldsB = fieldsOf(b);
  const altA = altFieldsOf(a);
  const altB = altFieldsOf(b);
  const hashKeyChanged = !sameBytes(a.hashKey, b.hashKey);
  const fieldsChanged = !sameFields(fieldsA, fieldsB);

  const bindsA = new Set(a.binds.map(bindLabel));
  const bindsB = new Set(b.binds.map(bindLabel));
  const addrA = new Map(a.backends.map((x) => [x.address, x]));
  const addrB = new Map(b.backends.map((x) => [x.address, x]));
  const statusChanges: BackendStatusChange[] = [];
  for (const x of a.backends) {
    const y = addrB.get(x.address);
    if (!y || (x.state === y.state && x.healthy === y.healthy)) continue;
    statusChanges.push({
      address: x.address,
      before: { state: x.state, healthy: x.healthy },
      after: { state: y.state, healthy: y.healthy },
      primaryRowsChanged: movedById[ids.get(x.address)!]!,
    });
  }

  return {
    rows: TABLE_ROWS,
    primaryChanged: { count: pCount, rows: pRows.slice(0, pCount) },
    secondaryChanged: { count: sCount, rows: sRows.slice(0, sCount) },
    proxies: [...ids].map(([address, id]) => ({
      address,
      before: before.get(address) ?? null,
      after: after.get(address) ?? null,
      primaryRowsChanged: movedById[id]!,
    })),
    hashKeyChanged,
    hashFields: { before: fieldsA, after: fieldsB, changed: fieldsChanged },
    altHashFields: { before: altA, after: altB, changed: !sameFields(altA, altB) },
    flowsMoved:
      hashKeyChanged || fieldsChanged ? estimateFlowsMoved(a, b, fieldsA, fieldsB, sampleSize) : null,
    binds: {
      added: [...bindsB].filter((x) => !bindsA.has(x)),
      removed: [...bindsA].filter((x) => !bindsB.has(x)),
    },
    backends: {
      added: b.backends.filter((x) => !addrA.has(x.address)).map((x) => x.address),
      removed: a.backends.filter((x) => !addrB.has(x.address)).map((x) => x.address),
    },
    statusChanges,
  };
}

/** Two table files: tables are compared by index; the extra tables of the longer file are listed. */
export interface TableFileDiff {
  tablesBefore: number;
  tablesAfter: number;
  /** Indexes present in only one file. */
  tablesAdded: number[];
  tablesRemoved: number[];
  /** One diff per index present in both files, ascending. */
  tables: { index: number; diff: TableDiff }[];
}

export function diffTableFiles(
  a: readonly ForwardingTable[],
  b: readonly ForwardingTable[],
  options: DiffOptions = {},
): TableFileDiff {
  const common = Math.min(a.length, b.length);
  const range = (from: number, to: number) =>
    Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);
  return {
    tablesBefore: a.length,
    tablesAfter: b.length,
    tablesAdded: range(a.length, b.length),
    tablesRemoved: range(b.length, a.length),
    tables: range(0, common).map((index) => ({ index, diff: diffTables(a[index]!, b[index]!, options) })),
  };
}
