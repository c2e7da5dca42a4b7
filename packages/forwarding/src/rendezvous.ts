export interface RendezvousOrder { readonly seed: Uint8Array; readonly addresses: readonly string[]; readonly depth: number; readonly order: Uint8Array }
export function rowSeed(_seed: Uint8Array, _row: number): Uint8Array { throw new Error("not implemented"); }
export function rendezvousRowOrder(_seed: Uint8Array, _addresses: readonly string[], _row: number): number[] { throw new Error("not implemented"); }
export function computeRendezvousOrder(_seed: Uint8Array, _addresses: readonly string[], _options?: { depth?: number }): RendezvousOrder { throw new Error("not implemented"); }
