/** explainFlow: which row and proxies a flow maps to in a table, and its outer source port. */
import { flowDigest, flowRow, formatDigest, outerSourcePort, type Flow } from "./flow-hash";
import { type ForwardingTable, type HashField } from "./types";

export interface FlowExplanation {
  /** 16 hex digits of the u64 digest. */
  digest: string;
  row: number;
  primary: string;
  secondary: string;
  /** Uses flow.srcPort, or 0 when the flow has none. */
  outerSourcePort: number;
}

/**
 * `fields` defaults to the table's own hashFields (a v3 table), then to DEFAULT_HASH_FIELDS
 * (a v2 table is hashed on the director's configured default, src_addr unless configured).
 */
export function explainFlow(
  table: ForwardingTable,
  flow: Flow,
  fields?: readonly HashField[],
): FlowExplanation {
  const digest = flowDigest(table.hashKey, flow, fields ?? table.hashFields);
  const row = flowRow(digest);
  const primary = table.backends[table.primary[row] ?? -1];
  const secondary = table.backends[table.secondary[row] ?? -1];
  if (!primary || !secondary)
    throw new RangeError(`row ${row} points outside the table's ${table.backends.length} backends`);
  return {
    digest: formatDigest(digest),
    row,
    primary: primary.address,
    secondary: secondary.address,
    outerSourcePort: outerSourcePort(digest, flow.srcPort ?? 0),
  };
}
