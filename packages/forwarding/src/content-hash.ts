export function tableContentHash(_bytes: Uint8Array): string { throw new Error("not implemented"); }
