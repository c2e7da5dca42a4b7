import { type ForwardingTable, type HashField } from "./types";
import { type Flow } from "./flow-hash";
export interface FlowExplanation { digest: string; row: number; primary: string; secondary: string; outerSourcePort: number }
export function explainFlow(_table: ForwardingTable, _flow: Flow, _fields?: readonly HashField[]): FlowExplanation { throw new Error("not implemented"); }
