/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the table loader (GLBD validation + compilation). A raw input is tried as a
 * whole file (header paths); then it is applied as patches to a valid 1-table file, so the fuzzer
 * reaches every slot, bind and row check of a 537 KB file with small inputs. A file that is
 * accepted must compile into rows that point at its own backends.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/support/table_builder.h"
#include "tide_forward.h"

static uint8_t *valid;
static size_t valid_len;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_built(const uint8_t *file, struct tide_fwd_set *set)
{
	for (uint32_t t = 0; t < set->num_tables; t++) {
		const uint8_t *raw = tide_glbd_table(file, t);
		uint32_t n = tide_rd_le32(raw);

		for (uint32_t r = 0; r < TIDE_TABLE_ROWS; r += 4099) {
			if (set->tables[t].slots[r][0] >= n || set->tables[t].slots[r][1] >= n)
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tide_fwd_set *set = NULL;
	struct tide_glbd_error err;
	uint8_t *file;

	if (!valid) {
		static struct tb_table t = {.num_proxies = 4, .num_binds = 2};

		for (uint32_t i = 0; i < 4; i++)
			t.proxies[i] = htonl(0x0a000001u + i);
		t.binds[0] = (struct tb_bind){"192.0.2.0", 24, TIDE_PROTO_TCP, 80, 443};
		t.binds[1] = (struct tb_bind){"2001:db8::", 64, TIDE_PROTO_UDP, 53, 53};
		valid = tb_write_file(&t, 1, &valid_len);
		if (!valid)
			abort();
	}
	if (tide_fwd_set_build(data, size, &set, &err) == 0) {
		check_built(data, set);
		tide_fwd_set_free(set);
	} else if (!err.code || !err.message[0]) {
		abort(); /* every refusal says why */
	}

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
	set = NULL;
	if (tide_fwd_set_build(file, valid_len, &set, &err) == 0) {
		check_built(file, set);
		tide_fwd_set_free(set);
	} else if (!err.code || !err.message[0]) {
		abort();
	}
	free(file);
	return 0;
}
