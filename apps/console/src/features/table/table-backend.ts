import type { ProxyState } from "@tide/contracts";

/** A backend of a table version (what a row's slot points at). */
export interface TableBackend {
  slot: number;
  proxyId: string;
  address: string;
  hostname: string;
  state: ProxyState;
  healthy: boolean;
}

/** Backends indexed by slot (rows store slots). */
export function bySlot(backends: readonly TableBackend[]): (TableBackend | undefined)[] {
  const out: (TableBackend | undefined)[] = [];
  for (const b of backends) out[b.slot] = b;
  return out;
}
