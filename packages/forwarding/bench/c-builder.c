/* SPDX-License-Identifier: MIT */
/*
 * The C table builder the TypeScript one is measured against, built by the benchmarks only
 * (cc -O2, with jansson): the same work as glb-director's `glb-director-cli build-config`,
 * written here from its documented algorithm, with the data plane's SipHash (tide_siphash.h).
 * Per row: row_seed = siphash(seed, u32be(row)); every non-inactive proxy scored
 * siphash(seed, row_seed || ip) read big-endian; qsort by score; the first two make the row,
 * swapped when the first is draining or unhealthy and the second is active ("glb" rules).
 *
 *   c-builder build-config <src.json> <dst.bin>   whole process, as the C CLI (GLBD v2)
 *   c-builder time <src.json> <runs> [--top2]    CPU ms of each in-process build of every
 *                                                 table, one figure a line (no file written);
 *                                                 --top2 keeps the two lowest scores in one
 *                                                 pass instead of sorting (a leaner C builder)
 * Exit 0 ok, 1 failure. Tables with IPv6 proxies are hashed on their 16 address bytes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tide_glbd.h"
#include "tide_siphash.h"

#define STATE_FILLING 0
#define STATE_ACTIVE 1
#define STATE_DRAINING_INACTIVE 2

struct proxy {
	uint32_t family; /* TIDE_FAMILY_IPV4 / _IPV6 */
	uint8_t ip[16];
	uint16_t state;
	uint16_t healthy;
	int inactive;
};

struct scored {
	uint32_t index;
	uint64_t score;
};

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static int hex16(const char *hex, uint8_t out[16])
{
	if (!hex || strlen(hex) != 32)
		return -EINVAL;
	for (int i = 0; i < 16; i++) {
		unsigned int v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -EINVAL;
		out[i] = (uint8_t)v;
	}
	return 0;
}

static int cmp_score(const void *a_, const void *b_)
{
	const struct scored *a = a_, *b = b_;

	return a->score < b->score ? -1 : a->score > b->score;
}

/* Writes the 65,536 rows (8 bytes each) of one table at `rows`. */
static void build_rows(const struct proxy *proxies, uint32_t n, const uint8_t seed[16], int top2,
		       uint8_t *rows)
{
	struct tide_sipkey key = tide_sipkey_from_bytes(seed);
	struct scored s[TIDE_MAX_BACKENDS];
	uint32_t avail = 0;
	uint32_t idx[TIDE_MAX_BACKENDS];

	for (uint32_t i = 0; i < n; i++)
		if (!proxies[i].inactive)
			idx[avail++] = i;
	for (uint32_t row = 0; row < TIDE_TABLE_ROWS; row++) {
		uint8_t msg[8 + 16];
		uint8_t be[4] = {(uint8_t)(row >> 24), (uint8_t)(row >> 16), (uint8_t)(row >> 8),
				 (uint8_t)row};
		uint64_t rs = tide_siphash24(key, be, 4);

		for (int i = 0; i < 8; i++)
			msg[i] = (uint8_t)(rs >> (8 * i));
		for (uint32_t b = 0; b < avail; b++) {
			const struct proxy *p = &proxies[idx[b]];
			size_t len = p->family == TIDE_FAMILY_IPV4 ? 12 : 24;

			memcpy(msg + 8, p->ip, len - 8);
			s[b].index = idx[b];
			s[b].score = __builtin_bswap64(tide_siphash24(key, msg, len));
		}
		if (top2) {
			/* One pass: the two lowest scores, ties to the earlier proxy. */
			struct scored best = s[0], second = s[avail > 1 ? 1 : 0];

			if (avail > 1 && second.score < best.score) {
				best = s[1];
				second = s[0];
			}
			for (uint32_t b = 2; b < avail; b++) {
				if (s[b].score < best.score) {
					second = best;
					best = s[b];
				} else if (s[b].score < second.score) {
					second = s[b];
				}
			}
			s[0] = best;
			s[1] = second;
		} else {
			qsort(s, avail, sizeof(s[0]), cmp_score);
		}
		uint32_t a = s[0].index, b = s[avail > 1 ? 1 : 0].index;
		int bad = proxies[a].state == STATE_DRAINING_INACTIVE || !proxies[a].healthy;

		if (bad && proxies[b].state == STATE_ACTIVE) {
			uint32_t t = a;

			a = b;
			b = t;
		}
		put32(rows + (size_t)row * 8, a);
		put32(rows + (size_t)row * 8 + 4, b);
	}
}

struct table {
	uint32_t n;
	struct proxy proxies[TIDE_MAX_BACKENDS];
	uint8_t seed[16];
	uint8_t *out; /* TIDE_GLBD_TABLE_SIZE bytes in the file image */
};

/* Parses one table of glb-director's JSON into `t` and its fixed part of the file image. */
static int parse_table(json_t *jt, struct table *t)
{
	json_t *backends = json_object_get(jt, "backends"), *binds = json_object_get(jt, "binds");
	uint8_t key[16];

	if (!json_is_array(backends) || !json_is_array(binds) ||
	    json_array_size(backends) > TIDE_MAX_BACKENDS || json_array_size(backends) < 1 ||
	    json_array_size(binds) > TIDE_MAX_BINDS)
		return -EINVAL;
	if (hex16(json_string_value(json_object_get(jt, "hash_key")), key) ||
	    hex16(json_string_value(json_object_get(jt, "seed")), t->seed))
		return -EINVAL;
	t->n = (uint32_t)json_array_size(backends);
	put32(t->out, t->n);
	for (uint32_t i = 0; i < t->n; i++) {
		json_t *jb = json_array_get(backends, i);
		const char *ip = json_string_value(json_object_get(jb, "ip"));
		const char *state = json_string_value(json_object_get(jb, "state"));
		struct proxy *p = &t->proxies[i];
		uint8_t *b = t->out + TIDE_GLBD_BACKENDS_OFF + i * TIDE_GLBD_BACKEND_SIZE;

		if (!ip || !state)
			return -EINVAL;
		p->family = strchr(ip, ':') ? TIDE_FAMILY_IPV6 : TIDE_FAMILY_IPV4;
		if (inet_pton(p->family == TIDE_FAMILY_IPV4 ? AF_INET : AF_INET6, ip, p->ip) != 1)
			return -EINVAL;
		p->healthy = json_is_true(json_object_get(jb, "healthy"));
		p->inactive = !strcmp(state, "inactive");
		if (!strcmp(state, "active"))
			p->state = STATE_ACTIVE;
		else if (!strcmp(state, "filling"))
			p->state = STATE_FILLING;
		else if (!strcmp(state, "draining") || p->inactive)
			p->state = STATE_DRAINING_INACTIVE;
		else
			return -EINVAL;
		put32(b, p->family);
		memcpy(b + 4, p->ip, p->family == TIDE_FAMILY_IPV4 ? 4 : 16);
		put16(b + 20, p->state);
		put16(b + 22, p->healthy);
	}
	put32(t->out + TIDE_GLBD_NUM_BINDS_OFF, (uint32_t)json_array_size(binds));
	for (uint32_t i = 0; i < json_array_size(binds); i++) {
		json_t *jb = json_array_get(binds, i);
		const char *ip = json_string_value(json_object_get(jb, "ip"));
		const char *proto = json_string_value(json_object_get(jb, "proto"));
		uint8_t *b = t->out + TIDE_GLBD_BINDS_OFF + i * TIDE_GLBD_BIND_SIZE;
		json_t *port = json_object_get(jb, "port");
		char addr[64];
		const char *slash;
		int v6;
		unsigned bits;

		if (!ip || !proto || strlen(ip) >= sizeof(addr))
			return -EINVAL;
		strcpy(addr, ip);
		v6 = strchr(addr, ':') != NULL;
		bits = v6 ? 128 : 32;
		slash = strchr(ip, '/');
		if (slash) {
			addr[slash - ip] = '\0';
			bits = (unsigned)atoi(slash + 1);
		}
		if (inet_pton(v6 ? AF_INET6 : AF_INET, addr, b + 4) != 1)
			return -EINVAL;
		put32(b, v6 ? TIDE_FAMILY_IPV6 : TIDE_FAMILY_IPV4);
		put16(b + 20, (uint16_t)bits);
		put16(b + 22, (uint16_t)json_integer_value(
				      port ? port : json_object_get(jb, "port_start")));
		put16(b + 24,
		      (uint16_t)json_integer_value(port ? port : json_object_get(jb, "port_end")));
		b[26] = !strcmp(proto, "udp") ? 17 : 6;
	}
	memcpy(t->out + TIDE_GLBD_HASH_KEY_OFF, key, 16);
	return 0;
}

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	int timing = argc >= 4 && !strcmp(argv[1], "time");

	if (!(argc == 4 && !strcmp(argv[1], "build-config")) && !timing) {
		fprintf(stderr, "Usage: c-builder build-config <src.json> <dst.bin>\n"
				"       c-builder time <src.json> <runs> [--top2]\n");
		return 1;
	}
	json_error_t err;
	json_t *root = json_load_file(argv[2], 0, &err);
	json_t *tables = root ? json_object_get(root, "tables") : NULL;

	if (!json_is_array(tables)) {
		fprintf(stderr, "c-builder: %s: not glb table JSON\n", argv[2]);
		return 1;
	}
	uint32_t n = (uint32_t)json_array_size(tables);
	size_t size = tide_glbd_file_size(n, TIDE_GLBD_VERSION_2);
	uint8_t *file = calloc(1, size);
	struct table *t = calloc(n ? n : 1, sizeof(*t));

	if (!file || !t)
		return 1;
	memcpy(file, "GLBD", 4);
	put32(file + 4, TIDE_GLBD_VERSION_2);
	put32(file + 8, n);
	put32(file + 12, TIDE_TABLE_ROWS);
	put32(file + 16, TIDE_MAX_BACKENDS);
	put32(file + 20, TIDE_MAX_BINDS);
	for (uint32_t i = 0; i < n; i++) {
		t[i].out = file + TIDE_GLBD_HEADER_SIZE + (size_t)i * TIDE_GLBD_TABLE_SIZE;
		if (parse_table(json_array_get(tables, i), &t[i])) {
			fprintf(stderr, "c-builder: %s: bad table %u\n", argv[2], i);
			return 1;
		}
	}
	if (timing) {
		int runs = atoi(argv[3]), top2 = argc > 4 && !strcmp(argv[4], "--top2");

		for (int r = 0; r < runs; r++) {
			double c = cpu_ms();

			for (uint32_t i = 0; i < n; i++)
				build_rows(t[i].proxies, t[i].n, t[i].seed, top2,
					   t[i].out + TIDE_GLBD_ROWS_OFF);
			printf("%.3f\n", cpu_ms() - c);
		}
		return 0;
	}
	for (uint32_t i = 0; i < n; i++)
		build_rows(t[i].proxies, t[i].n, t[i].seed, 0, t[i].out + TIDE_GLBD_ROWS_OFF);

	/* Atomic replace, as the C CLI does: temp file beside the target, then rename. */
	char tmp[4096];
	FILE *out;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", argv[3]) >= (int)sizeof(tmp) ||
	    !(out = fopen(tmp, "wb")) || fwrite(file, 1, size, out) != size || fclose(out) ||
	    rename(tmp, argv[3])) {
		fprintf(stderr, "c-builder: cannot write %s\n", argv[3]);
		return 1;
	}
	return 0;
}
