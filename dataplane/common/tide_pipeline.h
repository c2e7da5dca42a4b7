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
 * `frame` holds an Ethernet frame of `len` bytes with at least `headroom` writable bytes in
 * front of it. On TIDE_FORWARD the GUE frame starts at frame - *prepend and is *out_len bytes
 * (Ethernet padding after the inner IP packet is dropped). On a drop nothing is written.
 * `mtu` is the largest outer IP packet the director may send.
 */
static inline enum tide_verdict tide_pipeline(const struct tide_fwd_set *set,
					      const struct tide_hash_config *cfg,
					      const struct tide_encap_params *ep, uint32_t mtu,
					      uint8_t *frame, uint32_t len, uint32_t headroom,
					      struct tide_flow *f, struct tide_decision *d,
					      uint32_t *prepend, uint32_t *out_len)
{
	enum tide_verdict v;
	uint32_t overhead;

	if (len < TIDE_ETH_HLEN)
		return TIDE_DROP_TRUNCATED;
	v = tide_parse((uint16_t)(frame[12] << 8 | frame[13]), frame + TIDE_ETH_HLEN,
		       len - TIDE_ETH_HLEN, f);
	if (v != TIDE_FORWARD)
		return v;
	if (!set)
		return TIDE_DROP_NO_TABLE;
	v = tide_fwd_decide(set, cfg, f, d);
	if (v != TIDE_FORWARD)
		return v;
	if (tide_gue_outer_ip_len(d->hop_count, f->l3_len) > mtu)
		return TIDE_DROP_TOO_BIG;
	overhead = tide_gue_overhead(d->hop_count);
	if (overhead - TIDE_ETH_HLEN > headroom)
		return TIDE_DROP_TOO_BIG; /* cannot happen with DPDK's 128-byte headroom */
	*prepend = overhead - TIDE_ETH_HLEN;
	*out_len = overhead + f->l3_len;
	tide_gue_encap(frame - *prepend, ep, d, f->family, f->tos, f->l3_len);
	return TIDE_FORWARD;
}

#endif /* TIDE_PIPELINE_H */
