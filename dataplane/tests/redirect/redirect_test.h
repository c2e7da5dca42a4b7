/* SPDX-License-Identifier: MIT */
/*
 * tide-redirect tests: what redirect_test.c (main, check), packets.c (packet builders),
 * fixtures.c (BPF_PROG_TEST_RUN fixtures and cost) and e2e.c (namespaces + the daemon) share.
 */
#ifndef TIDE_REDIRECT_TEST_H
#define TIDE_REDIRECT_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tide_redirect_structs.h"

#define TC_ACT_OK 0
#define TC_ACT_SHOT 2
#define TC_ACT_REDIRECT 7

/* Fixture namespace addresses. */
#define VIP "10.201.0.10"
#define CLIENT "10.202.0.5"
#define VIP6 "fd00:201::10"
#define CLIENT6 "fd00:202::5"
#define PROXY "10.99.0.1"	/* on trv0: the outer destination */
#define PROXY_ALIAS "10.99.0.2" /* a second local address (forwarded_to_self) */
#define ALT "10.99.0.3"		/* alternate proxy with a permanent neighbour entry */
#define ALT_NO_NEIGH "10.99.0.4"
#define UNROUTABLE "198.18.0.9"
#define DIRECTOR "10.98.0.1"
#define ALT_MAC "\x02\x00\x00\x00\x00\x03"
#define GUE_PORT TIDE_REDIRECT_DEFAULT_PORT

#define F_FIN 0x01
#define F_SYN 0x02
#define F_RST 0x04
#define F_ACK 0x10

struct gue {
	const char *src, *dst; /* outer */
	uint8_t byte0_or;      /* extra bits in GUE byte 0 (version, C) */
	int hlen;	       /* -1: 1 + hop_count */
	int proto;	       /* -1: from the inner packet's version */
	uint8_t next_hop;
	uint8_t hop_count;
	const char *hops[4];
	uint16_t priv_type;
};

/* ---- redirect_test.c ---- */

/* Prints "ok: ..." or "FAIL: ..." and counts it. */
void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* system() of a formatted command; a failure is printed. Returns its status. */
int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

uint32_t ip4(const char *s);

/* ---- packets.c ---- */

uint32_t sum16(uint32_t sum, const uint8_t *p, size_t len);
uint16_t fold(uint32_t sum);
void put16(uint8_t *p, uint16_t v);
uint16_t l4_csum(int v6, const uint8_t *src, const uint8_t *dst, uint8_t proto, const uint8_t *l4,
		 size_t len);
size_t ip_packet(uint8_t *buf, int v6, const char *src, const char *dst, uint8_t proto,
		 const uint8_t *l4, size_t l4_len, int csum_off);
size_t tcp_packet(uint8_t *buf, int v6, const char *src, const char *dst, uint16_t sport,
		  uint16_t dport, uint32_t seq, uint32_t ack, uint8_t flags);
size_t gue_packet(uint8_t *buf, const struct gue *g, const uint8_t *inner, size_t inner_len);

/* ---- fixtures.c ---- */

/* Fixtures and cost in a namespace of the test's own; the caller's namespace is left. */
void fixtures(void);

/* ---- e2e.c ---- */

/* The end-to-end test against the daemon at `daemon`, from the original namespace. */
void e2e(const char *daemon);

#endif /* TIDE_REDIRECT_TEST_H */
