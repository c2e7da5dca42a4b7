/**
 * GUE on the wire, as glb-director writes it (and tide-director, tide-redirect and
 * tide-healthcheck read it): its UDP port, header sizes and inner protocol numbers. The C side declares them once in
 * dataplane/common/tide_gue_wire.h; gue-wire.test.ts reads that header and checks these agree.
 */

/** UDP destination port of GUE packets (glb-director's). */
export const GUE_PORT = 19523;

/** Header lengths, bytes. The outer IPv4 header carries no options (the director writes none). */
export const GUE_HEADER_BYTES = {
  ethernet: 14,
  outerIpv4: 20,
  udp: 8,
  gueBase: 4,
  glbPrivate: 4,
  /** One hop of the GLB private data: an IPv4 address. */
  hop: 4,
} as const;

/** The GUE base header's proto field: the IP protocol number of the inner packet. */
export const GUE_INNER_PROTO = { ipv4: 4, ipv6: 41 } as const;

/**
 * Bytes GUE adds to an inner IP packet, counted in IP bytes (outer IPv4 + UDP + GUE base + GLB
 * private data + the hops): what a link's MTU must leave room for. One hop: 40.
 */
export function gueIpOverhead(hops: number): number {
  const b = GUE_HEADER_BYTES;
  return b.outerIpv4 + b.udp + b.gueBase + b.glbPrivate + b.hop * hops;
}
