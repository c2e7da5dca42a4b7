/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the table loader (GLBD validation + compilation). A raw input is tried as a
 * whole file (header paths); then it is applied as patches to a valid 1-table v2 file and to
 * a valid 2-table v3 file, so the fuzzer reaches every slot, bind, row and trailer check of a
 * 537 KB file with small inputs. A file that is accepted must compile into rows that point at
 * its own backends, and each table must be hashed on its trailer's fields (v3) or the default.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/support/table_builder.h"
#include "tide_forward.h"

static uint8_t *valid, *valid3;
static size_t valid_len, valid3_len;
static const struct tide_hash_config defaults = {TIDE_HASH_SRC_ADDR | TIDE_HASH_DST_PORT, 0};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_built(const uint8_t *file, struct tide_fwd_set *set)
{
	for (uint32_t t = 0; t < set->num_tables; t++) {
		const uint8_t *raw = tide_glbd_table(file, t);
		uint32_t n = tide_rd_le32(raw);
		struct tide_hash_config want = defaults;

		if (tide_glbd_version(file) == TIDE_GLBD_VERSION_3) {
			const uint8_t *e = tide_glbd_trailer(file, set->num_tables, t);

			want = (struct tide_hash_config){e[0], e[1]};
		}
		if (set->tables[t].hash.fields != want.fields ||
		    set->tables[t].hash.alt_fields != want.alt_fields || !want.fields ||
		    (want.fields | want.alt_fields) & ~TIDE_HASH_ALL)
			abort();

		for (uint32_t r = 0; r < TIDE_TABLE_ROWS; r += 4099) {
			if (set->tables[t].slots[r][0] >= n || set->tables[t].slots[r][1] >= n)
				abort();
		}
	}
}

/* Builds `file` (a patched copy) and checks the outcome. */
static void try_build(const uint8_t *file, size_t len)
{
	struct tide_fwd_set *set = NULL;
	struct tide_glbd_error err;

	if (tide_fwd_set_build(file, len, &defaults, &set, &err) == 0) {
		check_built(file, set);
		tide_fwd_set_free(set);
	} else if (!err.code || !err.message[0]) {
		abort(); /* every refusal says why */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Patchable bytes outside the rows: header + table 0 up to its rows, (v3) + trailer. */
	const uint32_t head = TIDE_GLBD_HEADER_SIZE + TIDE_GLBD_ROWS_OFF;
	uint8_t *file;

	if (!valid) {
		static struct tb_table t = {.num_proxies = 4, .num_binds = 2};

		for (uint32_t i = 0; i < 4; i++)
			t.proxies[i] = htonl(0x0a000001u + i);
		t.binds[0] = (struct tb_bind){"192.0.2.0", 24, TIDE_PROTO_TCP, 80, 443};
		t.binds[1] = (struct tb_bind){"2001:db8::", 64, TIDE_PROTO_UDP, 53, 53};
		static struct tb_table t3[2];

		valid = tb_write_file(&t, 1, &valid_len);
		t3[0] = t;
		t3[0].hash_fields = TIDE_HASH_SRC_ADDR;
		t3[1] = t;
		t3[1].binds[0].port_start = t3[1].binds[0].port_end = 8080;
		t3[1].num_binds = 1;
		t3[1].hash_fields = TIDE_HASH_SRC_ADDR | TIDE_HASH_SRC_PORT;
		t3[1].alt_hash_fields = TIDE_HASH_SRC_ADDR;
		valid3 = tb_write_file_version(t3, 2, TIDE_GLBD_VERSION_3, &valid3_len);
		if (!valid || !valid3)
			abort();
	}
	try_build(data, size);

	/* Patches: 3-byte offset (into the first 16 KB or the rows) + 1 value byte each. */
	file = malloc(valid_len);
	if (!file)
		abort();
	memcpy(file, valid, valid_len);
	for (size_t i = 0; i + 4 <= size; i += 4) {
		uint32_t off = (uint32_t)data[i] | (uint32_t)data[i + 1] << 8 |
			       (uint32_t)(data[i + 2] & 0x7f) << 16;

		if (data[i + 2] & 0x80)
			off = TIDE_GLBD_HEADER_SIZE + TIDE_GLBD_ROWS_OFF +
			      off % (TIDE_TABLE_ROWS * 8);
		else
			off %= TIDE_GLBD_HEADER_SIZE + TIDE_GLBD_ROWS_OFF;
		file[off] = data[i + 3];
	}
	try_build(file, valid_len);
	free(file);

	/* The same patches on the v3 file; non-row offsets past the table head hit the trailer. */
	file = malloc(valid3_len);
	if (!file)
		abort();
	memcpy(file, valid3, valid3_len);
	for (size_t i = 0; i + 4 <= size; i += 4) {
		const uint32_t trailer = 2 * TIDE_GLBD_TRAILER_ENTRY_SIZE;
		uint32_t off = (uint32_t)data[i] | (uint32_t)data[i + 1] << 8 |
			       (uint32_t)(data[i + 2] & 0x7f) << 16;

		if (data[i + 2] & 0x80)
			off = TIDE_GLBD_HEADER_SIZE + TIDE_GLBD_ROWS_OFF +
			      off % (TIDE_TABLE_ROWS * 8);
		else if ((off %= head + trailer) >= head)
			off = (uint32_t)(valid3_len - trailer) + (off - head);
		file[off] = data[i + 3];
	}
	try_build(file, valid3_len);
	free(file);
	return 0;
}
