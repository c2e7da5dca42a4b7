import { type ProxyStatus, type Variant } from "./types";
import { type RendezvousOrder } from "./rendezvous";
export interface RowAssignment { primary: Uint16Array; secondary: Uint16Array }
export function assignRows(_order: RendezvousOrder, _states: readonly ProxyStatus[], _options?: { variant?: Variant }): RowAssignment { throw new Error("not implemented"); }
