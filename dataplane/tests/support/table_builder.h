/* SPDX-License-Identifier: MIT */
/*
 * A reference GLBD writer with rendezvous rows, for tests, fuzz seeds and benchmarks only.
 * Production tables come from packages/forwarding (the console); this one builds the same rows
 * when every proxy is active and healthy, which the vector tests check.
 */
#ifndef TIDE_TEST_TABLE_BUILDER_H
#define TIDE_TEST_TABLE_BUILDER_H

#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tide_glbd.h"
#include "tide_siphash.h"

struct tb_bind {
	const char *addr; /* IPv4 or IPv6 text */
	uint16_t prefix_bits;
	uint8_t proto;
	uint16_t port_start;
	uint16_t port_end;
};

struct tb_table {
	uint8_t hash_key[16];
	uint8_t seed[16];
	uint32_t num_proxies;
	uint32_t proxies[TIDE_MAX_BACKENDS]; /* IPv4, network order, all active + healthy */
	uint32_t num_binds;
	struct tb_bind binds[16];
	uint8_t hash_fields; /* v3 trailer (tb_write_file_v3): written as given, even if invalid */
	uint8_t alt_hash_fields;
};

static inline void tb_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline void tb_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void tb_put64le(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* row_seed = siphash(seed, u32be(row)), as its 8 output bytes. */
static inline void tb_row_seed(struct tide_sipkey key, uint32_t row, uint8_t out[8])
{
	uint8_t be[4] = {(uint8_t)(row >> 24), (uint8_t)(row >> 16), (uint8_t)(row >> 8),
			 (uint8_t)row};

	tb_put64le(out, tide_siphash24(key, be, 4));
}

/* score = siphash(seed, row_seed || ip) output bytes read big-endian. */
static inline uint64_t tb_score(struct tide_sipkey key, const uint8_t row_seed[8], uint32_t ip)
{
	uint8_t msg[12];

	memcpy(msg, row_seed, 8);
	memcpy(msg + 8, &ip, 4);
	return __builtin_bswap64(tide_siphash24(key, msg, 12));
}

/* The two lowest-score proxies of a row (indexes), ties to the lower index. */
static inline void tb_row(const struct tb_table *t, struct tide_sipkey key, uint32_t row,
			  uint32_t *primary, uint32_t *secondary)
{
	uint8_t rs[8];
	uint64_t best = UINT64_MAX, second = UINT64_MAX;
	uint32_t bi = 0, si = 0;

	tb_row_seed(key, row, rs);
	for (uint32_t i = 0; i < t->num_proxies; i++) {
		uint64_t s = tb_score(key, rs, t->proxies[i]);

		if (s < best) {
			second = best;
			si = bi;
			best = s;
			bi = i;
		} else if (s < second) {
			second = s;
			si = i;
		}
	}
	*primary = bi;
	*secondary = t->num_proxies > 1 ? si : bi;
}

/* Writes one table at `out` (TIDE_GLBD_TABLE_SIZE bytes, zeroed by the caller). */
static inline int tb_write_table(const struct tb_table *t, uint8_t *out)
{
	struct tide_sipkey key = tide_sipkey_from_bytes(t->seed);

	tb_put32(out, t->num_proxies);
	for (uint32_t i = 0; i < t->num_proxies; i++) {
		uint8_t *b = out + TIDE_GLBD_BACKENDS_OFF + i * TIDE_GLBD_BACKEND_SIZE;

		tb_put32(b, TIDE_FAMILY_IPV4);
		memcpy(b + 4, &t->proxies[i], 4);
		tb_put16(b + 20, TIDE_STATE_ACTIVE);
		tb_put16(b + 22, 1);
	}
	tb_put32(out + TIDE_GLBD_NUM_BINDS_OFF, t->num_binds);
	for (uint32_t i = 0; i < t->num_binds; i++) {
		uint8_t *b = out + TIDE_GLBD_BINDS_OFF + i * TIDE_GLBD_BIND_SIZE;
		const struct tb_bind *bd = &t->binds[i];

		if (inet_pton(AF_INET, bd->addr, b + 4) == 1) {
			tb_put32(b, TIDE_FAMILY_IPV4);
		} else if (inet_pton(AF_INET6, bd->addr, b + 4) == 1) {
			tb_put32(b, TIDE_FAMILY_IPV6);
		} else {
			return -EINVAL;
		}
		tb_put16(b + 20, bd->prefix_bits);
		tb_put16(b + 22, bd->port_start);
		tb_put16(b + 24, bd->port_end);
		b[26] = bd->proto;
	}
	memcpy(out + TIDE_GLBD_HASH_KEY_OFF, t->hash_key, 16);
	for (uint32_t r = 0; r < TIDE_TABLE_ROWS; r++) {
		uint32_t p, s;

		tb_row(t, key, r, &p, &s);
		tb_put32(out + TIDE_GLBD_ROWS_OFF + (size_t)r * 8, p);
		tb_put32(out + TIDE_GLBD_ROWS_OFF + (size_t)r * 8 + 4, s);
	}
	return 0;
}

/* A whole GLBD file of `version` (2 or 3) with `n` tables; *len set; free() the result. NULL
 * on a bad bind address. v3 carries each table's hash_fields / alt_hash_fields. */
static inline uint8_t *tb_write_file_version(const struct tb_table *tables, uint32_t n,
					     uint32_t version, size_t *len)
{
	uint8_t *f = calloc(1, tide_glbd_file_size(n, version));

	if (!f)
		return NULL;
	memcpy(f, "GLBD", 4);
	tb_put32(f + 4, version);
	tb_put32(f + 8, n);
	tb_put32(f + 12, TIDE_TABLE_ROWS);
	tb_put32(f + 16, TIDE_MAX_BACKENDS);
	tb_put32(f + 20, TIDE_MAX_BINDS);
	for (uint32_t t = 0; t < n; t++) {
		if (tb_write_table(&tables[t],
				   f + TIDE_GLBD_HEADER_SIZE + (size_t)t * TIDE_GLBD_TABLE_SIZE)) {
			free(f);
			return NULL;
		}
		if (version == TIDE_GLBD_VERSION_3) {
			uint8_t *e = f + TIDE_GLBD_HEADER_SIZE + (size_t)n * TIDE_GLBD_TABLE_SIZE +
				     (size_t)t * TIDE_GLBD_TRAILER_ENTRY_SIZE;

			e[0] = tables[t].hash_fields;
			e[1] = tables[t].alt_hash_fields;
		}
	}
	*len = tide_glbd_file_size(n, version);
	return f;
}

/* glb-director's v2 file (no hash fields). */
static inline uint8_t *tb_write_file(const struct tb_table *tables, uint32_t n, size_t *len)
{
	return tb_write_file_version(tables, n, TIDE_GLBD_VERSION_2, len);
}

static inline int tb_hex(const char *hex, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned int v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -EINVAL;
		out[i] = (uint8_t)v;
	}
	return 0;
}

#endif /* TIDE_TEST_TABLE_BUILDER_H */
