/* SPDX-License-Identifier: MIT */
/*
 * glb-director's binary forwarding table file, "GLBD" version 2, Tide's version 3, and their
 * validation.
 *
 * Little-endian integers, addresses in network order, packed (see packages/forwarding's
 * glbd-codec.ts, which writes the same bytes and uses the same error codes):
 *   header (24 B): "GLBD", u32 version = 2, u32 num_tables, u32 table_entries = 65536,
 *                  u32 max_backends = 256, u32 max_binds = 256
 *   per table (537,624 B):
 *     u32 num_backends; 256 x backend {u32 family, addr[16], u16 state, u16 healthy}  (24 B each)
 *     u32 num_binds;    256 x bind {u32 family, addr[16], u16 prefix_bits, u16 port_start,
 *                                   u16 port_end, u8 proto, u8 reserved}             (28 B each)
 *     hash_key[16]; 65,536 x {u32 primary, u32 secondary} (backend slot indexes)
 * Version 3 = the version 2 layout unchanged, then a trailer of num_tables x 4 bytes, one per
 * table in order: u8 hash_fields (src_addr 0x1, dst_addr 0x2, src_port 0x4, dst_port 0x8;
 * non-zero, no other bits), u8 alt_hash_fields (same bits, 0 = no migration), u16 reserved = 0.
 * A v3 table is hashed on its own fields; a v2 table on the director's configured default.
 *
 * tide_glbd_validate() checks everything a reader relies on before a single byte is used, so a
 * bad file is refused with a reason and never half-applied.
 */
#ifndef TIDE_GLBD_H
#define TIDE_GLBD_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define TIDE_GLBD_VERSION_2 2u /* glb-director's */
#define TIDE_GLBD_VERSION_3 3u /* + per-table hash fields */
#define TIDE_TABLE_ROWS 65536u
#define TIDE_MAX_BACKENDS 256u
#define TIDE_MAX_BINDS 256u
/* A file may hold at most this many tables (pools); 64 tables is 34 MB. */
#ifndef TIDE_MAX_TABLES
#define TIDE_MAX_TABLES 64u
#endif

#define TIDE_GLBD_HEADER_SIZE 24u
#define TIDE_GLBD_BACKEND_SIZE 24u
#define TIDE_GLBD_BIND_SIZE 28u
#define TIDE_GLBD_BACKENDS_OFF 4u
#define TIDE_GLBD_NUM_BINDS_OFF \
	(TIDE_GLBD_BACKENDS_OFF + TIDE_MAX_BACKENDS * TIDE_GLBD_BACKEND_SIZE)
#define TIDE_GLBD_BINDS_OFF (TIDE_GLBD_NUM_BINDS_OFF + 4u)
#define TIDE_GLBD_HASH_KEY_OFF (TIDE_GLBD_BINDS_OFF + TIDE_MAX_BINDS * TIDE_GLBD_BIND_SIZE)
#define TIDE_GLBD_ROWS_OFF (TIDE_GLBD_HASH_KEY_OFF + 16u)
/* 537,624 bytes per table. */
#define TIDE_GLBD_TABLE_SIZE (TIDE_GLBD_ROWS_OFF + TIDE_TABLE_ROWS * 8u)
/* v3 trailer entry per table: hash_fields, alt_hash_fields, u16 reserved. */
#define TIDE_GLBD_TRAILER_ENTRY_SIZE 4u
/* Every defined hash-field bit (TIDE_HASH_* in tide_forward.h). */
#define TIDE_GLBD_HASH_FIELD_BITS 0xfu

#define TIDE_FAMILY_IPV4 1u
#define TIDE_FAMILY_IPV6 2u
#define TIDE_STATE_FILLING 0u
#define TIDE_STATE_ACTIVE 1u
#define TIDE_STATE_DRAINING 2u
#define TIDE_PROTO_TCP 6u
#define TIDE_PROTO_UDP 17u

/* Why a file was refused, and where. Unknown locations are -1. */
struct tide_glbd_error {
	const char *code; /* stable code, the same words as glbd-codec.ts's GlbdErrorCode */
	char message[200];
	int32_t table;
	int32_t slot;
	int32_t row;
	int64_t offset; /* byte offset in the file */
};

static inline uint32_t tide_rd_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint16_t tide_rd_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline size_t tide_glbd_file_size(uint32_t num_tables, uint32_t version)
{
	size_t per_table = TIDE_GLBD_TABLE_SIZE +
			   (version == TIDE_GLBD_VERSION_3 ? TIDE_GLBD_TRAILER_ENTRY_SIZE : 0);

	return TIDE_GLBD_HEADER_SIZE + per_table * num_tables;
}

/* Version of a file that tide_glbd_validate() accepted. */
static inline uint32_t tide_glbd_version(const uint8_t *file)
{
	return tide_rd_le32(file + 4);
}

/* The v3 trailer entry of table t (only for a validated v3 file of num_tables tables). */
static inline const uint8_t *tide_glbd_trailer(const uint8_t *file, uint32_t num_tables, uint32_t t)
{
	return file + TIDE_GLBD_HEADER_SIZE + (size_t)TIDE_GLBD_TABLE_SIZE * num_tables +
	       (size_t)TIDE_GLBD_TRAILER_ENTRY_SIZE * t;
}

static inline const uint8_t *tide_glbd_table(const uint8_t *file, uint32_t t)
{
	return file + TIDE_GLBD_HEADER_SIZE + (size_t)TIDE_GLBD_TABLE_SIZE * t;
}

__attribute__((format(printf, 7, 8))) static inline int
tide_glbd_fail(struct tide_glbd_error *err, const char *code, int32_t table, int32_t slot,
	       int32_t row, int64_t offset, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->code = code;
		err->table = table;
		err->slot = slot;
		err->row = row;
		err->offset = offset;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof(err->message), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static inline int tide_glbd_all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Checks an address field (family + 16 bytes); IPv4 must have zero padding. */
static inline int tide_glbd_check_address(const uint8_t *file, size_t o, int32_t t, int32_t slot,
					  struct tide_glbd_error *err)
{
	uint32_t family = tide_rd_le32(file + o);

	if (family == TIDE_FAMILY_IPV4) {
		if (!tide_glbd_all_zero(file + o + 8, 12))
			return tide_glbd_fail(err, "bad_address", t, slot, -1, (int64_t)o + 8,
					      "IPv4 address with non-zero padding");
		return 0;
	}
	if (family == TIDE_FAMILY_IPV6)
		return 0;
	return tide_glbd_fail(err, "bad_family", t, slot, -1, (int64_t)o,
			      "address family %u (expected 1 IPv4 or 2 IPv6)", family);
}

/*
 * Validates a whole GLBD v2 or v3 file. Returns 0 and sets *num_tables, or -EINVAL with *err
 * filled. Checks the same rules as decodeGlbd() in packages/forwarding, in the same order
 * (header, tables, then the v3 trailer).
 */
static inline int tide_glbd_validate(const uint8_t *file, size_t len, uint32_t *num_tables,
				     struct tide_glbd_error *err)
{
	static const struct {
		uint32_t offset;
		uint32_t expected;
		const char *name;
	} header[] = {{12, TIDE_TABLE_ROWS, "table_entries"},
		      {16, TIDE_MAX_BACKENDS, "max_backends"},
		      {20, TIDE_MAX_BINDS, "max_binds"}};
	uint32_t n_tables, version;

	if (len < TIDE_GLBD_HEADER_SIZE)
		return tide_glbd_fail(err, "bad_size", -1, -1, -1, -1,
				      "file is %zu bytes, shorter than the 24-byte header", len);
	if (memcmp(file, "GLBD", 4) != 0)
		return tide_glbd_fail(err, "bad_magic", -1, -1, -1, 0, "magic is not \"GLBD\"");
	version = tide_rd_le32(file + 4);
	if (version != TIDE_GLBD_VERSION_2 && version != TIDE_GLBD_VERSION_3)
		return tide_glbd_fail(err, "bad_version", -1, -1, -1, 4,
				      "version %u, expected 2 or 3", version);
	n_tables = tide_rd_le32(file + 8);
	for (size_t i = 0; i < sizeof(header) / sizeof(header[0]); i++) {
		uint32_t v = tide_rd_le32(file + header[i].offset);

		if (v != header[i].expected)
			return tide_glbd_fail(err, "bad_header", -1, -1, -1, header[i].offset,
					      "%s is %u, expected %u", header[i].name, v,
					      header[i].expected);
	}
	if (n_tables == 0 || n_tables > TIDE_MAX_TABLES)
		return tide_glbd_fail(err, "bad_header", -1, -1, -1, 8, "num_tables is %u (1..%u)",
				      n_tables, TIDE_MAX_TABLES);
	if (len != tide_glbd_file_size(n_tables, version))
		return tide_glbd_fail(err, "bad_size", -1, -1, -1, -1,
				      "file is %zu bytes; %u v%u tables need 24 + %u x %u%s = %zu",
				      len, n_tables, version, n_tables, TIDE_GLBD_TABLE_SIZE,
				      version == TIDE_GLBD_VERSION_3 ? " + 4 each" : "",
				      tide_glbd_file_size(n_tables, version));

	for (uint32_t t = 0; t < n_tables; t++) {
		const size_t base = TIDE_GLBD_HEADER_SIZE + (size_t)TIDE_GLBD_TABLE_SIZE * t;
		const uint32_t n = tide_rd_le32(file + base);
		const uint32_t n_binds = tide_rd_le32(file + base + TIDE_GLBD_NUM_BINDS_OFF);
		const int32_t ti = (int32_t)t;

		if (n > TIDE_MAX_BACKENDS)
			return tide_glbd_fail(err, "too_many_backends", ti, -1, -1, (int64_t)base,
					      "num_backends %u > %u", n, TIDE_MAX_BACKENDS);
		if (n == 0)
			return tide_glbd_fail(err, "no_backends", ti, -1, -1, (int64_t)base,
					      "num_backends is 0");
		for (uint32_t i = 0; i < TIDE_MAX_BACKENDS; i++) {
			const size_t o = base + TIDE_GLBD_BACKENDS_OFF + i * TIDE_GLBD_BACKEND_SIZE;
			const int32_t si = (int32_t)i;
			uint16_t state, health;
			int rc;

			if (i >= n) {
				if (!tide_glbd_all_zero(file + o, TIDE_GLBD_BACKEND_SIZE))
					return tide_glbd_fail(err, "dirty_slot", ti, si, -1,
							      (int64_t)o,
							      "unused backend slot is not zero");
				continue;
			}
			rc = tide_glbd_check_address(file, o, ti, si, err);
			if (rc)
				return rc;
			state = tide_rd_le16(file + o + 20);
			health = tide_rd_le16(file + o + 22);
			if (state > TIDE_STATE_DRAINING)
				return tide_glbd_fail(err, "bad_state", ti, si, -1, (int64_t)o + 20,
						      "backend state %u (0..2)", state);
			if (health > 1)
				return tide_glbd_fail(err, "bad_health", ti, si, -1,
						      (int64_t)o + 22, "backend health %u (0/1)",
						      health);
			for (uint32_t j = 0; j < i; j++) {
				const size_t p =
					base + TIDE_GLBD_BACKENDS_OFF + j * TIDE_GLBD_BACKEND_SIZE;

				if (memcmp(file + p, file + o, 20) == 0)
					return tide_glbd_fail(err, "duplicate_backend", ti, si, -1,
							      (int64_t)o + 4,
							      "backend also in slot %u", j);
			}
		}
		if (n_binds > TIDE_MAX_BINDS)
			return tide_glbd_fail(err, "too_many_binds", ti, -1, -1,
					      (int64_t)(base + TIDE_GLBD_NUM_BINDS_OFF),
					      "num_binds %u > %u", n_binds, TIDE_MAX_BINDS);
		for (uint32_t i = 0; i < TIDE_MAX_BINDS; i++) {
			const size_t o = base + TIDE_GLBD_BINDS_OFF + i * TIDE_GLBD_BIND_SIZE;
			const int32_t si = (int32_t)i;
			uint16_t prefix, port_start, port_end;
			uint8_t proto;
			unsigned int bits;
			int rc;

			if (i >= n_binds) {
				if (!tide_glbd_all_zero(file + o, TIDE_GLBD_BIND_SIZE))
					return tide_glbd_fail(err, "dirty_slot", ti, si, -1,
							      (int64_t)o,
							      "unused bind slot is not zero");
				continue;
			}
			rc = tide_glbd_check_address(file, o, ti, si, err);
			if (rc)
				return rc;
			bits = tide_rd_le32(file + o) == TIDE_FAMILY_IPV4 ? 32 : 128;
			prefix = tide_rd_le16(file + o + 20);
			port_start = tide_rd_le16(file + o + 22);
			port_end = tide_rd_le16(file + o + 24);
			proto = file[o + 26];
			if (prefix > bits)
				return tide_glbd_fail(
					err, "bad_prefix", ti, si, -1, (int64_t)o + 20,
					"prefix /%u for a %u-bit address", prefix, bits);
			if (port_start > port_end)
				return tide_glbd_fail(
					err, "bad_port_range", ti, si, -1, (int64_t)o + 22,
					"port_start %u > port_end %u", port_start, port_end);
			if (proto != TIDE_PROTO_TCP && proto != TIDE_PROTO_UDP)
				return tide_glbd_fail(err, "bad_proto", ti, si, -1, (int64_t)o + 26,
						      "protocol %u (expected 6 tcp or 17 udp)",
						      proto);
			if (file[o + 27] != 0)
				return tide_glbd_fail(err, "bad_reserved", ti, si, -1,
						      (int64_t)o + 27, "reserved byte is not 0");
		}
		for (uint32_t r = 0; r < TIDE_TABLE_ROWS; r++) {
			const size_t o = base + TIDE_GLBD_ROWS_OFF + (size_t)r * 8;
			const uint32_t p = tide_rd_le32(file + o);
			const uint32_t s = tide_rd_le32(file + o + 4);

			if (p >= n || s >= n)
				return tide_glbd_fail(err, "backend_index_out_of_range", ti, -1,
						      (int32_t)r, (int64_t)(p >= n ? o : o + 4),
						      "backend index %u >= num_backends %u",
						      p >= n ? p : s, n);
		}
	}
	/* The v3 trailer: bounded by len as well (equal after the size check), so the compiler
	 * can see every read is inside the file. */
	for (uint32_t t = 0; version == TIDE_GLBD_VERSION_3 && t < n_tables &&
			     tide_glbd_file_size(n_tables, TIDE_GLBD_VERSION_2) +
					     (size_t)TIDE_GLBD_TRAILER_ENTRY_SIZE * (t + 1) <=
				     len;
	     t++) {
		const uint8_t *e = tide_glbd_trailer(file, n_tables, t);
		const int64_t o = (int64_t)(e - file);

		if (e[0] == 0 || (e[0] & ~TIDE_GLBD_HASH_FIELD_BITS))
			return tide_glbd_fail(err, "bad_hash_fields", (int32_t)t, -1, -1, o,
					      "hash_fields 0x%x (non-zero, bits 0x1..0x8)", e[0]);
		if (e[1] & ~TIDE_GLBD_HASH_FIELD_BITS)
			return tide_glbd_fail(err, "bad_alt_hash_fields", (int32_t)t, -1, -1, o + 1,
					      "alt_hash_fields 0x%x (bits 0x1..0x8)", e[1]);
		if (tide_rd_le16(e + 2) != 0)
			return tide_glbd_fail(err, "bad_reserved", (int32_t)t, -1, -1, o + 2,
					      "trailer reserved field is not 0");
	}
	*num_tables = n_tables;
	return 0;
}

#endif /* TIDE_GLBD_H */
