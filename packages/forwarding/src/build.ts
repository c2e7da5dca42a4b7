import { type ForwardingTable, type TableSpec, type Variant } from "./types";
export interface BuildOptions { variant?: Variant }
export function buildTable(_spec: TableSpec, _options?: BuildOptions): ForwardingTable { throw new Error("not implemented"); }
