import type { FilterColumn } from "./decode-rows";
import { formatRowHex, parseRowNumber } from "./row-number";

/**
 * What the table page shows besides the version, kept in the URL so a reload or a shared link
 * opens the same view: the selected row, the proxy filter and the explained flow.
 * `?version=7&row=0xbb44&proxy=prx_…&column=primary&src=198.51.100.7:45678&dst=192.0.2.10:443`
 */
export interface TableUrlState {
  row: number | null;
  /** Filter: rows of this proxy (its id: stable across versions, unlike its slot). */
  proxy: string | null;
  column: FilterColumn;
  /** The explained flow's client and destination, as typed ("" when none). */
  src: string;
  dst: string;
}

type Search = Record<string, string | string[] | undefined>;

const COLUMNS: readonly FilterColumn[] = ["either", "primary", "secondary"];

function one(search: Search, key: string): string {
  const v = search[key];
  return typeof v === "string" ? v.trim().slice(0, 200) : "";
}

export function tableStateFromSearch(search: Search): TableUrlState {
  const column = one(search, "column") as FilterColumn;
  const proxy = one(search, "proxy");
  return {
    row: parseRowNumber(one(search, "row")),
    proxy: /^prx_[0-9a-z]+$/.test(proxy) ? proxy : null,
    column: COLUMNS.includes(column) ? column : "either",
    src: one(search, "src"),
    dst: one(search, "dst"),
  };
}

/** The query string of a view (only what is set; "either" is the default column). */
export function searchFromTableState(version: number | null, s: TableUrlState): string {
  const params = new URLSearchParams();
  if (version !== null) params.set("version", String(version));
  if (s.row !== null) params.set("row", formatRowHex(s.row));
  if (s.proxy) {
    params.set("proxy", s.proxy);
    if (s.column !== "either") params.set("column", s.column);
  }
  if (s.src) {
    params.set("src", s.src);
    if (s.dst) params.set("dst", s.dst);
  }
  const out = params.toString();
  return out ? `?${out}` : "";
}
