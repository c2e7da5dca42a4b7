import type { ListenPortCount, ListeningSocket } from "@tide/contracts";

/** The contract carries at most this many listeners per namespace (listenPorts stays complete). */
export const MAX_LISTENERS = 4096;

/**
 * Parse `ss -ltnH` output: "LISTEN 0 4096 127.0.0.1:8080 0.0.0.0:*" (state, Recv-Q, Send-Q, local,
 * peer). The local address may be `*:80`, `[::]:80`, `[::1]:80`, `0.0.0.0%lo:53` or `[fe80::1]%eth0:22`.
 */
export function parseSsListeners(text: string): ListeningSocket[] {
  const out: ListeningSocket[] = [];
  for (const line of text.split("\n")) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 4) continue;
    // -H drops the header; the state column is present with -l (LISTEN, or UNCONN for udp).
    const offset = /^\d+$/.test(cols[0]!) ? 0 : 1;
    const recvQ = cols[offset];
    const sendQ = cols[offset + 1];
    const local = cols[offset + 2];
    if (recvQ === undefined || sendQ === undefined || local === undefined) continue;
    if (!/^\d+$/.test(recvQ) || !/^\d+$/.test(sendQ)) continue;
    const colon = local.lastIndexOf(":");
    if (colon <= 0) continue;
    const portText = local.slice(colon + 1);
    if (!/^\d+$/.test(portText)) continue;
    const port = Number(portText);
    if (port > 65535) continue;
    let address = local.slice(0, colon);
    const pct = address.indexOf("%");
    if (pct > 0 && !address.startsWith("[")) address = address.slice(0, pct);
    address = address.replace(/^\[(.*)\](?:%.*)?$/, "$1");
    if (address === "") continue;
    out.push({
      address: address.slice(0, 64),
      port,
      recvQ: Number(recvQ),
      sendQ: Number(sendQ),
      requestedBacklog: null,
    });
  }
  return out;
}

/** LISTEN socket count per port, sorted by port. */
export function listenPortCounts(listeners: readonly ListeningSocket[]): ListenPortCount[] {
  const counts = new Map<number, number>();
  for (const l of listeners) counts.set(l.port, (counts.get(l.port) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => a[0] - b[0]).map(([port, sockets]) => ({ port, sockets }));
}
