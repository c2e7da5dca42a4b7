/* SPDX-License-Identifier: MIT */
/*
 * The director's forwarding state: a validated GLBD file compiled into a form the packet path
 * reads without any checks, and the per-packet decision (bind -> table -> flow hash -> row ->
 * hops -> outer source port).
 *
 * A `struct tide_fwd_set` is immutable once built; the director swaps whole sets (RCU), so a
 * packet always sees exactly one consistent table.
 */
#ifndef TIDE_FORWARD_H
#define TIDE_FORWARD_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tide_glbd.h"
#include "tide_packet.h"
#include "tide_siphash.h"

/* Flow-hash fields, hashed in this fixed order (glb-director's order). */
#define TIDE_HASH_SRC_ADDR 0x1u
#define TIDE_HASH_DST_ADDR 0x2u
#define TIDE_HASH_SRC_PORT 0x4u
#define TIDE_HASH_DST_PORT 0x8u
#define TIDE_HASH_ALL 0xfu

/* Hops in the GUE hop list: the secondary, plus the alt pair while hash fields migrate. */
#define TIDE_MAX_HOPS 3u

struct tide_hash_config {
	uint8_t fields;	    /* TIDE_HASH_*; at least one */
	uint8_t alt_fields; /* 0: no migration; else a second field set whose pair is added as hops */
};

/*
 * A table's hashing plan, fixed when the set is built: one specialised flow-hash path per field
 * set and family (tide_flow_digest_planned's cases), so the packet path takes one indexed jump
 * instead of testing each field. A path is the field set, plus TIDE_HASH_PATH_V6 for 16-byte
 * addresses; 0 is "none" (no alt fields).
 */
#define TIDE_HASH_PATH_V6 0x10u
#define TIDE_HASH_PATH_MASK (TIDE_HASH_PATH_V6 | TIDE_HASH_ALL)

static inline uint8_t tide_hash_path(uint8_t fields, uint8_t family)
{
	if (!fields)
		return 0;
	return (uint8_t)((fields & TIDE_HASH_ALL) | (family == 4 ? 0 : TIDE_HASH_PATH_V6));
}

struct tide_fwd_bind {
	uint64_t net[2]; /* address & mask, as two big-endian-loaded words */
	uint64_t mask[2];
	uint16_t port_start; /* host order, inclusive */
	uint16_t port_end;
	uint8_t family; /* 4 or 6 */
	uint8_t proto;	/* 6 or 17 */
	uint8_t prefix_bits;
	uint8_t table;
	/* Its table's key and plan for this bind's family (tide_fwd_table's hash_path[family] and
	 * alt_hash_path[family]; a flow matches only binds of its own family): a matched packet
	 * hashes from the bind it matched, without reading the table's header. The struct is 64
	 * bytes (40 before) and not cache-line aligned, so a bind may span two lines and a match scan
	 * over many binds reads more bytes; the bench's few binds are faster overall (make bench). */
	struct tide_sipkey key;
	uint8_t hash_path;
	uint8_t alt_hash_path;
};

struct tide_fwd_table {
	struct tide_sipkey key;
	/* What this table is hashed on: the v3 trailer's, or the director's default for v2. */
	struct tide_hash_config hash;
	/* The plan for `hash`: the path of fields, and of alt_fields (0: none), indexed by the
	 * flow's family itself (4 or 6; the other entries are unused). The packet path reads the
	 * copies in each bind; these are for building the binds, explain/status and the tests. */
	uint8_t hash_path[8];
	uint8_t alt_hash_path[8];
	uint32_t num_backends;
	uint32_t rows[TIDE_TABLE_ROWS][2]; /* primary, secondary IPv4 address (network order) */
	uint8_t slots[TIDE_TABLE_ROWS][2]; /* the same as backend slot indexes (explain, status) */
	const uint8_t *raw;		   /* the table's bytes in the GLBD file */
};

struct tide_fwd_set {
	uint32_t version; /* GLBD version of the file: 2 or 3 */
	uint32_t num_tables;
	uint32_t num_binds;
	struct tide_fwd_bind binds[TIDE_MAX_TABLES * TIDE_MAX_BINDS];
	uint8_t *file; /* owned copy of the GLBD file */
	size_t file_len;
	struct tide_fwd_table tables[]; /* num_tables */
};

/* The decision for one packet: which row, and where the GUE packet goes. */
struct tide_decision {
	uint32_t table;
	uint32_t row;
	uint64_t digest;
	uint32_t primary; /* outer destination, network order */
	uint16_t outer_sport;
	uint8_t hop_count;	      /* 1, or 3 with the alt pair */
	uint32_t hops[TIDE_MAX_HOPS]; /* network order */
	uint32_t alt_row;	      /* valid when hop_count == 3 */
};

/*
 * 8 bytes as a big-endian value: one load and a byte swap (the byte loop this replaces stayed a
 * loop: 17 instructions per word, 34 per IPv6 packet's bind match).
 */
static inline uint64_t tide_be64_load(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static inline void tide_prefix_mask(unsigned int bits, uint64_t mask[2])
{
	/* IPv4 addresses live in the top 32 bits of word 0; IPv6 uses both words. */
	unsigned int b = bits;

	mask[0] = b >= 64 ? ~0ULL : b == 0 ? 0 : ~0ULL << (64 - b);
	b = b > 64 ? b - 64 : 0;
	mask[1] = b >= 64 ? ~0ULL : b == 0 ? 0 : ~0ULL << (64 - b);
}

static inline void tide_addr_words(const uint8_t *addr, uint8_t family, uint64_t w[2])
{
	if (family == 4) {
		/* As a 32-bit big-endian load (one load and a byte swap, not four byte loads). */
		uint32_t a = (uint32_t)addr[0] << 24 | (uint32_t)addr[1] << 16 |
			     (uint32_t)addr[2] << 8 | (uint32_t)addr[3];

		w[0] = (uint64_t)a << 32;
		w[1] = 0;
	} else {
		w[0] = tide_be64_load(addr);
		w[1] = tide_be64_load(addr + 8);
	}
}

static inline int tide_binds_overlap(const struct tide_fwd_bind *a, const struct tide_fwd_bind *b)
{
	uint64_t m0 = a->mask[0] & b->mask[0], m1 = a->mask[1] & b->mask[1];

	return a->family == b->family && a->proto == b->proto &&
	       (a->net[0] & m0) == (b->net[0] & m0) && (a->net[1] & m1) == (b->net[1] & m1) &&
	       a->port_start <= b->port_end && b->port_start <= a->port_end;
}

static inline void tide_fwd_set_free(struct tide_fwd_set *set)
{
	if (!set)
		return;
	free(set->file);
	free(set);
}

/*
 * Validates `file` and compiles it. On success returns 0 and *out (free with
 * tide_fwd_set_free); on failure -EINVAL with *err, or -ENOMEM. The input is copied.
 * Beyond the GLBD rules, the director refuses IPv6 backends (the outer header is IPv4) and
 * binds of two different tables that overlap (a packet must match one pool only).
 * A v3 table is hashed on its trailer's fields, a v2 table on `defaults` (the configured
 * hash_fields / alt_hash_fields; fields must be non-zero).
 */
static inline int tide_fwd_set_build(const uint8_t *file, size_t len,
				     const struct tide_hash_config *defaults,
				     struct tide_fwd_set **out, struct tide_glbd_error *err)
{
	struct tide_fwd_set *set;
	uint32_t n_tables = 0;
	int rc = tide_glbd_validate(file, len, &n_tables, err);

	if (rc)
		return rc;
	set = calloc(1, sizeof(*set) + (size_t)n_tables * sizeof(struct tide_fwd_table));
	if (!set)
		return -ENOMEM;
	set->file = malloc(len);
	if (!set->file) {
		free(set);
		return -ENOMEM;
	}
	memcpy(set->file, file, len);
	set->file_len = len;
	set->version = tide_glbd_version(set->file);
	set->num_tables = n_tables;
	for (uint32_t t = 0; t < n_tables; t++) {
		const uint8_t *raw = tide_glbd_table(set->file, t);
		struct tide_fwd_table *tbl = &set->tables[t];
		uint32_t addrs[TIDE_MAX_BACKENDS];
		uint32_t n_binds = tide_rd_le32(raw + TIDE_GLBD_NUM_BINDS_OFF);

		tbl->raw = raw;
		tbl->num_backends = tide_rd_le32(raw);
		tbl->key = tide_sipkey_from_bytes(raw + TIDE_GLBD_HASH_KEY_OFF);
		/* The length test always holds after validation; it tells the compiler so too (gcc
		 * -O3 otherwise warns about a v2 file's length on this v3-only path). */
		if (set->version == TIDE_GLBD_VERSION_3 &&
		    (size_t)(tide_glbd_trailer(set->file, n_tables, t) - set->file) +
				    TIDE_GLBD_TRAILER_ENTRY_SIZE <=
			    len) {
			const uint8_t *e = tide_glbd_trailer(set->file, n_tables, t);

			tbl->hash.fields = e[0];
			tbl->hash.alt_fields = e[1];
		} else {
			tbl->hash = *defaults;
		}
		for (uint8_t family = 4; family <= 6; family += 2) {
			tbl->hash_path[family] = tide_hash_path(tbl->hash.fields, family);
			tbl->alt_hash_path[family] = tide_hash_path(tbl->hash.alt_fields, family);
		}
		for (uint32_t i = 0; i < tbl->num_backends; i++) {
			const uint8_t *b =
				raw + TIDE_GLBD_BACKENDS_OFF + i * TIDE_GLBD_BACKEND_SIZE;

			if (tide_rd_le32(b) != TIDE_FAMILY_IPV4) {
				rc = tide_glbd_fail(err, "ipv6_backend", (int32_t)t, (int32_t)i, -1,
						    (int64_t)(b - set->file),
						    "IPv6 backend: the GUE outer header is IPv4, "
						    "proxies need IPv4 addresses");
				tide_fwd_set_free(set);
				return rc;
			}
			memcpy(&addrs[i], b + 4, 4);
		}
		for (uint32_t r = 0; r < TIDE_TABLE_ROWS; r++) {
			const uint8_t *row = raw + TIDE_GLBD_ROWS_OFF + (size_t)r * 8;
			uint32_t p = tide_rd_le32(row), s = tide_rd_le32(row + 4);

			tbl->rows[r][0] = addrs[p];
			tbl->rows[r][1] = addrs[s];
			tbl->slots[r][0] = (uint8_t)p;
			tbl->slots[r][1] = (uint8_t)s;
		}
		for (uint32_t i = 0; i < n_binds; i++) {
			const uint8_t *b = raw + TIDE_GLBD_BINDS_OFF + i * TIDE_GLBD_BIND_SIZE;
			struct tide_fwd_bind *fb = &set->binds[set->num_binds];
			uint8_t family = tide_rd_le32(b) == TIDE_FAMILY_IPV4 ? 4 : 6;

			fb->family = family;
			fb->prefix_bits = (uint8_t)tide_rd_le16(b + 20);
			fb->port_start = tide_rd_le16(b + 22);
			fb->port_end = tide_rd_le16(b + 24);
			fb->proto = b[26];
			fb->table = (uint8_t)t;
			fb->key = tbl->key;
			fb->hash_path = tbl->hash_path[family];
			fb->alt_hash_path = tbl->alt_hash_path[family];
			tide_prefix_mask(tide_rd_le16(b + 20), fb->mask);
			tide_addr_words(b + 4, family, fb->net);
			fb->net[0] &= fb->mask[0];
			fb->net[1] &= fb->mask[1];
			for (uint32_t j = 0; j < set->num_binds; j++) {
				const struct tide_fwd_bind *o = &set->binds[j];

				if (o->table != t && tide_binds_overlap(o, fb)) {
					rc = tide_glbd_fail(err, "bind_overlap", (int32_t)t,
							    (int32_t)i, -1,
							    (int64_t)(b - set->file),
							    "bind overlaps a bind of table %u "
							    "(same protocol, address and ports)",
							    o->table);
					tide_fwd_set_free(set);
					return rc;
				}
			}
			set->num_binds++;
		}
	}
	*out = set;
	return 0;
}

/* First bind matching the flow's destination (echo matches any protocol and port). */
static inline const struct tide_fwd_bind *tide_fwd_match(const struct tide_fwd_set *set,
							 const struct tide_flow *f)
{
	uint64_t w[2];

	tide_addr_words(f->dst, f->family, w);
	for (uint32_t i = 0; i < set->num_binds; i++) {
		const struct tide_fwd_bind *b = &set->binds[i];

		if (b->family != f->family || (w[0] & b->mask[0]) != b->net[0] ||
		    (w[1] & b->mask[1]) != b->net[1])
			continue;
		if (f->kind == TIDE_FLOW_ICMP_ECHO)
			return b;
		if (b->proto == f->proto && f->dst_port >= b->port_start &&
		    f->dst_port <= b->port_end)
			return b;
	}
	return NULL;
}

/*
 * SipHash over the enabled fields of the flow, in the fixed order: the generic form, one test per
 * field. The packet path takes the table's plan instead (tide_flow_digest_planned, the same
 * digest); tests/unit checks every plan path against this one.
 */
static inline uint64_t tide_flow_digest(struct tide_sipkey key, const struct tide_flow *f,
					uint8_t fields)
{
	uint8_t buf[36];
	size_t n = 0, alen = f->family == 4 ? 4 : 16;

	/* Fixed-size copies: a variable-size memcpy is a libc call on the per-packet path. */
	if (fields & TIDE_HASH_SRC_ADDR) {
		if (alen == 4)
			memcpy(buf, f->src, 4);
		else
			memcpy(buf, f->src, 16);
		n += alen;
	}
	if (fields & TIDE_HASH_DST_ADDR) {
		if (alen == 4)
			memcpy(buf + n, f->dst, 4);
		else
			memcpy(buf + n, f->dst, 16);
		n += alen;
	}
	if (fields & TIDE_HASH_SRC_PORT) {
		buf[n++] = (uint8_t)(f->src_port >> 8);
		buf[n++] = (uint8_t)f->src_port;
	}
	if (fields & TIDE_HASH_DST_PORT) {
		buf[n++] = (uint8_t)(f->dst_port >> 8);
		buf[n++] = (uint8_t)f->dst_port;
	}
	return tide_siphash24(key, buf, n);
}

/*
 * The flow hash's input as SipHash words, built in registers: `bytes` (at most 8, the first in
 * the low byte) are appended to the input at offset `*n`; each word that fills up is taken.
 * With every length a compile-time constant (tide_flow_last_word's callers), all the tests and
 * shifts here fold away.
 */
static inline __attribute__((always_inline)) void tide_flow_put(struct tide_sipstate *s,
								uint64_t *word, unsigned int *n,
								uint64_t bytes, unsigned int len)
{
	unsigned int used = *n & 7;

	*word |= bytes << (8 * used);
	if (used + len >= 8) {
		tide_sip_word(s, *word);
		/* The bytes that did not fit start the next word (none if `used` was 0). */
		*word = used ? bytes >> (8 * (8 - used)) : 0;
	}
	*n += len;
}

/* An address's first 4 bytes as they sit in memory, the first in the low byte. */
static inline uint64_t tide_le32_load(const uint8_t *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
}

/* A port as the hash input has it (big-endian bytes), the first byte in the low byte. */
static inline uint64_t tide_port_bytes(uint16_t port)
{
	return (uint64_t)(port >> 8) | (uint64_t)(port & 0xff) << 8;
}

/*
 * tide_flow_digest's input for `fields` with `alen`-byte addresses (4 or 16), both constants at
 * every call: takes the whole words into `s` and returns SipHash's last word (length in the top
 * byte, the remaining 0..7 bytes below). Byte-identical to the buffer tide_flow_digest hashes.
 */
static inline __attribute__((always_inline)) uint64_t tide_flow_last_word(struct tide_sipstate *s,
									  const struct tide_flow *f,
									  unsigned int fields,
									  unsigned int alen)
{
	uint64_t word = 0;
	unsigned int n = 0;

	if (fields & TIDE_HASH_SRC_ADDR) {
		if (alen == 4) {
			tide_flow_put(s, &word, &n, tide_le32_load(f->src), 4);
		} else {
			tide_flow_put(s, &word, &n, tide_le64(f->src), 8);
			tide_flow_put(s, &word, &n, tide_le64(f->src + 8), 8);
		}
	}
	if (fields & TIDE_HASH_DST_ADDR) {
		if (alen == 4) {
			tide_flow_put(s, &word, &n, tide_le32_load(f->dst), 4);
		} else {
			tide_flow_put(s, &word, &n, tide_le64(f->dst), 8);
			tide_flow_put(s, &word, &n, tide_le64(f->dst + 8), 8);
		}
	}
	if (fields & TIDE_HASH_SRC_PORT)
		tide_flow_put(s, &word, &n, tide_port_bytes(f->src_port), 2);
	if (fields & TIDE_HASH_DST_PORT)
		tide_flow_put(s, &word, &n, tide_port_bytes(f->dst_port), 2);
	return word | (uint64_t)n << 56;
}

/*
 * Two cases per field set: IPv4 (4-byte addresses) and IPv6 (16-byte). Each case starts the
 * SipHash state itself: started once before the jump, gcc kept it on the stack across it (4
 * stores per packet).
 */
#define TIDE_HASH_PATH_CASES(fields)                             \
	case (fields):                                           \
		s = tide_sip_start(key);                         \
		last = tide_flow_last_word(&s, f, (fields), 4);  \
		break;                                           \
	case TIDE_HASH_PATH_V6 | (fields):                       \
		s = tide_sip_start(key);                         \
		last = tide_flow_last_word(&s, f, (fields), 16); \
		break

/*
 * tide_flow_digest through a path (tide_hash_path of the fields and the flow's family): the same
 * digest, with one indexed jump instead of a branch per field. Path 0 (no field) is never a
 * table's main path (fields are non-zero); like tide_flow_digest, it hashes the empty input.
 * Always inlined: the burst loop then keeps the SipHash state in registers.
 */
static inline __attribute__((always_inline)) uint64_t
tide_flow_digest_planned(struct tide_sipkey key, const struct tide_flow *f, unsigned int path)
{
	struct tide_sipstate s;
	uint64_t last;

	switch (path & TIDE_HASH_PATH_MASK) {
		TIDE_HASH_PATH_CASES(0x1);
		TIDE_HASH_PATH_CASES(0x2);
		TIDE_HASH_PATH_CASES(0x3);
		TIDE_HASH_PATH_CASES(0x4);
		TIDE_HASH_PATH_CASES(0x5);
		TIDE_HASH_PATH_CASES(0x6);
		TIDE_HASH_PATH_CASES(0x7);
		TIDE_HASH_PATH_CASES(0x8);
		TIDE_HASH_PATH_CASES(0x9);
		TIDE_HASH_PATH_CASES(0xa);
		TIDE_HASH_PATH_CASES(0xb);
		TIDE_HASH_PATH_CASES(0xc);
		TIDE_HASH_PATH_CASES(0xd);
		TIDE_HASH_PATH_CASES(0xe);
		TIDE_HASH_PATH_CASES(0xf);
	default:
		s = tide_sip_start(key);
		last = 0;
		break;
	}
	return tide_sip_finish(s, last);
}

/*
 * The alt digest of a table whose hash fields migrate: out of line, so that the common path
 * (one digest) stays small enough to inline into the burst loop (a second inlined copy cost 13
 * instructions per packet on the path without migration).
 */
static __attribute__((noinline, unused)) uint64_t
tide_flow_digest_alt(struct tide_sipkey key, const struct tide_flow *f, unsigned int path)
{
	return tide_flow_digest_planned(key, f, path);
}

/* Outer UDP source port: spreads flows over ECMP/RSS inside the datacenter. */
static inline uint16_t tide_outer_sport(uint64_t digest, uint16_t client_src_port)
{
	return (uint16_t)(0x8000u | ((digest ^ client_src_port) & 0x7fffu));
}

/*
 * First half of a decision: bind -> table, digest (on the table's own hash fields), row, outer
 * source port (and the alt row). Prefetches the row(s) so that a burst can locate every packet
 * before any row is read (65,536 rows are 512 KB per table: a row is usually not in L1/L2).
 * Returns TIDE_FORWARD or TIDE_DROP_NO_BIND. Always inlined: as a call, its register saves cost
 * more than the plan saves (the bench's callgrind count, 551 against 536 instructions).
 */
static inline __attribute__((always_inline)) enum tide_verdict
tide_fwd_locate(const struct tide_fwd_set *set, const struct tide_flow *f, struct tide_decision *d)
{
	const struct tide_fwd_bind *b = tide_fwd_match(set, f);
	const struct tide_fwd_table *tbl;

	if (!b)
		return TIDE_DROP_NO_BIND;
	d->table = b->table;
	tbl = &set->tables[d->table];
	/* The bind carries its table's key and plan for the flow's family (the bind's). */
	d->digest = tide_flow_digest_planned(b->key, f, b->hash_path);
	d->row = (uint32_t)(d->digest & 0xffff);
	d->outer_sport = tide_outer_sport(d->digest, f->src_port);
	__builtin_prefetch(&tbl->rows[d->row]);
	d->hop_count = 1;
	if (b->alt_hash_path) {
		d->alt_row = (uint32_t)(tide_flow_digest_alt(b->key, f, b->alt_hash_path) & 0xffff);
		d->hop_count = 3;
		__builtin_prefetch(&tbl->rows[d->alt_row]);
	}
	return TIDE_FORWARD;
}

/* Second half: reads the row(s) into the outer destination and the hop list. */
static inline void tide_fwd_fill(const struct tide_fwd_set *set, struct tide_decision *d)
{
	const struct tide_fwd_table *tbl = &set->tables[d->table];

	d->primary = tbl->rows[d->row][0];
	d->hops[0] = tbl->rows[d->row][1];
	if (d->hop_count == 3) {
		d->hops[1] = tbl->rows[d->alt_row][0];
		d->hops[2] = tbl->rows[d->alt_row][1];
	}
}

/* The whole decision for a parsed flow. Returns TIDE_FORWARD or TIDE_DROP_NO_BIND. */
static inline enum tide_verdict tide_fwd_decide(const struct tide_fwd_set *set,
						const struct tide_flow *f, struct tide_decision *d)
{
	enum tide_verdict v = tide_fwd_locate(set, f, d);

	if (v == TIDE_FORWARD)
		tide_fwd_fill(set, d);
	return v;
}

#endif /* TIDE_FORWARD_H */
