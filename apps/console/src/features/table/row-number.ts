import { TABLE_ROWS } from "@tide/forwarding/types";

/** A forwarding table has TABLE_ROWS (2^16) rows; a row number is 0..65535. */
export { TABLE_ROWS };

export function formatRowHex(row: number): string {
  return `0x${row.toString(16).padStart(4, "0")}`;
}

/** "0x1a2b" (hex) or "6699" (decimal) -> row; null when it is not a row number. */
export function parseRowNumber(text: string): number | null {
  const t = text.trim().toLowerCase();
  let n: number;
  if (/^0x[0-9a-f]{1,4}$/.test(t)) n = Number.parseInt(t.slice(2), 16);
  else if (/^\d{1,5}$/.test(t)) n = Number.parseInt(t, 10);
  else return null;
  return n < TABLE_ROWS ? n : null;
}
