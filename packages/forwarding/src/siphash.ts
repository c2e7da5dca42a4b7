export interface SipKey { readonly k0lo: number; readonly k0hi: number; readonly k1lo: number; readonly k1hi: number }
export function sipKey(_key: Uint8Array): SipKey { throw new Error("not implemented"); }
export function siphash24Words(_key: SipKey, _msg: Uint8Array, _length: number, _out: Uint32Array): void { throw new Error("not implemented"); }
export function siphash24(_key: Uint8Array, _msg: Uint8Array): bigint { throw new Error("not implemented"); }
export function siphash24Bytes(_key: Uint8Array, _msg: Uint8Array): Uint8Array { throw new Error("not implemented"); }
