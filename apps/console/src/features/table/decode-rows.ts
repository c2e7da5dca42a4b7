import { TABLE_ROWS } from "./row-number";

/** base64 of 65,536 bytes -> one backend slot per row. Done once per version. */
export function decodeSlots(base64: string): Uint8Array {
  const binary = atob(base64);
  if (binary.length !== TABLE_ROWS) {
    throw new Error(`expected ${TABLE_ROWS} rows, got ${binary.length}`);
  }
  const out = new Uint8Array(TABLE_ROWS);
  for (let i = 0; i < TABLE_ROWS; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/** Rows per backend slot. */
export function countSlots(slots: Uint8Array, backends: number): number[] {
  const counts = new Array<number>(backends).fill(0);
  for (const s of slots) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

export type FilterColumn = "either" | "primary" | "secondary";

/** Row numbers where the slot appears in the chosen column(s). */
export function rowsWithSlot(
  primary: Uint8Array,
  secondary: Uint8Array,
  slot: number,
  column: FilterColumn,
): Uint32Array {
  const hits = new Uint32Array(TABLE_ROWS);
  let n = 0;
  for (let row = 0; row < TABLE_ROWS; row++) {
    const p = primary[row] === slot;
    const s = secondary[row] === slot;
    if (column === "primary" ? p : column === "secondary" ? s : p || s) hits[n++] = row;
  }
  return hits.slice(0, n);
}
