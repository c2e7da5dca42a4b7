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

#define TIDE_GUE_PORT 19523u
#define TIDE_ETH_HLEN 14u
#define TIDE_OUTER_IP_HLEN 20u
#define TIDE_UDP_HLEN 8u
#define TIDE_GUE_BASE_HLEN 4u
#define TIDE_GLB_PRIV_HLEN 4u
#define TIDE_OUTER_TTL 64u
/* IPv4 "don't fragment": the director never fragments; PMTU discovery works end to end. */
#define TIDE_IP_DF 0x4000u

/* Bytes added in front of the inner IP packet (the inner Ethernet header is replaced). */
static inline uint32_t tide_gue_overhead(uint8_t hop_count)
{
	return TIDE_ETH_HLEN + TIDE_OUTER_IP_HLEN + TIDE_UDP_HLEN + TIDE_GUE_BASE_HLEN +
	       TIDE_GLB_PRIV_HLEN + 4u * hop_count;
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

/* Ones' complement sum of `len` bytes (network order words), not folded. */
static inline uint64_t tide_csum_add(uint64_t sum, const uint8_t *p, uint32_t len)
{
	uint32_t w;

	while (len >= 4) {
		memcpy(&w, p, 4);
		sum += w;
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		uint16_t h;

		memcpy(&h, p, 2);
		sum += h;
		p += 2;
		len -= 2;
	}
	if (len) {
		uint8_t last[2] = {p[0], 0};
		uint16_t h;

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

/*
 * Writes the outer headers into `frame`, where the inner IP packet (inner_len bytes, family 4
 * or 6) already sits at frame + tide_gue_overhead(d->hop_count). `tos` is copied to the outer
 * header (DSCP and ECN follow the flow, RFC 6040 normal mode).
 */
static inline void tide_gue_encap(uint8_t *frame, const struct tide_encap_params *ep,
				  const struct tide_decision *d, uint8_t inner_family, uint8_t tos,
				  uint32_t inner_len)
{
	uint8_t *ip = frame + TIDE_ETH_HLEN;
	uint8_t *udp = ip + TIDE_OUTER_IP_HLEN;
	uint8_t *gue = udp + TIDE_UDP_HLEN;
	uint32_t gue_len = TIDE_GUE_BASE_HLEN + TIDE_GLB_PRIV_HLEN + 4u * d->hop_count;
	uint32_t udp_len = TIDE_UDP_HLEN + gue_len + inner_len;
	uint64_t sum;
	uint16_t csum;

	memcpy(frame, ep->gateway_mac, 6);
	memcpy(frame + 6, ep->src_mac, 6);
	tide_put_be16(frame + 12, 0x0800);

	ip[0] = 0x45;
	ip[1] = tos;
	tide_put_be16(ip + 2, (uint16_t)(TIDE_OUTER_IP_HLEN + udp_len));
	tide_put_be16(ip + 4, 0); /* id: unused with DF set (RFC 6864) */
	tide_put_be16(ip + 6, TIDE_IP_DF);
	ip[8] = TIDE_OUTER_TTL;
	ip[9] = TIDE_IPPROTO_UDP;
	ip[10] = 0;
	ip[11] = 0;
	memcpy(ip + 12, &ep->source_ip, 4);
	memcpy(ip + 16, &d->primary, 4);
	csum = tide_csum_fold(tide_csum_add(0, ip, TIDE_OUTER_IP_HLEN));
	memcpy(ip + 10, &csum, 2);

	tide_put_be16(udp, d->outer_sport);
	tide_put_be16(udp + 2, TIDE_GUE_PORT);
	tide_put_be16(udp + 4, (uint16_t)udp_len);
	udp[6] = 0;
	udp[7] = 0;

	gue[0] = (uint8_t)(1u + d->hop_count); /* version 0, C 0, hlen in 32-bit words */
	gue[1] = inner_family == 4 ? 4 : 41;
	gue[2] = 0;
	gue[3] = 0;
	gue[4] = 0; /* GLB private data type 0 */
	gue[5] = 0;
	gue[6] = 0; /* next_hop */
	gue[7] = d->hop_count;
	memcpy(gue + 8, d->hops, 4u * d->hop_count);

	/* UDP checksum: pseudo header + UDP header + GUE + inner packet. */
	{
		uint8_t pseudo[12];

		memcpy(pseudo, ip + 12, 8);
		pseudo[8] = 0;
		pseudo[9] = TIDE_IPPROTO_UDP;
		tide_put_be16(pseudo + 10, (uint16_t)udp_len);
		sum = tide_csum_add(0, pseudo, sizeof(pseudo));
	}
	sum = tide_csum_add(sum, udp, TIDE_UDP_HLEN + gue_len);
	sum = tide_csum_add(sum, gue + gue_len, inner_len);
	csum = tide_csum_fold(sum);
	if (csum == 0)
		csum = 0xffff; /* 0 means "no checksum" in UDP over IPv4 */
	memcpy(udp + 6, &csum, 2);
}

#endif /* TIDE_GUE_H */
