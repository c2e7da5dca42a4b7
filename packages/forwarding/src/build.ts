/**
 * buildTable: a TableSpec -> a ForwardingTable (rendezvous order + row assignment).
 * For repeated builds of the same proxy list with changing states, keep the order from
 * computeRendezvousOrder() and call assignRows() / tableFromOrder() instead.
 */
import { canonicalAddress } from "./address";
import { assignRows, type AssignOptions } from "./assign";
import { computeRendezvousOrder, type RendezvousOptions, type RendezvousOrder } from "./rendezvous";
import { MAX_BACKENDS, MAX_BINDS, type ForwardingTable, type TableSpec } from "./types";

export interface BuildOptions extends AssignOptions, RendezvousOptions {}

/** Checks the limits the GLBD v2 file imposes, so a built table can always be encoded. */
function checkSpec(spec: TableSpec): void {
  if (spec.hashKey.length !== 16)
    throw new RangeError(`hashKey must be 16 bytes, got ${spec.hashKey.length}`);
  if (spec.seed.length !== 16) throw new RangeError(`seed must be 16 bytes, got ${spec.seed.length}`);
  if (spec.backends.length > MAX_BACKENDS) {
    throw new RangeError(`at most ${MAX_BACKENDS} backends per table, got ${spec.backends.length}`);
  }
  if (spec.binds.length > MAX_BINDS)
    throw new RangeError(`at most ${MAX_BINDS} binds per table, got ${spec.binds.length}`);
}

/** Assembles a table from a precomputed order (which must be for spec's backend addresses). */
export function tableFromOrder(
  spec: TableSpec,
  order: RendezvousOrder,
  options: AssignOptions = {},
): ForwardingTable {
  checkSpec(spec);
  const { primary, secondary } = assignRows(order, spec.backends, options);
  return {
    hashKey: Uint8Array.from(spec.hashKey),
    binds: spec.binds.map((b) => ({ ...b })),
    backends: spec.backends.map((b) => ({
      address: canonicalAddress(b.address),
      state: b.state,
      healthy: b.healthy,
    })),
    primary,
    secondary,
  };
}

export function buildTable(spec: TableSpec, options: BuildOptions = {}): ForwardingTable {
  checkSpec(spec);
  const order = computeRendezvousOrder(
    spec.seed,
    spec.backends.map((b) => b.address),
    options,
  );
  return tableFromOrder(spec, order, options);
}
