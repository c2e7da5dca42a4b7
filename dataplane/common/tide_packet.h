/* SPDX-License-Identifier: MIT */
/*
 * Packet parsing for the director: from an L3 packet to the flow that picks a forwarding row.
 *
 * What is hashed is always the client's view of the flow (client -> VIP):
 *   - TCP/UDP to a VIP: the packet's own addresses and ports;
 *   - ICMPv4 frag-needed / ICMPv6 packet-too-big: the embedded header (a packet the proxy sent,
 *     VIP -> client) with addresses and ports reversed, so it reaches the proxy owning the flow;
 *   - ICMP echo request to a VIP: the packet's addresses with ports 0.
 * Everything else is refused with a verdict saying why; nothing here reads past `len`.
 */
#ifndef TIDE_PACKET_H
#define TIDE_PACKET_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TIDE_ETHERTYPE_IPV4 0x0800u
#define TIDE_ETHERTYPE_IPV6 0x86ddu
#define TIDE_IPPROTO_ICMP 1u
#define TIDE_IPPROTO_TCP 6u
#define TIDE_IPPROTO_UDP 17u
#define TIDE_IPPROTO_ICMPV6 58u

#define TIDE_ICMP_DEST_UNREACH 3u
#define TIDE_ICMP_FRAG_NEEDED 4u
#define TIDE_ICMP_ECHO_REQUEST 8u
#define TIDE_ICMPV6_PACKET_TOO_BIG 2u
#define TIDE_ICMPV6_ECHO_REQUEST 128u

/* What the director does with a packet; every non-forward verdict is a drop counter. */
enum tide_verdict {
	TIDE_FORWARD = 0,
	TIDE_DROP_NO_BIND,     /* no pool binds the destination address/protocol/port */
	TIDE_DROP_MALFORMED,   /* header fields that cannot be valid (version, lengths) */
	TIDE_DROP_TRUNCATED,   /* shorter than the headers it announces */
	TIDE_DROP_TOO_BIG,     /* would exceed the MTU after encapsulation (never fragmented) */
	TIDE_DROP_UNSUPPORTED, /* not IP, fragments, IPv6 extension headers, other ICMP, ... */
	TIDE_DROP_NO_TABLE,    /* no table loaded yet */
	TIDE_VERDICT_COUNT
};

static inline const char *tide_verdict_name(enum tide_verdict v)
{
	static const char *const names[TIDE_VERDICT_COUNT] = {"forward",   "no_bind", "malformed",
							      "truncated", "too_big", "unsupported",
							      "no_table"};
	return (unsigned int)v < TIDE_VERDICT_COUNT ? names[v] : "unknown";
}

enum tide_flow_kind {
	TIDE_FLOW_DIRECT = 0, /* TCP or UDP to a VIP */
	TIDE_FLOW_ICMP_PMTU,  /* frag-needed / packet-too-big about a flow of a VIP */
	TIDE_FLOW_ICMP_ECHO,  /* echo request to a VIP */
};

/* A flow as the client sees it. Addresses in network order (4 or 16 bytes used). */
struct tide_flow {
	uint8_t family;	   /* 4 or 6 */
	uint8_t proto;	   /* 6 or 17 for DIRECT/PMTU; 1 or 58 for ECHO */
	uint8_t kind;	   /* enum tide_flow_kind */
	uint8_t tos;	   /* outer packet's TOS / traffic class, copied to the GUE outer header */
	uint16_t src_port; /* host order; 0 for echo */
	uint16_t dst_port;
	uint8_t src[16]; /* client */
	uint8_t dst[16]; /* VIP */
	uint32_t l3_len; /* bytes of the packet that are encapsulated (IP total length) */
};

static inline uint16_t tide_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Ports of a TCP or UDP header at `l4` with `avail` bytes; checks the header is whole. */
static inline enum tide_verdict tide_parse_l4(uint8_t proto, const uint8_t *l4, uint32_t avail,
					      uint16_t *sport, uint16_t *dport)
{
	if (proto == TIDE_IPPROTO_TCP) {
		unsigned int doff;

		if (avail < 20)
			return TIDE_DROP_TRUNCATED;
		doff = (unsigned int)(l4[12] >> 4) * 4;
		if (doff < 20)
			return TIDE_DROP_MALFORMED;
		if (doff > avail)
			return TIDE_DROP_TRUNCATED;
	} else if (proto == TIDE_IPPROTO_UDP) {
		if (avail < 8)
			return TIDE_DROP_TRUNCATED;
		if (tide_be16(l4 + 4) < 8)
			return TIDE_DROP_MALFORMED;
	} else {
		return TIDE_DROP_UNSUPPORTED;
	}
	*sport = tide_be16(l4);
	*dport = tide_be16(l4 + 2);
	return TIDE_FORWARD;
}

/*
 * The embedded header of an ICMP error: a packet the proxy sent (VIP:vport -> client:cport).
 * Only its first 8 L4 bytes are guaranteed (RFC 792), so only the ports are read.
 */
static inline enum tide_verdict tide_parse_embedded_v4(const uint8_t *p, uint32_t avail,
						       struct tide_flow *f)
{
	unsigned int ihl;
	uint8_t proto;

	if (avail < 20)
		return TIDE_DROP_TRUNCATED;
	if (p[0] >> 4 != 4)
		return TIDE_DROP_MALFORMED;
	ihl = (unsigned int)(p[0] & 0xf) * 4;
	if (ihl < 20)
		return TIDE_DROP_MALFORMED;
	if (avail < ihl + 8)
		return TIDE_DROP_TRUNCATED;
	proto = p[9];
	if (proto != TIDE_IPPROTO_TCP && proto != TIDE_IPPROTO_UDP)
		return TIDE_DROP_UNSUPPORTED;
	if ((tide_be16(p + 6) & 0x1fff) != 0)
		return TIDE_DROP_UNSUPPORTED; /* a later fragment carries no ports */
	f->proto = proto;
	memcpy(f->src, p + 16, 4); /* reversed: the embedded destination is the client */
	memcpy(f->dst, p + 12, 4);
	f->src_port = tide_be16(p + ihl + 2);
	f->dst_port = tide_be16(p + ihl);
	return TIDE_FORWARD;
}

static inline enum tide_verdict tide_parse_embedded_v6(const uint8_t *p, uint32_t avail,
						       struct tide_flow *f)
{
	uint8_t nh;

	if (avail < 40 + 8)
		return TIDE_DROP_TRUNCATED;
	if (p[0] >> 4 != 6)
		return TIDE_DROP_MALFORMED;
	nh = p[6];
	if (nh != TIDE_IPPROTO_TCP && nh != TIDE_IPPROTO_UDP)
		return TIDE_DROP_UNSUPPORTED;
	f->proto = nh;
	memcpy(f->src, p + 24, 16);
	memcpy(f->dst, p + 8, 16);
	f->src_port = tide_be16(p + 40 + 2);
	f->dst_port = tide_be16(p + 40);
	return TIDE_FORWARD;
}

static inline enum tide_verdict tide_parse_ipv4(const uint8_t *p, uint32_t len, struct tide_flow *f)
{
	unsigned int ihl, tot;
	const uint8_t *l4;
	uint32_t avail;

	if (len < 20)
		return TIDE_DROP_TRUNCATED;
	if (p[0] >> 4 != 4)
		return TIDE_DROP_MALFORMED;
	ihl = (unsigned int)(p[0] & 0xf) * 4;
	tot = tide_be16(p + 2);
	if (ihl < 20 || tot < ihl)
		return TIDE_DROP_MALFORMED;
	if (tot > len)
		return TIDE_DROP_TRUNCATED;
	if ((tide_be16(p + 6) & 0x3fff) != 0)
		return TIDE_DROP_UNSUPPORTED; /* fragments: only the first has ports */
	f->family = 4;
	f->tos = p[1];
	f->l3_len = tot;
	l4 = p + ihl;
	avail = tot - ihl;
	if (p[9] == TIDE_IPPROTO_ICMP) {
		if (avail < 8)
			return TIDE_DROP_TRUNCATED;
		if (l4[0] == TIDE_ICMP_DEST_UNREACH && l4[1] == TIDE_ICMP_FRAG_NEEDED) {
			f->kind = TIDE_FLOW_ICMP_PMTU;
			return tide_parse_embedded_v4(l4 + 8, avail - 8, f);
		}
		if (l4[0] == TIDE_ICMP_ECHO_REQUEST && l4[1] == 0) {
			f->kind = TIDE_FLOW_ICMP_ECHO;
			f->proto = TIDE_IPPROTO_ICMP;
			memcpy(f->src, p + 12, 4);
			memcpy(f->dst, p + 16, 4);
			f->src_port = 0;
			f->dst_port = 0;
			return TIDE_FORWARD;
		}
		return TIDE_DROP_UNSUPPORTED;
	}
	f->kind = TIDE_FLOW_DIRECT;
	f->proto = p[9];
	memcpy(f->src, p + 12, 4);
	memcpy(f->dst, p + 16, 4);
	return tide_parse_l4(p[9], l4, avail, &f->src_port, &f->dst_port);
}

static inline enum tide_verdict tide_parse_ipv6(const uint8_t *p, uint32_t len, struct tide_flow *f)
{
	uint32_t plen;
	const uint8_t *l4 = p + 40;

	if (len < 40)
		return TIDE_DROP_TRUNCATED;
	if (p[0] >> 4 != 6)
		return TIDE_DROP_MALFORMED;
	plen = tide_be16(p + 4);
	if (plen + 40 > len)
		return TIDE_DROP_TRUNCATED;
	f->family = 6;
	f->tos = (uint8_t)((p[0] & 0xf) << 4 | p[1] >> 4);
	f->l3_len = plen + 40;
	if (p[6] == TIDE_IPPROTO_ICMPV6) {
		if (plen < 8)
			return TIDE_DROP_TRUNCATED;
		if (l4[0] == TIDE_ICMPV6_PACKET_TOO_BIG && l4[1] == 0) {
			f->kind = TIDE_FLOW_ICMP_PMTU;
			return tide_parse_embedded_v6(l4 + 8, plen - 8, f);
		}
		if (l4[0] == TIDE_ICMPV6_ECHO_REQUEST && l4[1] == 0) {
			f->kind = TIDE_FLOW_ICMP_ECHO;
			f->proto = TIDE_IPPROTO_ICMPV6;
			memcpy(f->src, p + 8, 16);
			memcpy(f->dst, p + 24, 16);
			f->src_port = 0;
			f->dst_port = 0;
			return TIDE_FORWARD;
		}
		return TIDE_DROP_UNSUPPORTED;
	}
	f->kind = TIDE_FLOW_DIRECT;
	f->proto = p[6];
	memcpy(f->src, p + 8, 16);
	memcpy(f->dst, p + 24, 16);
	/* Extension headers (including fragments) are not walked: the director refuses them. */
	return tide_parse_l4(p[6], l4, plen, &f->src_port, &f->dst_port);
}

/* Parses the L3 packet after an Ethernet header of type `ethertype` (host order). */
static inline enum tide_verdict tide_parse(uint16_t ethertype, const uint8_t *l3, uint32_t len,
					   struct tide_flow *f)
{
	if (ethertype == TIDE_ETHERTYPE_IPV4)
		return tide_parse_ipv4(l3, len, f);
	if (ethertype == TIDE_ETHERTYPE_IPV6)
		return tide_parse_ipv6(l3, len, f);
	return TIDE_DROP_UNSUPPORTED;
}

#endif /* TIDE_PACKET_H */
