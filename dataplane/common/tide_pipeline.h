/* SPDX-License-Identifier: MIT */
/*
 * The director's whole per-packet path on a plain buffer: parse -> bind -> hash -> row ->
 * MTU check -> GUE encapsulation in place. DPDK's worker, the pcap tests, the fuzz target and
 * the benchmark all call this one function, so what is tested is what forwards.
 */
#ifndef TIDE_PIPELINE_H
#define TIDE_PIPELINE_H

#include <stdint.h>

#include "tide_forward.h"
#include "tide_gue.h"
#include "tide_packet.h"

/*
 * Stage 1: parse and locate (bind, hash, row; the row is prefetched). Nothing is written.
 * A burst runs this for every packet first, so the row reads of stage 2 rarely miss.
 * Always inlined into the burst loop: gcc otherwise calls it, and the call's register saves and
 * restores cost ~20 instructions per packet (the bench's callgrind count).
 */
static inline __attribute__((always_inline)) enum tide_verdict
tide_pipeline_classify(const struct tide_fwd_set *set, const uint8_t *frame, uint32_t len,
		       struct tide_flow *f, struct tide_decision *d)
{
	enum tide_verdict v;

	if (len < TIDE_ETH_HLEN)
		return TIDE_DROP_TRUNCATED;
	v = tide_parse((uint16_t)(frame[12] << 8 | frame[13]), frame + TIDE_ETH_HLEN,
		       len - TIDE_ETH_HLEN, f);
	if (v != TIDE_FORWARD)
		return v;
	if (!set)
		return TIDE_DROP_NO_TABLE;
	return tide_fwd_locate(set, f, d);
}

/*
 * Stage 2, for a packet stage 1 forwarded: reads the row, checks the MTU and encapsulates in
 * place. `frame` has at least `headroom` writable bytes in front of it. On TIDE_FORWARD the GUE
 * frame starts at frame - *prepend and is *out_len bytes (Ethernet padding after the inner IP
 * packet is dropped). On a drop nothing is written. `mtu` is the largest outer IP packet the
 * director may send. `set` must be the one stage 1 used.
 */
static inline enum tide_verdict
tide_pipeline_finish(const struct tide_fwd_set *set, const struct tide_encap_params *ep,
		     uint32_t mtu, uint8_t *frame, uint32_t headroom, const struct tide_flow *f,
		     struct tide_decision *d, uint32_t *prepend, uint32_t *out_len)
{
	uint32_t overhead = tide_gue_overhead(d->hop_count);

	if (tide_gue_outer_ip_len(d->hop_count, f->l3_len) > mtu)
		return TIDE_DROP_TOO_BIG;
	if (overhead - TIDE_ETH_HLEN > headroom)
		return TIDE_DROP_TOO_BIG; /* cannot happen with DPDK's 128-byte headroom */
	tide_fwd_fill(set, d);
	*prepend = overhead - TIDE_ETH_HLEN;
	*out_len = overhead + f->l3_len;
	tide_gue_encap(frame - *prepend, ep, d, f->family, f->tos, f->l3_len);
	return TIDE_FORWARD;
}

/* Both stages for one packet (tests, fuzzing, explain-like callers). */
static inline enum tide_verdict tide_pipeline(const struct tide_fwd_set *set,
					      const struct tide_encap_params *ep, uint32_t mtu,
					      uint8_t *frame, uint32_t len, uint32_t headroom,
					      struct tide_flow *f, struct tide_decision *d,
					      uint32_t *prepend, uint32_t *out_len)
{
	enum tide_verdict v = tide_pipeline_classify(set, frame, len, f, d);

	if (v != TIDE_FORWARD)
		return v;
	return tide_pipeline_finish(set, ep, mtu, frame, headroom, f, d, prepend, out_len);
}

#endif /* TIDE_PIPELINE_H */
