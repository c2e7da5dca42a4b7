/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the director's whole per-packet path (parse, classify, hash, encapsulate)
 * on arbitrary frames, with a GLBD v3 table set (two pools). Byte 0 picks the hash fields
 * and migration of pool 0 (pool 1 gets the nibbles swapped: each table hashes on its own
 * fields), byte 1 the MTU; the rest is the Ethernet frame. Besides sanitizer findings it aborts when a forwarded packet breaks an
 * invariant: lengths, checksums, or a destination that is not the row's primary.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/support/table_builder.h"
#include "tide_pipeline.h"

static struct tide_fwd_set *set;
static const struct tide_hash_config defaults = {TIDE_HASH_DST_PORT, 0};

static void build_set(void)
{
	static struct tb_table t[2];
	struct tide_glbd_error err;
	size_t len;
	uint8_t *file;

	t[0].num_proxies = 8;
	for (uint32_t i = 0; i < 8; i++)
		t[0].proxies[i] = htonl(0x0a140000u + i + 1);
	t[0].binds[0] = (struct tb_bind){"203.0.113.64", 26, TIDE_PROTO_TCP, 8000, 8099};
	t[0].binds[1] = (struct tb_bind){"2001:db8::10", 128, TIDE_PROTO_TCP, 443, 443};
	t[0].binds[2] = (struct tb_bind){"203.0.113.10", 32, TIDE_PROTO_UDP, 53, 53};
	t[0].num_binds = 3;
	t[1].num_proxies = 2;
	t[1].proxies[0] = htonl(0x0a150001u);
	t[1].proxies[1] = htonl(0x0a150002u);
	t[1].binds[0] = (struct tb_bind){"198.18.0.0", 15, TIDE_PROTO_TCP, 0, 65535};
	t[1].binds[1] = (struct tb_bind){"2001:db8:100::", 40, TIDE_PROTO_UDP, 0, 65535};
	t[1].num_binds = 2;
	memset(t[1].hash_key, 7, 16);
	t[0].hash_fields = TIDE_HASH_SRC_ADDR;
	t[1].hash_fields = TIDE_HASH_SRC_ADDR | TIDE_HASH_SRC_PORT;
	file = tb_write_file_version(t, 2, TIDE_GLBD_VERSION_3, &len);
	if (!file || tide_fwd_set_build(file, len, &defaults, &set, &err) != 0)
		abort();
	if (set->tables[1].hash.fields != (TIDE_HASH_SRC_ADDR | TIDE_HASH_SRC_PORT))
		abort(); /* the trailer, not the default */
	free(file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t buf[128 + 65536];
	struct tide_encap_params ep = {{2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2}, htonl(0xc0000201)};
	uint8_t lo, hi;
	struct tide_flow f = {0};
	struct tide_decision d = {0};
	uint32_t prepend = 0, out_len = 0, mtu, len;
	uint8_t *frame = buf + 128;
	enum tide_verdict v;

	if (!set)
		build_set();
	if (size < 2 || size - 2 > sizeof(buf) - 128)
		return 0;
	/* The compiled set is the fuzzer's own: it sets each table's fields like a trailer would. */
	lo = data[0] & 0xf;
	hi = data[0] >> 4;
	set->tables[0].hash = (struct tide_hash_config){lo ? lo : TIDE_HASH_SRC_ADDR, hi};
	set->tables[1].hash = (struct tide_hash_config){hi ? hi : TIDE_HASH_SRC_ADDR, lo};
	mtu = 68u + (uint32_t)data[1] * 8u;
	len = (uint32_t)size - 2;
	memcpy(frame, data + 2, len);
	v = tide_pipeline(set, &ep, mtu, frame, len, 128, &f, &d, &prepend, &out_len);
	if (v >= TIDE_VERDICT_COUNT)
		abort();
	if (v == TIDE_FORWARD) {
		const uint8_t *o = frame - prepend;
		const uint8_t *ip = o + TIDE_ETH_HLEN;
		uint64_t s;
		uint8_t pseudo[12];

		if (out_len > len + prepend || out_len - TIDE_ETH_HLEN > mtu)
			abort();
		if (tide_csum_fold(tide_csum_add(0, ip, 20)) != 0)
			abort();
		memcpy(pseudo, ip + 12, 8);
		pseudo[8] = 0;
		pseudo[9] = 17;
		memcpy(pseudo + 10, ip + 24, 2);
		s = tide_csum_add(tide_csum_add(0, pseudo, 12), ip + 20, out_len - 34);
		if (tide_csum_fold(s) != 0)
			abort();
		if (memcmp(ip + 16, &set->tables[d.table].rows[d.row][0], 4) != 0)
			abort();
	}
	return 0;
}
