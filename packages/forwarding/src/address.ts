export type AddressFamily = "ipv4" | "ipv6";
export interface ParsedAddress { family: AddressFamily; bytes: Uint8Array }
export class AddressError extends Error {}
export function parseAddress(_text: string): ParsedAddress { throw new Error("not implemented"); }
export function formatAddress(_bytes: Uint8Array): string { throw new Error("not implemented"); }
export function canonicalAddress(_text: string): string { throw new Error("not implemented"); }
export function parseCidr(_text: string): { address: ParsedAddress; prefixBits: number } { throw new Error("not implemented"); }
export function parseEndpoint(_text: string): { address: string; port?: number } { throw new Error("not implemented"); }
