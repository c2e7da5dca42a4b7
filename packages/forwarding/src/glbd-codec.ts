import { type ForwardingTable } from "./types";
export type GlbdErrorCode = "bad_magic";
export class GlbdFormatError extends Error { constructor(readonly code: GlbdErrorCode, message: string) { super(message); } }
export function encodeGlbd(_tables: readonly ForwardingTable[]): Uint8Array { throw new Error("not implemented"); }
export function decodeGlbd(_bytes: Uint8Array): ForwardingTable[] { throw new Error("not implemented"); }
