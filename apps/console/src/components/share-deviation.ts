/** Rows in a forwarding table: every share is of these. */
import { TABLE_ROWS } from "@tide/forwarding/types";

export { TABLE_ROWS };

export interface Deviation {
  rows: number;
  /** Share of the table, 0..1. */
  share: number;
  /** (rows - even) / even, e.g. +0.012 for 1.2% above an even share; null for a proxy with no rows. */
  deviation: number | null;
}

/**
 * Each proxy's rows against an even share among the proxies that hold rows in this series (a
 * drained or inactive proxy holds none and is not counted: the others split the table). Pure.
 */
export function deviations(values: readonly number[]): { even: number | null; items: Deviation[] } {
  const holders = values.filter((v) => v > 0).length;
  const even = holders > 0 ? TABLE_ROWS / holders : null;
  return {
    even,
    items: values.map((rows) => ({
      rows,
      share: rows / TABLE_ROWS,
      deviation: even !== null && rows > 0 ? (rows - even) / even : null,
    })),
  };
}

/** "+1.2%", "−0.4%", "±0.0%": a deviation as a signed percentage (a real minus sign). */
export function formatDeviation(d: number): string {
  const p = (d * 100).toFixed(1);
  if (p === "0.0" || p === "-0.0") return "±0.0%";
  return d > 0 ? `+${p}%` : `\u2212${p.slice(1)}%`;
}
