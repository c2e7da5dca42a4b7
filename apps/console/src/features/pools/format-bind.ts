import type { Bind } from "@tide/contracts";

/** "tcp 192.0.2.10:443", "tcp 203.0.113.64/26:8000-8099", "tcp [2001:db8::10]:443". */
export function formatBind(b: Bind): string {
  const [address = b.address] = b.address.split("/");
  const v6 = address.includes(":");
  const single = b.prefixBits === (v6 ? 128 : 32);
  const host = single ? address : `${address}/${b.prefixBits}`;
  const ports = b.portStart === b.portEnd ? `${b.portStart}` : `${b.portStart}-${b.portEnd}`;
  return `${b.proto} ${v6 ? `[${host}]` : host}:${ports}`;
}
