/**
 * @tide/forwarding: GLB-compatible forwarding tables, pure and deterministic.
 *
 * Build: parseGlbConfigJson -> buildTable (or computeRendezvousOrder + assignRows to reuse
 * the state-independent order) -> encodeGlbd. Inspect: decodeGlbd, diffTables, explainFlow.
 */
export * from "./types";
export * from "./address";
export * from "./siphash";
export * from "./rendezvous";
export * from "./assign";
export * from "./build";
export * from "./flow-hash";
export * from "./glbd-codec";
export * from "./glb-json";
export * from "./diff";
export * from "./explain";
export * from "./content-hash";
