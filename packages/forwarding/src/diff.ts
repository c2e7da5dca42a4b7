/**
 * diffTables: what changes for traffic between two versions of a table.
 * Backends are matched by address (slot indexes may differ between versions).
 */
import { TABLE_ROWS, type ForwardingTable } from "./types";

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
}

export interface TableDiff {
  rows: number;
  /** Rows whose primary address differs. */
  primaryChanged: RowChanges;
  /** Rows whose secondary address differs. */
  secondaryChanged: RowChanges;
  /** Every proxy of either table: a's backends in slot order, then b's new ones. */
  proxies: ProxyShareChange[];
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

export function diffTables(a: ForwardingTable, b: ForwardingTable): TableDiff {
  checkRows(a, "a");
  checkRows(b, "b");
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
  let pCount = 0;
  let sCount = 0;
  for (let r = 0; r < TABLE_ROWS; r++) {
    if (aIds[a.primary[r]!] !== bIds[b.primary[r]!]) pRows[pCount++] = r;
    if (aIds[a.secondary[r]!] !== bIds[b.secondary[r]!]) sRows[sCount++] = r;
  }
  const before = shares(a);
  const after = shares(b);
  return {
    rows: TABLE_ROWS,
    primaryChanged: { count: pCount, rows: pRows.slice(0, pCount) },
    secondaryChanged: { count: sCount, rows: sRows.slice(0, sCount) },
    proxies: [...ids.keys()].map((address) => ({
      address,
      before: before.get(address) ?? null,
      after: after.get(address) ?? null,
    })),
  };
}
