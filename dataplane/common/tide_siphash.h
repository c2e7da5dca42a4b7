/* SPDX-License-Identifier: MIT */
/*
 * SipHash-2-4 with a 64-bit output (Aumasson and Bernstein), as glb-director uses it for the
 * rendezvous table and the flow hash. The key is 16 bytes read as two little-endian u64 words;
 * the digest is the u64 value (callers that need the 8 output bytes write it little-endian).
 */
#ifndef TIDE_SIPHASH_H
#define TIDE_SIPHASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct tide_sipkey {
	uint64_t k0;
	uint64_t k1;
};

static inline uint64_t tide_le64(const uint8_t *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
	       (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
	       (uint64_t)p[7] << 56;
}

static inline struct tide_sipkey tide_sipkey_from_bytes(const uint8_t key[16])
{
	struct tide_sipkey k = {tide_le64(key), tide_le64(key + 8)};
	return k;
}

#define TIDE_ROTL64(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

#define TIDE_SIPROUND(v0, v1, v2, v3)     \
	do {                              \
		v0 += v1;                 \
		v1 = TIDE_ROTL64(v1, 13); \
		v1 ^= v0;                 \
		v0 = TIDE_ROTL64(v0, 32); \
		v2 += v3;                 \
		v3 = TIDE_ROTL64(v3, 16); \
		v3 ^= v2;                 \
		v0 += v3;                 \
		v3 = TIDE_ROTL64(v3, 21); \
		v3 ^= v0;                 \
		v2 += v1;                 \
		v1 = TIDE_ROTL64(v1, 17); \
		v1 ^= v2;                 \
		v2 = TIDE_ROTL64(v2, 32); \
	} while (0)

/*
 * SipHash-2-4 in three steps, for callers that produce the input as 64-bit words instead of
 * bytes (the director's planned flow hash, tide_forward.h): start from the key, take each whole
 * 8-byte little-endian word of the input, then finish with the last word: the input length in
 * bytes in the top byte and the last 0..7 input bytes, little-endian, below it.
 * tide_siphash24 is these three steps over a byte buffer.
 */
struct tide_sipstate {
	uint64_t v0, v1, v2, v3;
};

static inline struct tide_sipstate tide_sip_start(struct tide_sipkey key)
{
	struct tide_sipstate s = {0x736f6d6570736575ULL ^ key.k0, 0x646f72616e646f6dULL ^ key.k1,
				  0x6c7967656e657261ULL ^ key.k0, 0x7465646279746573ULL ^ key.k1};
	return s;
}

static inline void tide_sip_word(struct tide_sipstate *s, uint64_t m)
{
	s->v3 ^= m;
	TIDE_SIPROUND(s->v0, s->v1, s->v2, s->v3);
	TIDE_SIPROUND(s->v0, s->v1, s->v2, s->v3);
	s->v0 ^= m;
}

static inline uint64_t tide_sip_finish(struct tide_sipstate s, uint64_t last)
{
	tide_sip_word(&s, last);
	s.v2 ^= 0xff;
	TIDE_SIPROUND(s.v0, s.v1, s.v2, s.v3);
	TIDE_SIPROUND(s.v0, s.v1, s.v2, s.v3);
	TIDE_SIPROUND(s.v0, s.v1, s.v2, s.v3);
	TIDE_SIPROUND(s.v0, s.v1, s.v2, s.v3);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

static inline uint64_t tide_siphash24(struct tide_sipkey key, const uint8_t *in, size_t len)
{
	struct tide_sipstate s = tide_sip_start(key);
	const uint8_t *end = in + (len & ~(size_t)7);
	uint64_t b = (uint64_t)len << 56;

	for (; in != end; in += 8)
		tide_sip_word(&s, tide_le64(in));
	/* The last 0..7 bytes, little-endian (fixed-size loads only). */
	if (len & 4) {
		b |= (uint64_t)in[0] | (uint64_t)in[1] << 8 | (uint64_t)in[2] << 16 |
		     (uint64_t)in[3] << 24;
		in += 4;
	}
	if (len & 2) {
		b |= ((uint64_t)in[0] | (uint64_t)in[1] << 8) << ((len & 4) * 8);
		in += 2;
	}
	if (len & 1)
		b |= (uint64_t)in[0] << ((len & 6) * 8);
	return tide_sip_finish(s, b);
}

#endif /* TIDE_SIPHASH_H */
