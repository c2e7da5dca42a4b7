/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the header-only packet core (dataplane/common) against the vector file shared
 * with packages/forwarding and the golden tables built by glb-director itself, so the C and
 * TypeScript implementations cannot drift.
 *
 *   build/unit [vectors.json] [golden-dir]
 * Defaults are relative to dataplane/ (where make runs it).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../support/table_builder.h"
#include "check.h"
#include "core_tests.h"
#include "service_tests.h"
#include "tide_pipeline.h"

int check_failures;
const char *check_current;

/* The configured default (v2 tables) where a test does not care. */
static const struct tide_hash_config default_hash = {TIDE_HASH_SRC_ADDR, 0};
static const char *vectors_path = "../packages/forwarding/vectors/forwarding-vectors.json";
static const char *golden_dir = "../packages/forwarding/testdata/glb";

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static uint64_t hex_u64(const char *s)
{
	return strtoull(s, NULL, 16);
}

static uint32_t ip4(const char *s)
{
	uint32_t a = 0;

	inet_pton(AF_INET, s, &a);
	return a;
}

static uint8_t fields_from_json(json_t *arr)
{
	uint8_t f = 0;
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
	{
		const char *n = json_string_value(v);

		if (!strcmp(n, "src_addr"))
			f |= TIDE_HASH_SRC_ADDR;
		else if (!strcmp(n, "dst_addr"))
			f |= TIDE_HASH_DST_ADDR;
		else if (!strcmp(n, "src_port"))
			f |= TIDE_HASH_SRC_PORT;
		else if (!strcmp(n, "dst_port"))
			f |= TIDE_HASH_DST_PORT;
	}
	return f;
}

static void test_siphash(json_t *vectors)
{
	json_t *v;
	size_t i, n = 0;

	check_current = "siphash24 vectors";
	json_array_foreach(json_object_get(vectors, "siphash24"), i, v)
	{
		uint8_t key[16], msg[64];
		const char *m = json_string_value(json_object_get(v, "message"));
		size_t mlen = strlen(m) / 2;
		uint64_t got;

		tb_hex(json_string_value(json_object_get(v, "key")), key, 16);
		tb_hex(m, msg, mlen);
		got = tide_siphash24(tide_sipkey_from_bytes(key), msg, mlen);
		CHECK(got == hex_u64(json_string_value(json_object_get(v, "u64"))),
		      "vector %zu: got %016llx", i, (unsigned long long)got);
		n++;
	}
	CHECK(n == 64, "expected 64 SipHash vectors, read %zu", n);
}

/* Score of an address (4 or 16 bytes) for a row: siphash(seed, row_seed || ip), read big-endian. */
static uint64_t addr_score(struct tide_sipkey key, const uint8_t rs[8], const char *text)
{
	uint8_t msg[24];
	size_t n = 4;

	memcpy(msg, rs, 8);
	if (inet_pton(AF_INET, text, msg + 8) != 1) {
		inet_pton(AF_INET6, text, msg + 8);
		n = 16;
	}
	return __builtin_bswap64(tide_siphash24(key, msg, 8 + n));
}

static void test_rendezvous(json_t *vectors)
{
	json_t *v;
	size_t i, n = 0;

	check_current = "rendezvous vectors";
	json_array_foreach(json_object_get(vectors, "rendezvous"), i, v)
	{
		uint8_t seed[16], rs[8], want_rs[8];
		struct tide_sipkey key;
		uint32_t row = (uint32_t)json_integer_value(json_object_get(v, "row"));
		json_t *order = json_object_get(v, "order");

		tb_hex(json_string_value(json_object_get(v, "seed")), seed, 16);
		key = tide_sipkey_from_bytes(seed);
		tb_row_seed(key, row, rs);
		tb_hex(json_string_value(json_object_get(v, "rowSeed")), want_rs, 8);
		CHECK(memcmp(rs, want_rs, 8) == 0, "row %u: row_seed differs", row);
		/* The order is ascending score: each listed proxy scores above the previous one. */
		for (size_t j = 1; j < json_array_size(order); j++) {
			const char *a = json_string_value(json_array_get(order, j - 1));
			const char *b = json_string_value(json_array_get(order, j));

			CHECK(addr_score(key, rs, a) < addr_score(key, rs, b),
			      "row %u: %s before %s", row, a, b);
		}
		n++;
	}
	CHECK(n >= 3, "expected the published rendezvous vectors, read %zu", n);
}

static void flow_from_vector(json_t *v, struct tide_flow *f)
{
	const char *src = json_string_value(json_object_get(v, "srcAddr"));
	json_t *dst = json_object_get(v, "dstAddr");

	memset(f, 0, sizeof(*f));
	f->family = strchr(src, ':') ? 6 : 4;
	inet_pton(f->family == 4 ? AF_INET : AF_INET6, src, f->src);
	if (dst)
		inet_pton(f->family == 4 ? AF_INET : AF_INET6, json_string_value(dst), f->dst);
	f->src_port = (uint16_t)json_integer_value(json_object_get(v, "srcPort"));
	f->dst_port = (uint16_t)json_integer_value(json_object_get(v, "dstPort"));
	f->proto = TIDE_IPPROTO_TCP;
}

/* Flow hash -> row -> (primary, secondary) -> outer source port, through a real table. */
static void test_flows(json_t *vectors)
{
	json_t *v;
	size_t i;

	check_current = "flow vectors";
	json_array_foreach(json_object_get(vectors, "flows"), i, v)
	{
		struct tb_table t = {0};
		struct tide_fwd_set *set = NULL;
		struct tide_glbd_error err;
		struct tide_flow f = {0};
		struct tide_decision d = {0};
		struct tide_hash_config cfg = {fields_from_json(json_object_get(v, "fields")), 0};
		json_t *p;
		size_t j, len;
		uint8_t *file;
		int rc;

		tb_hex(json_string_value(json_object_get(v, "hashKey")), t.hash_key, 16);
		tb_hex(json_string_value(json_object_get(v, "seed")), t.seed, 16);
		json_array_foreach(json_object_get(v, "proxies"), j, p) t.proxies[t.num_proxies++] =
			ip4(json_string_value(p));
		flow_from_vector(v, &f);
		/* A bind that covers the vector's flow: its family, any address, all ports. */
		t.binds[0] = (struct tb_bind){f.family == 4 ? "0.0.0.0" : "::", 0, TIDE_PROTO_TCP,
					      0, 65535};
		t.num_binds = 1;
		file = tb_write_file(&t, 1, &len);
		/* A v2 table: hashed on the director's default fields, here the vector's. */
		rc = tide_fwd_set_build(file, len, &cfg, &set, &err);
		CHECK(rc == 0, "flow %zu: table refused: %s", i, rc ? err.message : "");
		if (rc == 0) {
			CHECK(tide_fwd_decide(set, &f, &d) == TIDE_FORWARD, "flow %zu", i);
			CHECK(d.digest == hex_u64(json_string_value(json_object_get(v, "digest"))),
			      "flow %zu: digest %016llx", i, (unsigned long long)d.digest);
			CHECK(d.row == json_integer_value(json_object_get(v, "row")),
			      "flow %zu: row %u", i, d.row);
			CHECK(d.primary == ip4(json_string_value(json_object_get(v, "primary"))),
			      "flow %zu: primary", i);
			CHECK(d.hop_count == 1 &&
				      d.hops[0] == ip4(json_string_value(
							   json_object_get(v, "secondary"))),
			      "flow %zu: secondary", i);
			CHECK(d.outer_sport ==
				      json_integer_value(json_object_get(v, "outerSourcePort")),
			      "flow %zu: outer source port %u", i, d.outer_sport);
		}
		tide_fwd_set_free(set);
		free(file);
	}
}

/* Finds the first vector of `source` hashed on exactly `fields`. */
static json_t *flow_vector(json_t *vectors, const char *source, uint8_t fields)
{
	json_t *v;
	size_t i;

	json_array_foreach(json_object_get(vectors, "flows"), i, v)
	{
		if (!strcmp(json_string_value(json_object_get(v, "source")), source) &&
		    fields_from_json(json_object_get(v, "fields")) == fields)
			return v;
	}
	return NULL;
}

/*
 * GLBD v3: two pools in one file, pool A hashed on src_addr and pool B on src_addr+src_port
 * (the trailer), whatever the configured default. Expectations are the Python reference's
 * published vectors (same key, proxies and client), not this code's own output.
 */
static void test_v3_vectors(json_t *vectors)
{
	static const char *const vips[2] = {"203.0.113.10", "203.0.113.20"};
	/* A default that neither vector uses: a v3 table must not fall back to it. */
	static const struct tide_hash_config dst_port_only = {TIDE_HASH_DST_PORT, 0};
	json_t *want[2] = {
		flow_vector(vectors, "published", TIDE_HASH_SRC_ADDR),
		flow_vector(vectors, "published", TIDE_HASH_SRC_ADDR | TIDE_HASH_SRC_PORT)};
	static struct tb_table t[2];
	struct tide_fwd_set *set = NULL;
	struct tide_glbd_error err = {0};
	size_t len;
	uint8_t *file;

	check_current = "GLBD v3 per-table hash fields (vectors)";
	CHECK(want[0] && want[1], "published src_addr and src_addr+src_port vectors");
	if (!want[0] || !want[1])
		return;
	for (int p = 0; p < 2; p++) {
		json_t *x;
		size_t j;

		tb_hex(json_string_value(json_object_get(want[p], "hashKey")), t[p].hash_key, 16);
		tb_hex(json_string_value(json_object_get(want[p], "seed")), t[p].seed, 16);
		json_array_foreach(json_object_get(want[p], "proxies"), j, x) t[p]
			.proxies[t[p].num_proxies++] = ip4(json_string_value(x));
		t[p].binds[0] = (struct tb_bind){vips[p], 32, TIDE_PROTO_TCP, 443, 443};
		t[p].num_binds = 1;
		t[p].hash_fields = fields_from_json(json_object_get(want[p], "fields"));
	}
	t[1].alt_hash_fields = TIDE_HASH_SRC_ADDR;
	file = tb_write_file_version(t, 2, TIDE_GLBD_VERSION_3, &len);
	CHECK(file && len == 24 + 2 * (size_t)TIDE_GLBD_TABLE_SIZE + 8, "v3 size %zu", len);
	if (!file)
		return;
	CHECK(tide_fwd_set_build(file, len, &dst_port_only, &set, &err) == 0, "v3 refused: %s",
	      err.message);
	if (!set) {
		free(file);
		return;
	}
	CHECK(set->version == 3 && set->tables[0].hash.fields == TIDE_HASH_SRC_ADDR &&
		      set->tables[0].hash.alt_fields == 0 &&
		      set->tables[1].hash.fields == (TIDE_HASH_SRC_ADDR | TIDE_HASH_SRC_PORT) &&
		      set->tables[1].hash.alt_fields == TIDE_HASH_SRC_ADDR,
	      "per-table fields from the trailer");
	for (int p = 0; p < 2; p++) {
		struct tide_flow f;
		struct tide_decision d = {0};

		flow_from_vector(want[p], &f);
		inet_pton(AF_INET, vips[p], f.dst);
		f.dst_port = 443;
		CHECK(tide_fwd_decide(set, &f, &d) == TIDE_FORWARD && d.table == (uint32_t)p,
		      "pool %d matched", p);
		CHECK(d.digest == hex_u64(json_string_value(json_object_get(want[p], "digest"))) &&
			      d.row == json_integer_value(json_object_get(want[p], "row")),
		      "pool %d: digest %016llx row %u", p, (unsigned long long)d.digest, d.row);
		CHECK(d.primary == ip4(json_string_value(json_object_get(want[p], "primary"))) &&
			      d.hops[0] ==
				      ip4(json_string_value(json_object_get(want[p], "secondary"))),
		      "pool %d: primary/secondary", p);
		CHECK(d.outer_sport ==
			      json_integer_value(json_object_get(want[p], "outerSourcePort")),
		      "pool %d: outer source port %u", p, d.outer_sport);
		/* Pool B migrates from src_addr: its alt row is pool A's vector row. */
		CHECK(p == 0 ? d.hop_count == 1
			     : d.hop_count == 3 && d.alt_row == json_integer_value(json_object_get(
									want[0], "row")),
		      "pool %d: hops %u alt row %u", p, d.hop_count, d.alt_row);
	}
	tide_fwd_set_free(set);
	set = NULL;
	free(file);

	/* The same tables as v2: both use the default (src_addr), so pool B hashes like pool A. */
	file = tb_write_file(t, 2, &len);
	CHECK(file && tide_fwd_set_build(file, len, &default_hash, &set, &err) == 0, "v2: %s",
	      err.message);
	if (set) {
		struct tide_flow f;
		struct tide_decision d = {0};

		flow_from_vector(want[1], &f);
		inet_pton(AF_INET, vips[1], f.dst);
		f.dst_port = 443;
		CHECK(set->version == 2 && tide_fwd_decide(set, &f, &d) == TIDE_FORWARD &&
			      d.row == json_integer_value(json_object_get(want[0], "row")) &&
			      d.hop_count == 1,
		      "v2 table uses the default fields: row %u", d.row);
	}
	tide_fwd_set_free(set);
	free(file);
}

/* Rows decoded from glb-director's own golden files. */
static void test_golden_rows(json_t *vectors)
{
	json_t *v;
	size_t i;

	check_current = "golden rows";
	json_array_foreach(json_object_get(vectors, "goldenRows"), i, v)
	{
		char path[512];
		const char *name = json_string_value(json_object_get(v, "file"));
		uint32_t t = (uint32_t)json_integer_value(json_object_get(v, "table"));
		uint32_t row = (uint32_t)json_integer_value(json_object_get(v, "row"));
		size_t len;
		uint8_t *file;
		struct tide_glbd_error err = {0};
		uint32_t n_tables = 0;
		int rc;

		snprintf(path, sizeof(path), "%s/%s", golden_dir, name);
		file = read_file(path, &len);
		CHECK(file != NULL, "cannot read %s", path);
		if (!file)
			continue;
		rc = tide_glbd_validate(file, len, &n_tables, &err);
		CHECK(rc == 0, "%s refused: %s %s", name, err.code, err.message);
		if (rc == 0 && t < n_tables) {
			const uint8_t *raw = tide_glbd_table(file, t);
			const uint8_t *r = raw + TIDE_GLBD_ROWS_OFF + (size_t)row * 8;
			uint32_t p = tide_rd_le32(r), s = tide_rd_le32(r + 4);
			char pa[64], sa[64];
			const uint8_t *pb =
				raw + TIDE_GLBD_BACKENDS_OFF + p * TIDE_GLBD_BACKEND_SIZE;
			const uint8_t *sb =
				raw + TIDE_GLBD_BACKENDS_OFF + s * TIDE_GLBD_BACKEND_SIZE;

			inet_ntop(tide_rd_le32(pb) == 1 ? AF_INET : AF_INET6, pb + 4, pa,
				  sizeof(pa));
			inet_ntop(tide_rd_le32(sb) == 1 ? AF_INET : AF_INET6, sb + 4, sa,
				  sizeof(sa));
			CHECK(!strcmp(pa, json_string_value(json_object_get(v, "primary"))),
			      "%s table %u row %u primary %s", name, t, row, pa);
			CHECK(!strcmp(sa, json_string_value(json_object_get(v, "secondary"))),
			      "%s table %u row %u secondary %s", name, t, row, sa);
		}
		free(file);
	}
}

/* The compiled set uses the same rows as the file for IPv4-backend goldens. */
static void test_golden_compile(void)
{
	static const char *const names[] = {"golden-drain.bin", "golden-unhealthy.bin",
					    "golden-inactive.bin"};

	check_current = "golden compile";
	for (size_t i = 0; i < 3; i++) {
		char path[512];
		size_t len;
		uint8_t *file;
		struct tide_fwd_set *set = NULL;
		struct tide_glbd_error err = {0};

		snprintf(path, sizeof(path), "%s/%s", golden_dir, names[i]);
		file = read_file(path, &len);
		CHECK(file != NULL, "cannot read %s", path);
		if (!file)
			continue;
		CHECK(tide_fwd_set_build(file, len, &default_hash, &set, &err) == 0, "%s: %s",
		      names[i], err.message);
		if (set) {
			const uint8_t *raw = tide_glbd_table(file, 0);
			int bad = 0;

			for (uint32_t r = 0; r < TIDE_TABLE_ROWS; r++) {
				uint32_t p = tide_rd_le32(raw + TIDE_GLBD_ROWS_OFF + (size_t)r * 8);
				uint32_t a;

				memcpy(&a,
				       raw + TIDE_GLBD_BACKENDS_OFF + p * TIDE_GLBD_BACKEND_SIZE +
					       4,
				       4);
				bad += set->tables[0].rows[r][0] != a;
			}
			CHECK(bad == 0, "%s: %d compiled rows differ from the file", names[i], bad);
			CHECK(set->num_binds == 4, "%s: %u binds", names[i], set->num_binds);
		}
		tide_fwd_set_free(set);
		free(file);
	}
	/* glb-director's own table.bin: 2 tables, an IPv6 bind; the director takes it. */
	{
		char path[512];
		size_t len;
		uint8_t *file;
		struct tide_fwd_set *set = NULL;
		struct tide_glbd_error err = {0};

		snprintf(path, sizeof(path), "%s/table.bin", golden_dir);
		file = read_file(path, &len);
		CHECK(file != NULL, "cannot read %s", path);
		if (file) {
			CHECK(tide_fwd_set_build(file, len, &default_hash, &set, &err) == 0,
			      "table.bin: %s", err.message);
			CHECK(set && set->num_tables == 2 && set->num_binds == 5,
			      "table.bin shape");
			/* An IPv6 backend cannot be a GUE outer destination: refused with a reason. */
			tide_fwd_set_free(set);
			set = NULL;
			file[TIDE_GLBD_HEADER_SIZE + TIDE_GLBD_TABLE_SIZE + TIDE_GLBD_BACKENDS_OFF +
			     TIDE_GLBD_BACKEND_SIZE] = TIDE_FAMILY_IPV6;
			memset(&err, 0, sizeof(err));
			CHECK(tide_fwd_set_build(file, len, &default_hash, &set, &err) == -EINVAL &&
				      err.code && !strcmp(err.code, "ipv6_backend") &&
				      err.table == 1 && err.slot == 1,
			      "IPv6 backend: code %s table %d slot %d", err.code ? err.code : "-",
			      err.table, err.slot);
		}
		tide_fwd_set_free(set);
		free(file);
	}
}

struct corruption {
	const char *code;
	size_t offset; /* relative to the table, or absolute when table_relative is 0 */
	int table_relative;
	uint8_t value;
};

/* Every validation rule refuses a file with the expected code (glbd-codec.ts's codes). */
static void test_validation(void)
{
	struct tb_table t = {.num_proxies = 3, .num_binds = 1};
	static const struct corruption cases[] = {
		{"bad_magic", 0, 0, 'X'},
		{"bad_version", 4, 0, 4},
		{"bad_header", 12, 0, 1},
		{"bad_header", 16, 0, 1},
		{"too_many_backends", 1, 1, 1}, /* num_backends = 3 + 256 */
		{"bad_family", TIDE_GLBD_BACKENDS_OFF, 1, 7},
		{"bad_address", TIDE_GLBD_BACKENDS_OFF + 10, 1, 1},
		{"bad_state", TIDE_GLBD_BACKENDS_OFF + 20, 1, 3},
		{"bad_health", TIDE_GLBD_BACKENDS_OFF + 22, 1, 2},
		{"dirty_slot", TIDE_GLBD_BACKENDS_OFF + 3 * TIDE_GLBD_BACKEND_SIZE + 5, 1, 1},
		{"too_many_binds", TIDE_GLBD_NUM_BINDS_OFF + 1, 1, 1},
		{"bad_prefix", TIDE_GLBD_BINDS_OFF + 20, 1, 33},
		{"bad_port_range", TIDE_GLBD_BINDS_OFF + 22, 1, 0xff},
		{"bad_proto", TIDE_GLBD_BINDS_OFF + 26, 1, 1},
		{"bad_reserved", TIDE_GLBD_BINDS_OFF + 27, 1, 1},
		{"dirty_slot", TIDE_GLBD_BINDS_OFF + TIDE_GLBD_BIND_SIZE + 3, 1, 1},
		{"backend_index_out_of_range", TIDE_GLBD_ROWS_OFF + 8 * 777 + 4, 1, 3},
		{"duplicate_backend", TIDE_GLBD_BACKENDS_OFF + TIDE_GLBD_BACKEND_SIZE + 7, 1, 1},
	};
	size_t len;
	uint8_t *good, *bad = NULL;
	uint32_t n;
	struct tide_glbd_error err = {0};

	check_current = "GLBD validation";
	t.proxies[0] = ip4("10.0.0.1");
	t.proxies[1] = ip4("10.0.0.2");
	t.proxies[2] = ip4("10.0.0.3");
	t.binds[0] = (struct tb_bind){"192.0.2.1", 32, TIDE_PROTO_TCP, 80, 80};
	good = tb_write_file(&t, 1, &len);
	CHECK(tide_glbd_validate(good, len, &n, &err) == 0 && n == 1, "valid file refused: %s",
	      err.message);
	bad = malloc(len + 1);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct corruption *c = &cases[i];
		size_t at = c->table_relative ? TIDE_GLBD_HEADER_SIZE + c->offset : c->offset;

		memcpy(bad, good, len);
		if (!strcmp(c->code, "duplicate_backend"))
			bad[at] = 0x00,
			bad[at] = bad[at - TIDE_GLBD_BACKEND_SIZE]; /* 10.0.0.2 -> .1 */
		else
			bad[at] = c->value;
		memset(&err, 0, sizeof(err));
		CHECK(tide_glbd_validate(bad, len, &n, &err) == -EINVAL && err.code &&
			      !strcmp(err.code, c->code),
		      "case %zu: expected %s, got %s (%s)", i, c->code,
		      err.code ? err.code : "accepted", err.message);
	}
	memset(&err, 0, sizeof(err));
	CHECK(tide_glbd_validate(good, len - 1, &n, &err) == -EINVAL &&
		      !strcmp(err.code, "bad_size"),
	      "short file: %s", err.code ? err.code : "accepted");
	CHECK(tide_glbd_validate(good, 10, &n, &err) == -EINVAL && !strcmp(err.code, "bad_size"),
	      "tiny file: %s", err.code ? err.code : "accepted");
	memcpy(bad, good, len);
	bad[TIDE_GLBD_HEADER_SIZE + TIDE_GLBD_ROWS_OFF + 8 * 777 + 4] = 3;
	memset(&err, 0, sizeof(err));
	tide_glbd_validate(bad, len, &n, &err);
	CHECK(err.row == 777 && err.table == 0, "row location %d table %d", err.row, err.table);
	free(bad);
	free(good);
}

/* The v3 trailer: every rule refuses with its code, table and byte offset (glbd-codec.ts). */
static void test_v3_validation(void)
{
	struct tb_table t[2] = {{.num_proxies = 2, .num_binds = 1},
				{.num_proxies = 2, .num_binds = 1}};
	const size_t trailer = TIDE_GLBD_HEADER_SIZE + 2 * (size_t)TIDE_GLBD_TABLE_SIZE;
	static const struct {
		const char *code;
		size_t at; /* from the trailer's start */
		uint8_t value;
		int32_t table;
		size_t offset; /* reported, from the trailer's start */
	} cases[] = {
		{"bad_hash_fields", 0, 0x00, 0, 0},	{"bad_hash_fields", 4, 0x15, 1, 4},
		{"bad_alt_hash_fields", 5, 0x80, 1, 5}, {"bad_reserved", 3, 0x01, 0, 2},
		{"bad_reserved", 6, 0x01, 1, 6},
	};
	struct tide_glbd_error err = {0};
	uint8_t *good, *bad;
	size_t len, len2;
	uint32_t n = 0;

	check_current = "GLBD v3 validation";
	for (int i = 0; i < 2; i++) {
		t[i].proxies[0] = ip4("10.0.0.1");
		t[i].proxies[1] = ip4("10.0.0.2");
		t[i].hash_fields = TIDE_HASH_SRC_ADDR;
	}
	t[0].binds[0] = (struct tb_bind){"192.0.2.1", 32, TIDE_PROTO_TCP, 80, 80};
	t[1].binds[0] = (struct tb_bind){"192.0.2.2", 32, TIDE_PROTO_TCP, 80, 80};
	t[1].hash_fields = TIDE_HASH_ALL;
	t[1].alt_hash_fields = TIDE_HASH_SRC_ADDR;
	good = tb_write_file_version(t, 2, TIDE_GLBD_VERSION_3, &len);
	if (!good)
		return;
	CHECK(tide_glbd_validate(good, len, &n, &err) == 0 && n == 2, "valid v3 refused: %s",
	      err.message);
	bad = malloc(len);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(bad, good, len);
		bad[trailer + cases[i].at] = cases[i].value;
		memset(&err, 0, sizeof(err));
		CHECK(tide_glbd_validate(bad, len, &n, &err) == -EINVAL && err.code &&
			      !strcmp(err.code, cases[i].code) && err.table == cases[i].table &&
			      err.offset == (int64_t)(trailer + cases[i].offset),
		      "case %zu: expected %s, got %s table %d offset %lld", i, cases[i].code,
		      err.code ? err.code : "accepted", err.table, (long long)err.offset);
	}
	/* Sizes: a v3 file without its trailer, and a v2 file that says version 3. */
	memset(&err, 0, sizeof(err));
	CHECK(tide_glbd_validate(good, len - 4, &n, &err) == -EINVAL && err.code &&
		      !strcmp(err.code, "bad_size"),
	      "v3 without trailer: %s", err.code ? err.code : "accepted");
	free(bad);
	bad = tb_write_file(t, 2, &len2);
	if (bad) {
		CHECK(tide_glbd_validate(bad, len2, &n, &err) == 0, "v2 copy: %s", err.message);
		bad[4] = 3;
		memset(&err, 0, sizeof(err));
		CHECK(tide_glbd_validate(bad, len2, &n, &err) == -EINVAL && err.code &&
			      !strcmp(err.code, "bad_size"),
		      "v2-sized file with version 3: %s", err.code ? err.code : "accepted");
		bad[4] = 4;
		memset(&err, 0, sizeof(err));
		CHECK(tide_glbd_validate(bad, len2, &n, &err) == -EINVAL && err.code &&
			      !strcmp(err.code, "bad_version"),
		      "version 4: %s", err.code ? err.code : "accepted");
	}
	free(bad);
	free(good);
}

/* Two pools must not bind overlapping address/protocol/ports; one pool may. */
static void test_bind_overlap(void)
{
	struct tb_table t[2] = {{.num_proxies = 2, .num_binds = 1},
				{.num_proxies = 2, .num_binds = 1}};
	struct tide_fwd_set *set = NULL;
	struct tide_glbd_error err = {0};
	size_t len;
	uint8_t *file;

	check_current = "bind overlap";
	for (int i = 0; i < 2; i++) {
		t[i].proxies[0] = ip4("10.0.0.1");
		t[i].proxies[1] = ip4("10.0.0.2");
	}
	t[0].binds[0] = (struct tb_bind){"203.0.113.64", 26, TIDE_PROTO_TCP, 8000, 8099};
	t[1].binds[0] = (struct tb_bind){"203.0.113.70", 32, TIDE_PROTO_TCP, 8050, 8050};
	file = tb_write_file(t, 2, &len);
	CHECK(tide_fwd_set_build(file, len, &default_hash, &set, &err) == -EINVAL &&
		      !strcmp(err.code, "bind_overlap"),
	      "overlap accepted");
	CHECK(err.table == 1 && err.slot == 0, "overlap location table %d slot %d", err.table,
	      err.slot);
	free(file);
	t[1].binds[0].proto = TIDE_PROTO_UDP; /* same address and port, other protocol: fine */
	file = tb_write_file(t, 2, &len);
	CHECK(tide_fwd_set_build(file, len, &default_hash, &set, &err) == 0,
	      "udp vs tcp refused: %s", err.message);
	tide_fwd_set_free(set);
	free(file);
}

/* Builds an Ethernet + IPv4 + TCP frame with headroom; returns the frame pointer. */
static uint8_t *frame_v4_tcp(uint8_t *buf, const char *src, const char *dst, uint16_t sport,
			     uint16_t dport, uint32_t *len)
{
	uint8_t *f = buf + 128, *ip = f + 14, *tcp = ip + 20;

	memset(buf, 0, 128 + 14 + 40 + 6);
	f[12] = 0x08;
	ip[0] = 0x45;
	ip[1] = 0x10;
	ip[3] = 40;
	ip[8] = 64;
	ip[9] = 6;
	inet_pton(AF_INET, src, ip + 12);
	inet_pton(AF_INET, dst, ip + 16);
	tcp[0] = (uint8_t)(sport >> 8);
	tcp[1] = (uint8_t)sport;
	tcp[2] = (uint8_t)(dport >> 8);
	tcp[3] = (uint8_t)dport;
	tcp[12] = 5 << 4;
	tcp[13] = 0x02;
	*len = 14 + 40 + 6; /* with Ethernet padding to 60 bytes, which must be dropped */
	return f;
}

static void test_pipeline(void)
{
	struct tb_table t = {.num_proxies = 4, .num_binds = 2};
	struct tide_fwd_set *set = NULL;
	struct tide_glbd_error err = {0};
	struct tide_hash_config cfg = {TIDE_HASH_SRC_ADDR, 0};
	struct tide_encap_params ep = {
		{2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 0xfe}, ip4("192.0.2.10")};
	uint8_t buf[2048];
	struct tide_flow f = {0};
	struct tide_decision d = {0};
	uint32_t len, prepend = 0, out_len = 0;
	uint8_t *frame, *o;
	size_t flen;
	uint8_t *file;

	check_current = "pipeline";
	for (uint32_t i = 0; i < 4; i++)
		t.proxies[i] = htonl(0x0a140000u + i + 1);
	memset(t.hash_key, 0x11, 16);
	memset(t.seed, 0x22, 16);
	t.binds[0] = (struct tb_bind){"203.0.113.64", 26, TIDE_PROTO_TCP, 8000, 8099};
	t.binds[1] = (struct tb_bind){"2001:db8::10", 128, TIDE_PROTO_TCP, 443, 443};
	file = tb_write_file(&t, 1, &flen);
	CHECK(tide_fwd_set_build(file, flen, &cfg, &set, &err) == 0, "%s", err.message);
	if (!set) {
		free(file);
		return;
	}

	frame = frame_v4_tcp(buf, "198.51.100.7", "203.0.113.99", 40000, 8050, &len);
	CHECK(tide_pipeline(set, &ep, 1500, frame, len, 128, &f, &d, &prepend, &out_len) ==
		      TIDE_FORWARD,
	      "CIDR + port range match");
	o = frame - prepend;
	CHECK(prepend == 40 && out_len == 14 + 40 + 40, "prepend %u out_len %u", prepend, out_len);
	CHECK(tide_csum_fold(tide_csum_add(0, o + 14, 20)) == 0, "outer IPv4 header checksum");
	{
		uint8_t pseudo[12];
		uint64_t s;

		memcpy(pseudo, o + 14 + 12, 8);
		pseudo[8] = 0;
		pseudo[9] = 17;
		memcpy(pseudo + 10, o + 14 + 20 + 4, 2);
		s = tide_csum_add(0, pseudo, 12);
		s = tide_csum_add(s, o + 34, out_len - 34);
		CHECK(tide_csum_fold(s) == 0, "UDP checksum verifies");
	}
	CHECK(o[14 + 6] == 0x40 && o[14 + 8] == 64 && o[14 + 1] == 0x10, "DF, TTL 64, TOS copied");
	CHECK(o[34 + 2] == 0x4c && o[34 + 3] == 0x43, "UDP dport 19523");
	CHECK(o[42] == 2 && o[43] == 4 && o[48] == 0 && o[49] == 1, "GUE hlen 2, proto 4, hops 1");
	CHECK(memcmp(o + 50, &d.hops[0], 4) == 0 && memcmp(o + 30, &d.primary, 4) == 0,
	      "hop list and outer dst");
	CHECK(d.primary == set->tables[0].rows[d.row][0], "primary from the row");

	frame = frame_v4_tcp(buf, "198.51.100.7", "203.0.113.99", 40000, 8100, &len);
	CHECK(tide_pipeline(set, &ep, 1500, frame, len, 128, &f, &d, &prepend, &out_len) ==
		      TIDE_DROP_NO_BIND,
	      "port outside the range");
	frame = frame_v4_tcp(buf, "198.51.100.7", "203.0.113.128", 40000, 8050, &len);
	CHECK(tide_pipeline(set, &ep, 1500, frame, len, 128, &f, &d, &prepend, &out_len) ==
		      TIDE_DROP_NO_BIND,
	      "address outside the /26");
	frame = frame_v4_tcp(buf, "198.51.100.7", "203.0.113.99", 40000, 8050, &len);
	CHECK(tide_pipeline(set, &ep, 40 + 35, frame, len, 128, &f, &d, &prepend, &out_len) ==
		      TIDE_DROP_TOO_BIG,
	      "MTU");
	CHECK(tide_pipeline(NULL, &ep, 1500, frame, len, 128, &f, &d, &prepend, &out_len) ==
		      TIDE_DROP_NO_TABLE,
	      "no table");
	frame[14 + 3] = 80; /* total length beyond the frame */
	CHECK(tide_pipeline(set, &ep, 1500, frame, len, 128, &f, &d, &prepend, &out_len) ==
		      TIDE_DROP_TRUNCATED,
	      "truncated");
	frame[14 + 3] = 40;
	frame[14] = 0x44;
	CHECK(tide_pipeline(set, &ep, 1500, frame, len, 128, &f, &d, &prepend, &out_len) ==
		      TIDE_DROP_MALFORMED,
	      "ihl 4");
	frame[14] = 0x45;
	frame[14 + 6] = 0x20; /* more fragments */
	CHECK(tide_pipeline(set, &ep, 1500, frame, len, 128, &f, &d, &prepend, &out_len) ==
		      TIDE_DROP_UNSUPPORTED,
	      "fragment");

	/* ICMP frag-needed about VIP:8050 -> client:40000 hashes like the client's own flow. */
	{
		struct tide_decision direct = {0};
		uint8_t *ip, *icmp, *emb;

		frame = frame_v4_tcp(buf, "198.51.100.7", "203.0.113.99", 40000, 8050, &len);
		cfg.fields = TIDE_HASH_ALL;
		tide_fwd_set_free(set);
		set = NULL;
		CHECK(tide_fwd_set_build(file, flen, &cfg, &set, &err) == 0, "%s", err.message);
		if (!set) {
			free(file);
			return;
		}
		CHECK(tide_pipeline(set, &ep, 1500, frame, len, 128, &f, &direct, &prepend,
				    &out_len) == TIDE_FORWARD,
		      "direct flow");
		memset(buf, 0, sizeof(buf));
		frame = buf + 128;
		frame[12] = 0x08;
		ip = frame + 14;
		ip[0] = 0x45;
		ip[3] = 20 + 8 + 28;
		ip[8] = 64;
		ip[9] = 1;
		inet_pton(AF_INET, "192.0.2.254", ip + 12);
		inet_pton(AF_INET, "203.0.113.99", ip + 16);
		icmp = ip + 20;
		icmp[0] = 3;
		icmp[1] = 4;
		emb = icmp + 8;
		emb[0] = 0x45;
		emb[3] = 60;
		emb[9] = 6;
		inet_pton(AF_INET, "203.0.113.99", emb + 12);
		inet_pton(AF_INET, "198.51.100.7", emb + 16);
		emb[20] = 8050 >> 8;
		emb[21] = 8050 & 0xff;
		emb[22] = 40000 >> 8;
		emb[23] = 40000 & 0xff;
		CHECK(tide_pipeline(set, &ep, 1500, frame, 14 + 56, 128, &f, &d, &prepend,
				    &out_len) == TIDE_FORWARD,
		      "frag-needed");
		CHECK(f.kind == TIDE_FLOW_ICMP_PMTU && d.row == direct.row &&
			      d.primary == direct.primary && d.outer_sport == direct.outer_sport,
		      "frag-needed row %u vs %u", d.row, direct.row);
		/* Encapsulation in place replaced the Ethernet header: restore it per case. */
		frame[12] = 0x08;
		frame[13] = 0;
		icmp[1] = 1; /* host unreachable: not PMTU */
		CHECK(tide_pipeline(set, &ep, 1500, frame, 14 + 56, 128, &f, &d, &prepend,
				    &out_len) == TIDE_DROP_UNSUPPORTED,
		      "other ICMP");
		icmp[0] = 8;
		icmp[1] = 0;
		frame[12] = 0x08;
		frame[13] = 0;
		CHECK(tide_pipeline(set, &ep, 1500, frame, 14 + 56, 128, &f, &d, &prepend,
				    &out_len) == TIDE_FORWARD &&
			      f.kind == TIDE_FLOW_ICMP_ECHO && f.src_port == 0,
		      "echo");
	}
	/* A second hash-field set adds its pair as hops 2 and 3. */
	{
		struct tide_hash_config mig = {TIDE_HASH_SRC_ADDR,
					       TIDE_HASH_SRC_ADDR | TIDE_HASH_SRC_PORT};
		struct tide_fwd_set *mig_set = NULL;

		CHECK(tide_fwd_set_build(file, flen, &mig, &mig_set, &err) == 0, "%s", err.message);
		if (!mig_set)
			goto out;
		frame = frame_v4_tcp(buf, "198.51.100.7", "203.0.113.99", 40000, 8050, &len);
		CHECK(tide_pipeline(mig_set, &ep, 1500, frame, len, 128, &f, &d, &prepend,
				    &out_len) == TIDE_FORWARD,
		      "migration");
		o = frame - prepend;
		CHECK(d.hop_count == 3 && prepend == 48 && o[42] == 4 && o[49] == 3,
		      "3 hops: prepend %u", prepend);
		CHECK(d.hops[1] == mig_set->tables[0].rows[d.alt_row][0] &&
			      d.hops[2] == mig_set->tables[0].rows[d.alt_row][1],
		      "alt pair");
		tide_fwd_set_free(mig_set);
	}
out:
	tide_fwd_set_free(set);
	free(file);
}

int main(int argc, char **argv)
{
	json_error_t jerr;
	json_t *vectors;
	static const struct {
		const char *name;
		void (*fn)(json_t *);
	} vector_tests[] = {{"siphash", test_siphash},
			    {"rendezvous", test_rendezvous},
			    {"flows", test_flows},
			    {"golden rows", test_golden_rows},
			    {"GLBD v3 vectors", test_v3_vectors}};
	static void (*const plain_tests[])(void) = {
		test_golden_compile, test_validation, test_v3_validation, test_bind_overlap,
		test_hash_plan,	     test_pipeline,   test_sd_notify,	  test_reload_plan};
	int passed = 0, failed = 0;

	if (argc > 1)
		vectors_path = argv[1];
	if (argc > 2)
		golden_dir = argv[2];
	vectors = json_load_file(vectors_path, 0, &jerr);
	if (!vectors) {
		fprintf(stderr, "cannot read %s: %s\n", vectors_path, jerr.text);
		return 2;
	}
	for (size_t i = 0; i < sizeof(vector_tests) / sizeof(vector_tests[0]); i++) {
		int before = check_failures;

		vector_tests[i].fn(vectors);
		printf("%s %s\n", check_failures == before ? "ok  " : "FAIL", vector_tests[i].name);
		check_failures == before ? passed++ : failed++;
	}
	for (size_t i = 0; i < sizeof(plain_tests) / sizeof(plain_tests[0]); i++) {
		int before = check_failures;

		plain_tests[i]();
		printf("%s %s\n", check_failures == before ? "ok  " : "FAIL", check_current);
		check_failures == before ? passed++ : failed++;
	}
	json_decref(vectors);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
