import { type ForwardingTable } from "./types";
export interface TableDiff { rows: number }
export function diffTables(_a: ForwardingTable, _b: ForwardingTable): TableDiff { throw new Error("not implemented"); }
