/* SPDX-License-Identifier: MIT */
/*
 * tide-redirect constants: wire format of GUE as tide-director writes it (see common/tide_gue.h)
 * and the limits of the proxy-side program. Limits are defines so a build can override them
 * (-DTIDE_REDIRECT_MAX_LOCAL=32); the config struct in tide_redirect_structs.h follows them.
 */
#ifndef TIDE_REDIRECT_CONSTS_H
#define TIDE_REDIRECT_CONSTS_H

/* GUE's port and header sizes are declared once, for every packet path. */
#include "../common/tide_gue_wire.h"

/* UDP destination port of GUE packets unless configured otherwise (glb-director's default). */
#ifndef TIDE_REDIRECT_DEFAULT_PORT
#define TIDE_REDIRECT_DEFAULT_PORT ((int)TIDE_GUE_PORT)
#endif

/* Local IPv4 addresses the program recognises as "this host" (outer destination, hops). */
#ifndef TIDE_REDIRECT_MAX_LOCAL
#define TIDE_REDIRECT_MAX_LOCAL 16
#endif

/*
 * Most hops a GUE header can carry: hlen is a 5-bit count of 32-bit words (max 31) and one word
 * is the GLB private header, so 30. Bounds the hop index in the program.
 */
#define TIDE_REDIRECT_MAX_HOPS 30

/*
 * VIPs (inner destination address, port, protocol) counted one by one in the VIP map; beyond
 * this the least recently used one is evicted (its counters restart from 0 if it comes back,
 * which a reader sees as a counter reset). A proxy serves a handful of VIPs; 1024 entries of 20
 * bytes of key and 48 bytes per CPU are about 1.6 MB on 32 CPUs.
 */
#ifndef TIDE_REDIRECT_MAX_VIPS
#define TIDE_REDIRECT_MAX_VIPS 1024
#endif

/*
 * Flows (inner TCP 5-tuples) remembered for the change report: only those with a packet that
 * took a second chance, the alternate hash or a last resort; beyond this the least recently
 * updated one is evicted. Sized for a table change on a busy proxy: the report wants every
 * connection that moved, and 8192 entries of 38 bytes of key and 56 of value are about 1.2 MB
 * with the LRU's own bookkeeping. Mirrors REDIRECT_MAX_FLOWS (packages/contracts).
 */
#ifndef TIDE_REDIRECT_MAX_FLOWS
#define TIDE_REDIRECT_MAX_FLOWS 8192
#endif

/*
 * The director's hop list during a hash-field migration (alt_hash_fields): [secondary,
 * alt_primary, alt_secondary], so hop_count 3, and a packet that arrives with next_hop >= 2 was
 * sent on to the row of the old hash fields. See tide_fwd_fill in common/tide_forward.h.
 */
#define TR_ALT_HASH_HOP_COUNT 3
#define TR_ALT_HASH_FIRST_HOP 2

/*
 * Header lengths, bytes (signed: the program does signed offset arithmetic with them). The GUE
 * ones come from common/tide_gue_wire.h; the outer IPv4 header carries no options.
 */
#define TR_ETH_HLEN ((int)TIDE_ETH_HLEN)
#define TR_IPV4_HLEN ((int)TIDE_OUTER_IP_HLEN)
#define TR_IPV6_HLEN 40
#define TR_UDP_HLEN ((int)TIDE_UDP_HLEN)
#define TR_GUE_BASE_HLEN ((int)TIDE_GUE_BASE_HLEN)
#define TR_GLB_PRIV_HLEN ((int)TIDE_GLB_PRIV_HLEN)
#define TR_TCP_HLEN 20
/* TCP header with options, bytes: bpf_tcp_check_syncookie wants the length doff * 4. */
#define TR_TCP_MAX_HLEN 60
#define TR_ICMP_HLEN 8
/* Ethernet + outer IPv4 + UDP + GUE base + GLB private: where the hop list starts. */
#define TR_HOPS_OFF (TR_ETH_HLEN + TR_IPV4_HLEN + TR_UDP_HLEN + TR_GUE_BASE_HLEN + TR_GLB_PRIV_HLEN)
#define TR_UDP_OFF (TR_ETH_HLEN + TR_IPV4_HLEN)
#define TR_GUE_OFF (TR_UDP_OFF + TR_UDP_HLEN)

/* GUE base header byte 0: version (2 bits), C (1 bit), hlen (5 bits, 32-bit words). */
#define TR_GUE_VERSION_SHIFT 6
#define TR_GUE_C_BIT 0x20
#define TR_GUE_HLEN_MASK 0x1f
/* GUE proto field: IP protocol number of the inner packet. */
#define TR_GUE_PROTO_IPV4 ((int)TIDE_GUE_PROTO_IPV4)
#define TR_GUE_PROTO_IPV6 ((int)TIDE_GUE_PROTO_IPV6)

#define TR_ICMP_DEST_UNREACH 3
#define TR_ICMP_FRAG_NEEDED 4
#define TR_ICMPV6_PACKET_TOO_BIG 2

/* TCP flag bits in byte 13 of the TCP header. */
#define TR_TCP_FIN 0x01
#define TR_TCP_SYN 0x02
#define TR_TCP_RST 0x04
#define TR_TCP_ACK 0x10

/* IPv4 fragment offset + MF bits of frag_off (host order). */
#define TR_IP_FRAG_MASK 0x3fff

/*
 * The daemon's TC filter: fixed handle and priority on the clsact ingress hook, so a second
 * daemon finds the first one (bpf_tc_query) and refuses to start instead of stacking.
 */
#define TIDE_REDIRECT_TC_HANDLE 0x7ede
#define TIDE_REDIRECT_TC_PRIORITY 1

/* BPF program name (16 bytes max in the kernel), how a running instance is recognised. */
#define TIDE_REDIRECT_PROG_NAME "tide_redirect"

#endif /* TIDE_REDIRECT_CONSTS_H */
