/* SPDX-License-Identifier: MIT */
/*
 * GUE encapsulation as glb-director writes it (UDP port 19523):
 *   Ethernet (dst = gateway MAC) -> IPv4 (dst = primary, DF, TTL 64) -> UDP (sport from the flow
 *   hash, dport 19523, checksum) -> GUE base header (version 0, C 0, hlen = 1 + hop_count words,
 *   proto 4 or 41, flags 0) -> GLB private data (type u16 0, next_hop u8 0, hop_count u8)
 *   -> hop_count IPv4 addresses -> the inner IP packet, unchanged.
 */
#ifndef TIDE_GUE_H
#define TIDE_GUE_H

#include <stdint.h>
#include <string.h>

#include "tide_forward.h"
#include "tide_gue_wire.h"

#define TIDE_OUTER_TTL 64u
/* IPv4 "don't fragment": the director never fragments; PMTU discovery works end to end. */
#define TIDE_IP_DF 0x4000u

/* Bytes added in front of the inner IP packet (the inner Ethernet header is replaced). */
static inline uint32_t tide_gue_overhead(uint8_t hop_count)
{
	return TIDE_ETH_HLEN + TIDE_OUTER_IP_HLEN + TIDE_UDP_HLEN + TIDE_GUE_BASE_HLEN +
	       TIDE_GLB_PRIV_HLEN + TIDE_GLB_HOP_LEN * hop_count;
}

/* Outer IP total length for an inner packet of `inner_len` bytes. */
static inline uint32_t tide_gue_outer_ip_len(uint8_t hop_count, uint32_t inner_len)
{
	return tide_gue_overhead(hop_count) - TIDE_ETH_HLEN + inner_len;
}

/* Where encapsulated packets go: the next router, from the director's own address. */
struct tide_encap_params {
	uint8_t src_mac[6];
	uint8_t gateway_mac[6];
	uint32_t source_ip; /* network order */
};

/*
 * Ones' complement sum of `len` bytes (network order words) added to `sum`, not folded:
 * 8-byte loads split into 32-bit halves (no carries lost in 64 bits for any packet size),
 * then the last 0..7 bytes with fixed-size loads (a variable-size memcpy is a libc call).
 */
static inline uint64_t tide_csum_add(uint64_t sum, const uint8_t *p, uint32_t len)
{
	uint64_t w;
	uint32_t v;
	uint16_t h;

	while (len >= 8) {
		memcpy(&w, p, 8);
		sum += (w & 0xffffffffULL) + (w >> 32);
		p += 8;
		len -= 8;
	}
	if (len & 4) {
		memcpy(&v, p, 4);
		sum += v;
		p += 4;
	}
	if (len & 2) {
		memcpy(&h, p, 2);
		sum += h;
		p += 2;
	}
	if (len & 1) {
		uint8_t last[2] = {p[0], 0};

		memcpy(&h, last, 2);
		sum += h;
	}
	return sum;
}

/* Folds a sum made of native-endian loads of network-order words into a checksum field value. */
static inline uint16_t tide_csum_fold(uint64_t sum)
{
	sum = (sum & 0xffffffffULL) + (sum >> 32);
	sum = (sum & 0xffffffffULL) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static inline void tide_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Folds a 32/64-bit sum of host-order 16-bit words to 16 bits (not complemented). */
static inline uint32_t tide_csum_fold_host(uint64_t sum)
{
	sum = (sum & 0xffffffffULL) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint32_t)sum;
}

/* Sum of an IPv4 address (network order in memory) as two host-order 16-bit words. */
static inline uint32_t tide_csum_addr(uint32_t addr_be)
{
	uint32_t h = __builtin_bswap32(addr_be);

	return (h >> 16) + (h & 0xffff);
}

/*
 * Writes the outer headers into `frame`, where the inner IP packet (inner_len bytes, family 4
 * or 6) already sits at frame + tide_gue_overhead(d->hop_count). `tos` is copied to the outer
 * header (DSCP and ECN follow the flow, RFC 6040 normal mode).
 *
 * Both checksums are computed from the header field values (host-order 16-bit words) rather
 * than by re-reading the written headers; only the inner packet is summed from memory.
 */
static inline void tide_gue_encap(uint8_t *frame, const struct tide_encap_params *ep,
				  const struct tide_decision *d, uint8_t inner_family, uint8_t tos,
				  uint32_t inner_len)
{
	uint8_t *ip = frame + TIDE_ETH_HLEN;
	uint8_t *udp = ip + TIDE_OUTER_IP_HLEN;
	uint8_t *gue = udp + TIDE_UDP_HLEN;
	const uint32_t gue_len = TIDE_GUE_BASE_HLEN + TIDE_GLB_PRIV_HLEN + 4u * d->hop_count;
	const uint32_t udp_len = TIDE_UDP_HLEN + gue_len + inner_len;
	const uint32_t ip_len = TIDE_OUTER_IP_HLEN + udp_len;
	const uint8_t gue_proto = inner_family == 4 ? TIDE_GUE_PROTO_IPV4 : TIDE_GUE_PROTO_IPV6;
	const uint32_t addrs = tide_csum_addr(ep->source_ip) + tide_csum_addr(d->primary);
	uint64_t sum;
	uint32_t inner;
	uint16_t csum;

	memcpy(frame, ep->gateway_mac, 6);
	memcpy(frame + 6, ep->src_mac, 6);
	tide_put_be16(frame + 12, 0x0800);

	ip[0] = 0x45;
	ip[1] = tos;
	tide_put_be16(ip + 2, (uint16_t)ip_len);
	tide_put_be16(ip + 4, 0); /* id: unused with DF set (RFC 6864) */
	tide_put_be16(ip + 6, TIDE_IP_DF);
	ip[8] = TIDE_OUTER_TTL;
	ip[9] = TIDE_IPPROTO_UDP;
	memcpy(ip + 12, &ep->source_ip, 4);
	memcpy(ip + 16, &d->primary, 4);
	sum = (0x4500u | tos) + ip_len + TIDE_IP_DF + (TIDE_OUTER_TTL << 8 | TIDE_IPPROTO_UDP) +
	      addrs;
	tide_put_be16(ip + 10, (uint16_t)~tide_csum_fold_host(sum));

	tide_put_be16(udp, d->outer_sport);
	tide_put_be16(udp + 2, TIDE_GUE_PORT);
	tide_put_be16(udp + 4, (uint16_t)udp_len);

	gue[0] = (uint8_t)(1u + d->hop_count); /* version 0, C 0, hlen in 32-bit words */
	gue[1] = gue_proto;
	gue[2] = 0; /* flags */
	gue[3] = 0;
	gue[4] = 0; /* GLB private data type 0 */
	gue[5] = 0;
	gue[6] = 0; /* next_hop */
	gue[7] = d->hop_count;
	for (uint8_t h = 0; h < d->hop_count; h++)
		memcpy(gue + 8 + 4 * h, &d->hops[h], 4); /* fixed size: no libc call */

	/*
	 * UDP checksum: pseudo header (addresses, protocol, length) + UDP header (ports, length)
	 * + GUE and GLB words + hops + the inner packet. The inner packet starts at an even offset,
	 * so its native-order sum, folded and byte-swapped, is its host-order word sum.
	 */
	sum = addrs + TIDE_IPPROTO_UDP + udp_len * 2u + d->outer_sport + TIDE_GUE_PORT +
	      ((uint32_t)(1u + d->hop_count) << 8 | gue_proto) + d->hop_count;
	for (uint8_t h = 0; h < d->hop_count; h++)
		sum += tide_csum_addr(d->hops[h]);
	inner = tide_csum_fold_host(tide_csum_add(0, gue + gue_len, inner_len));
	sum += (uint16_t)(inner << 8 | inner >> 8);
	csum = (uint16_t)~tide_csum_fold_host(sum);
	if (csum == 0)
		csum = 0xffff; /* 0 means "no checksum" in UDP over IPv4 */
	tide_put_be16(udp + 6, csum);
}

#endif /* TIDE_GUE_H */
