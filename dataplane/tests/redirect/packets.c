/* SPDX-License-Identifier: MIT */
/* tide-redirect tests: checksums and the packets the fixtures feed the program. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>

#include "redirect_test.h"

uint32_t sum16(uint32_t sum, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Transport checksum over the IPv4 or IPv6 pseudo header + `l4` (checksum field zeroed first). */
uint16_t l4_csum(int v6, const uint8_t *src, const uint8_t *dst, uint8_t proto, const uint8_t *l4,
		 size_t len)
{
	uint32_t sum = sum16(0, src, v6 ? 16 : 4);

	sum = sum16(sum, dst, v6 ? 16 : 4);
	sum += proto + (uint32_t)len;
	return fold(sum16(sum, l4, len));
}

/*
 * An inner IPv4 or IPv6 packet with `l4` (whose checksum at `csum_off`, if >= 0, is filled).
 * Returns its length.
 */
size_t ip_packet(uint8_t *buf, int v6, const char *src, const char *dst, uint8_t proto,
		 const uint8_t *l4, size_t l4_len, int csum_off)
{
	uint8_t *p;

	if (v6) {
		memset(buf, 0, 40);
		buf[0] = 0x60;
		put16(buf + 4, (uint16_t)l4_len);
		buf[6] = proto;
		buf[7] = 64;
		inet_pton(AF_INET6, src, buf + 8);
		inet_pton(AF_INET6, dst, buf + 24);
		p = buf + 40;
	} else {
		memset(buf, 0, 20);
		buf[0] = 0x45;
		put16(buf + 2, (uint16_t)(20 + l4_len));
		put16(buf + 6, 0x4000);
		buf[8] = 64;
		buf[9] = proto;
		inet_pton(AF_INET, src, buf + 12);
		inet_pton(AF_INET, dst, buf + 16);
		put16(buf + 10, fold(sum16(0, buf, 20)));
		p = buf + 20;
	}
	memcpy(p, l4, l4_len);
	if (csum_off >= 0) {
		uint16_t c;

		p[csum_off] = p[csum_off + 1] = 0;
		c = l4_csum(v6, buf + (v6 ? 8 : 12), buf + (v6 ? 24 : 16), proto, p, l4_len);
		if (proto == IPPROTO_ICMP)
			c = fold(sum16(0, p, l4_len)); /* ICMPv4 has no pseudo header */
		put16(p + csum_off, c);
	}
	return (size_t)(p - buf) + l4_len;
}

size_t tcp_packet(uint8_t *buf, int v6, const char *src, const char *dst, uint16_t sport,
		  uint16_t dport, uint32_t seq, uint32_t ack, uint8_t flags)
{
	uint8_t th[20] = {0};

	put16(th, sport);
	put16(th + 2, dport);
	th[4] = (uint8_t)(seq >> 24);
	th[5] = (uint8_t)(seq >> 16);
	th[6] = (uint8_t)(seq >> 8);
	th[7] = (uint8_t)seq;
	th[8] = (uint8_t)(ack >> 24);
	th[9] = (uint8_t)(ack >> 16);
	th[10] = (uint8_t)(ack >> 8);
	th[11] = (uint8_t)ack;
	th[12] = 5 << 4;
	th[13] = flags;
	put16(th + 14, 65535);
	return ip_packet(buf, v6, src, dst, IPPROTO_TCP, th, sizeof(th), 16);
}

/* Ethernet + IPv4 (DF, TTL 64) + UDP (checksum) + GUE + hops + inner, as the director writes it. */
size_t gue_packet(uint8_t *buf, const struct gue *g, const uint8_t *inner, size_t inner_len)
{
	uint8_t *ip = buf + 14, *udp = ip + 20, *gh = udp + 8;
	size_t gue_len = 8 + 4u * g->hop_count, udp_len = 8 + gue_len + inner_len;

	memcpy(buf, "\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02\x08\x00", 14);
	memset(ip, 0, 20);
	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)(20 + udp_len));
	put16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	inet_pton(AF_INET, g->src, ip + 12);
	inet_pton(AF_INET, g->dst, ip + 16);
	put16(ip + 10, fold(sum16(0, ip, 20)));
	put16(udp, 0x8123);
	put16(udp + 2, GUE_PORT);
	put16(udp + 4, (uint16_t)udp_len);
	put16(udp + 6, 0);
	gh[0] = (uint8_t)((g->hlen >= 0 ? g->hlen : 1 + g->hop_count) | g->byte0_or);
	gh[1] = (uint8_t)(g->proto >= 0 ? g->proto : (inner[0] >> 4 == 6 ? 41 : 4));
	gh[2] = gh[3] = 0;
	put16(gh + 4, g->priv_type);
	gh[6] = g->next_hop;
	gh[7] = g->hop_count;
	for (int i = 0; i < g->hop_count; i++)
		inet_pton(AF_INET, g->hops[i], gh + 8 + 4 * i);
	memcpy(gh + gue_len, inner, inner_len);
	put16(udp + 6, l4_csum(0, ip + 12, ip + 16, IPPROTO_UDP, udp, udp_len));
	return 14 + 20 + udp_len;
}
