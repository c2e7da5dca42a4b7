/* SPDX-License-Identifier: MIT */
/*
 * The per-table hashing plan (common/tide_forward.h): every specialised flow-hash path, the 15
 * field sets for IPv4 and IPv6, against the generic computation (tide_flow_digest, which the
 * shared vectors check) on random flows; then the same through a built table set, where each
 * table has its own fields and half of them migrate (alt fields), so a path picked for the
 * wrong table, family or field set fails here; each bind must carry its table's key and plan
 * for its own family (what the packet path reads).
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "../support/table_builder.h"
#include "check.h"
#include "core_tests.h"
#include "tide_forward.h"

/* Flows per field set and family; enough to cover every byte position of every field. */
#define PLAN_FLOWS 200u
/* 15 tables with only main fields, 15 more that also migrate: 30 of the 64 a file may hold. */
#define PLAN_TABLES 30u
/* Each table's binds cover every address and PLAN_PORTS destination ports of their own. */
#define PLAN_PORTS 1000u

/* splitmix64: a fixed sequence, so a failure repeats. */
static uint64_t plan_rng = 0x7469646568617368ULL;

static uint64_t plan_next(void)
{
	uint64_t z = (plan_rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void plan_bytes(uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (uint8_t)plan_next();
}

/* A TCP flow of `family` with random addresses and ports (unused address bytes stay zero). */
static void plan_flow(struct tide_flow *f, uint8_t family)
{
	memset(f, 0, sizeof(*f));
	f->family = family;
	f->proto = TIDE_IPPROTO_TCP;
	f->kind = TIDE_FLOW_DIRECT;
	plan_bytes(f->src, family == 4 ? 4 : 16);
	plan_bytes(f->dst, family == 4 ? 4 : 16);
	f->src_port = (uint16_t)plan_next();
	f->dst_port = (uint16_t)plan_next();
}

/* Each table's fields: table t hashes on t % 15 + 1; tables 15.. also migrate, from another set. */
static uint8_t plan_fields(uint32_t t)
{
	return (uint8_t)(t % 15 + 1);
}

static uint8_t plan_alt_fields(uint32_t t)
{
	return t < 15 ? 0 : (uint8_t)(plan_fields(t) % 15 + 1);
}

/* tide_flow_digest_planned against tide_flow_digest, path by path. */
static void plan_paths(void)
{
	for (uint8_t family = 4; family <= 6; family += 2) {
		for (uint8_t fields = 0; fields <= TIDE_HASH_ALL; fields++) {
			unsigned int path = tide_hash_path(fields, family);

			for (uint32_t i = 0; i < PLAN_FLOWS; i++) {
				struct tide_sipkey key = {plan_next(), plan_next()};
				struct tide_flow f;
				uint64_t want, got;

				plan_flow(&f, family);
				want = tide_flow_digest(key, &f, fields);
				got = tide_flow_digest_planned(key, &f, path);
				CHECK(got == want,
				      "IPv%u fields 0x%x path 0x%x flow %u: %016llx, want %016llx",
				      family, fields, path, i, (unsigned long long)got,
				      (unsigned long long)want);
				if (got != want)
					break; /* one line per broken path */
			}
		}
	}
}

/* Whole decisions through a v3 set whose tables each have their own fields and alt fields. */
static void plan_tables(void)
{
	static struct tb_table t[PLAN_TABLES];
	static const char *const any[2] = {"0.0.0.0", "::"};
	struct tide_hash_config none = {TIDE_HASH_DST_PORT, 0}; /* v2 default: never used here */
	struct tide_fwd_set *set = NULL;
	struct tide_glbd_error err = {0};
	uint8_t *file;
	size_t len;

	for (uint32_t i = 0; i < PLAN_TABLES; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		plan_bytes(t[i].hash_key, 16);
		plan_bytes(t[i].seed, 16);
		t[i].num_proxies = 4;
		for (uint32_t p = 0; p < 4; p++)
			t[i].proxies[p] = htonl(0x0a000000u | i << 8 | (p + 1));
		for (uint32_t b = 0; b < 2; b++)
			t[i].binds[b] = (struct tb_bind){
				any[b], 0, TIDE_PROTO_TCP, (uint16_t)(i * PLAN_PORTS),
				(uint16_t)(i * PLAN_PORTS + PLAN_PORTS - 1)};
		t[i].num_binds = 2;
		t[i].hash_fields = plan_fields(i);
		t[i].alt_hash_fields = plan_alt_fields(i);
	}
	file = tb_write_file_version(t, PLAN_TABLES, TIDE_GLBD_VERSION_3, &len);
	CHECK(file && tide_fwd_set_build(file, len, &none, &set, &err) == 0, "set refused: %s",
	      err.message);
	if (!set) {
		free(file);
		return;
	}
	/* The packet path hashes with the matched bind's copy of its table's key and plan. */
	for (uint32_t j = 0; j < set->num_binds; j++) {
		const struct tide_fwd_bind *b = &set->binds[j];
		const struct tide_fwd_table *tbl = &set->tables[b->table];

		CHECK(b->key.k0 == tbl->key.k0 && b->key.k1 == tbl->key.k1 &&
			      b->hash_path == tbl->hash_path[b->family] &&
			      b->alt_hash_path == tbl->alt_hash_path[b->family],
		      "bind %u (table %u, IPv%u): path 0x%x alt 0x%x, table's 0x%x 0x%x", j,
		      b->table, b->family, b->hash_path, b->alt_hash_path,
		      tbl->hash_path[b->family], tbl->alt_hash_path[b->family]);
	}
	for (uint32_t i = 0; i < PLAN_TABLES; i++) {
		const struct tide_fwd_table *tbl = &set->tables[i];
		uint8_t fields = plan_fields(i), alt = plan_alt_fields(i);

		for (uint8_t family = 4; family <= 6; family += 2) {
			CHECK(tbl->hash_path[family] == tide_hash_path(fields, family) &&
				      tbl->alt_hash_path[family] ==
					      (alt ? tide_hash_path(alt, family) : 0),
			      "table %u IPv%u plan: path 0x%x alt 0x%x", i, family,
			      tbl->hash_path[family], tbl->alt_hash_path[family]);
			for (uint32_t n = 0; n < PLAN_FLOWS; n++) {
				struct tide_flow f;
				struct tide_decision d = {0};
				uint64_t digest;
				uint32_t alt_row = 0;
				int ok;

				plan_flow(&f, family);
				f.dst_port = (uint16_t)(i * PLAN_PORTS + plan_next() % PLAN_PORTS);
				digest = tide_flow_digest(tbl->key, &f, fields);
				if (alt)
					alt_row = (uint32_t)(tide_flow_digest(tbl->key, &f, alt) &
							     0xffff);
				ok = tide_fwd_decide(set, &f, &d) == TIDE_FORWARD && d.table == i &&
				     d.digest == digest && d.row == (uint32_t)(digest & 0xffff) &&
				     d.outer_sport == tide_outer_sport(digest, f.src_port) &&
				     d.primary == tbl->rows[d.row][0] &&
				     d.hops[0] == tbl->rows[d.row][1];
				if (alt)
					ok = ok && d.hop_count == 3 && d.alt_row == alt_row &&
					     d.hops[1] == tbl->rows[alt_row][0] &&
					     d.hops[2] == tbl->rows[alt_row][1];
				else
					ok = ok && d.hop_count == 1;
				CHECK(ok,
				      "table %u (fields 0x%x alt 0x%x) IPv%u flow %u: table %u "
				      "digest "
				      "%016llx want %016llx, hops %u alt row %u want %u",
				      i, fields, alt, family, n, d.table,
				      (unsigned long long)d.digest, (unsigned long long)digest,
				      d.hop_count, d.alt_row, alt_row);
				if (!ok)
					break;
			}
		}
	}
	tide_fwd_set_free(set);
	free(file);
}

void test_hash_plan(void)
{
	check_current = "hashing plan: 15 field sets x IPv4/IPv6, main and alt";
	plan_paths();
	plan_tables();
}
