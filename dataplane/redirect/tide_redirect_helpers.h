/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the tide-redirect BPF program: counters, local address checks, the socket lookups
 * of the "second chance" decision, decapsulation and forwarding to the next hop.
 * Everything is __always_inline: one program, no BPF-to-BPF calls to reason about.
 */
#ifndef TIDE_REDIRECT_HELPERS_H
#define TIDE_REDIRECT_HELPERS_H

#include "tide_redirect_maps.h"

#ifndef TC_ACT_OK
#define TC_ACT_OK 0
#define TC_ACT_SHOT 2
#define TC_ACT_REDIRECT 7
#endif
#define TR_ETH_P_IP 0x0800
#define TR_ETH_P_IPV6 0x86dd
#define TR_AF_INET 2
#define TR_IPPROTO_TCP 6
#define TR_IPPROTO_UDP 17
#define TR_IPPROTO_ICMP 1
#define TR_IPPROTO_ICMPV6 58

/* How a GUE packet ends. Each maps to one counter; see tide_redirect.bpf.c for the order. */
enum tr_action {
	TR_ACCEPT, /* decapsulate, let the stack deliver the inner packet */
	TR_NEXT,   /* no local owner found: follow the hop list (steps 6 and 7) */
	TR_DROP,   /* malformed or truncated */
};

static __always_inline void tr_count(__u32 counter)
{
	__u64 *v = bpf_map_lookup_elem(&tide_redirect_stats, &counter);

	if (v)
		*v += 1; /* per-CPU slot: no atomic needed */
}

/*
 * Adds one to each VIP counter whose bit (1 << enum tide_redirect_vip_counter) is set in `mask`,
 * in the VIP's entry, created zeroed on its first packet. A full map evicts its least recently
 * used VIP; a failed insert (another CPU raced us to it) is followed by a lookup all the same.
 */
static __always_inline void tr_vip_count(const struct tide_redirect_vip_key *vip, __u32 mask)
{
	struct tide_redirect_vip_counters *v;

	v = bpf_map_lookup_elem(&tide_redirect_vips, vip);
	if (!v) {
		struct tide_redirect_vip_counters zero = {};

		bpf_map_update_elem(&tide_redirect_vips, vip, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&tide_redirect_vips, vip);
		if (!v)
			return;
	}
	for (__u32 i = 0; i < TR_VIP_COUNTER_COUNT; i++)
		if (mask & (1u << i))
			v->packets[i] += 1; /* per-CPU value: no atomic needed */
}

/* The key is complete (its family is set once address, port and protocol are). */
static __always_inline int tr_vip_known(const struct tide_redirect_vip_key *vip)
{
	return vip->family != 0;
}

/*
 * Records a packet of `flow` for each kind whose bit (1 << enum tide_redirect_flow_kind) is set
 * in `kinds`: packets + 1 and last_ns := now, in the flow's entry, created on its first such
 * packet with first_ns := now. Shared value: the add is atomic; two CPUs writing a timestamp at
 * once lose one of two near-equal times. A failed insert (another CPU raced us to it, or the LRU
 * had nothing to evict) is followed by a lookup all the same.
 */
static __always_inline void tr_flow_record(const struct tide_redirect_flow_key *flow, __u32 kinds)
{
	__u64 now = bpf_ktime_get_ns();
	struct tide_redirect_flow *f;

	f = bpf_map_lookup_elem(&tide_redirect_flows, flow);
	if (!f) {
		struct tide_redirect_flow fresh = {.first_ns = now};

		bpf_map_update_elem(&tide_redirect_flows, flow, &fresh, BPF_NOEXIST);
		f = bpf_map_lookup_elem(&tide_redirect_flows, flow);
		if (!f)
			return;
	}
	for (__u32 i = 0; i < TR_FLOW_KIND_COUNT; i++) {
		if (kinds & (1u << i)) {
			__sync_fetch_and_add(&f->kinds[i].packets, 1);
			f->kinds[i].last_ns = now;
		}
	}
}

/* A packet sent on to the next hop: forwarded_to_alternate, globally and for its VIP. */
static __always_inline void tr_count_forwarded(const struct tide_redirect_vip_key *vip)
{
	tr_count(TR_FORWARDED_TO_ALTERNATE);
	if (tr_vip_known(vip))
		tr_vip_count(vip, 1u << TR_VIP_FORWARDED_TO_ALTERNATE);
}

/*
 * A packet accepted with decision `verdict` (already counted): the "why" counters, its VIP's and
 * its flow's. A local socket owned its flow (established, SYN cookie, PMTU) and it arrived as a
 * hop (next_hop > 0): accepted_second_chance, and accepted_alternate_hash as well when it came
 * through the alternate pair (hop_count 3, next_hop >= 2). See tide_redirect_structs.h. An inner
 * TCP packet (its VIP known) that took a second chance or a last resort is recorded in the flow
 * map too; nothing else touches that map.
 */
static __always_inline void tr_count_accepted(int verdict, __u8 next_hop, __u8 hop_count,
					      const struct tide_redirect_flow_key *flow)
{
	__u32 mask = 0, kinds = 0;

	if (next_hop > 0 && (verdict == TR_ACCEPTED_ESTABLISHED ||
			     verdict == TR_ACCEPTED_SYN_COOKIE || verdict == TR_ACCEPTED_PMTU)) {
		tr_count(TR_ACCEPTED_SECOND_CHANCE);
		mask |= 1u << TR_VIP_ACCEPTED_SECOND_CHANCE;
		kinds |= 1u << TR_FLOW_SECOND_CHANCE;
		if (hop_count == TR_ALT_HASH_HOP_COUNT && next_hop >= TR_ALT_HASH_FIRST_HOP) {
			tr_count(TR_ACCEPTED_ALTERNATE_HASH);
			mask |= 1u << TR_VIP_ACCEPTED_ALTERNATE_HASH;
			kinds |= 1u << TR_FLOW_ALTERNATE_HASH;
		}
	}
	if (verdict == TR_ACCEPTED_ESTABLISHED) {
		mask |= 1u << TR_VIP_ACCEPTED_ESTABLISHED;
	} else if (verdict == TR_ACCEPTED_SYN) {
		mask |= 1u << TR_VIP_ACCEPTED_SYN;
	} else if (verdict == TR_ACCEPTED_LAST_RESORT) {
		mask |= 1u << TR_VIP_ACCEPTED_LAST_RESORT;
		kinds |= 1u << TR_FLOW_LAST_RESORT;
	}
	if (mask && tr_vip_known(&flow->vip)) {
		tr_vip_count(&flow->vip, mask);
		if (kinds)
			tr_flow_record(flow, kinds);
	}
}

static __always_inline int tr_is_local(const struct tide_redirect_config *cfg, __u32 addr)
{
	for (__u32 i = 0; i < TIDE_REDIRECT_MAX_LOCAL; i++) {
		if (i >= cfg->num_local)
			break;
		if (cfg->local_addrs[i] == addr)
			return 1;
	}
	return 0;
}

/*
 * Is there a local TCP socket for this tuple (client -> VIP as the client sends it)? Anything but
 * a listener counts: established, a SYN-RECV request socket or TIME-WAIT. With a listener and a
 * pure ACK, checks whether the ACK carries a valid SYN cookie of that listener.
 * Returns the counter to account the packet to, or -1 when no local socket owns the flow.
 */
static __always_inline int tr_tcp_owner(struct __sk_buff *skb, struct bpf_sock_tuple *tuple,
					__u32 tuple_len, void *iph, __u32 iph_len,
					struct tcphdr *th, __u32 th_len, int check_cookie)
{
	struct bpf_sock *sk = bpf_skc_lookup_tcp(skb, tuple, tuple_len, BPF_F_CURRENT_NETNS, 0);
	int owner = -1;

	if (!sk)
		return -1;
	if (sk->state != BPF_TCP_LISTEN) {
		owner = TR_ACCEPTED_ESTABLISHED;
	} else if (check_cookie && th) {
		/*
		 * The caller checked th_len, but newer clang (19, Debian 13) tests the doff byte instead
		 * and hands over a copy whose lower bound the verifier never saw, which it refuses for
		 * a helper length (may be 0). Bound it here, on the register the call takes, one
		 * comparison at a time: the barriers keep clang from folding them into the caller's or
		 * into one range test on a derived value ((len - 20) <= 40), which bounds no register.
		 */
		__u64 len = th_len; /* 64-bit: no zero-extended copy between check and call */

		barrier_var(len);
		if (len >= TR_TCP_HLEN) {
			barrier_var(len);
			if (len <= TR_TCP_MAX_HLEN &&
			    bpf_tcp_check_syncookie(sk, iph, iph_len, th, len) == 0)
				owner = TR_ACCEPTED_SYN_COOKIE;
		}
	}
	bpf_sk_release(sk);
	return owner;
}

/*
 * Removes outer IPv4 + UDP + GUE + hops (inner_off - Ethernet bytes) right after the Ethernet
 * header and makes the frame carry the inner packet: the DECAP_L3 flag sets skb->protocol (kernel
 * >= 6.3), the Ethernet type is rewritten here. Returns 0 or -errno.
 */
static __always_inline int tr_decap(struct __sk_buff *skb, __u32 inner_off, int inner_v6)
{
	__u64 flags = inner_v6 ? BPF_F_ADJ_ROOM_DECAP_L3_IPV6 : BPF_F_ADJ_ROOM_DECAP_L3_IPV4;
	__be16 h_proto = bpf_htons(inner_v6 ? TR_ETH_P_IPV6 : TR_ETH_P_IP);
	__s32 len = (__s32)inner_off - TR_ETH_HLEN;
	long rc;

	rc = bpf_skb_adjust_room(skb, -len, BPF_ADJ_ROOM_MAC, flags);
	if (rc)
		return (int)rc;
	return (int)bpf_skb_store_bytes(skb, offsetof(struct ethhdr, h_proto), &h_proto,
					sizeof(h_proto), 0);
}

/*
 * Sends the packet to the next hop: outer source := the local address it was sent to, outer
 * destination := hop, next_hop + 1. The IPv4 header checksum and the UDP checksum (pseudo header
 * addresses and the {next_hop, hop_count} word) are updated incrementally, so the packet stays
 * valid end to end without summing the payload. The route and the MACs come from the FIB as an
 * output lookup on this interface (the packet is re-sourced by this host, not routed through it,
 * so IP forwarding need not be enabled). `vip` is the inner flow's VIP, for its counters. Returns
 * the TC verdict.
 */
static __always_inline int tr_forward(struct __sk_buff *skb, __u32 old_src, __u32 local, __u32 hop,
				      __u8 next_hop, __u8 hop_count, __u8 tos, __u16 tot_len,
				      const struct tide_redirect_vip_key *vip)
{
	const __u32 ip_csum = TR_ETH_HLEN + offsetof(struct iphdr, check);
	const __u32 udp_csum = TR_UDP_OFF + offsetof(struct udphdr, check);
	const __u64 l4f = BPF_F_PSEUDO_HDR | BPF_F_MARK_MANGLED_0;
	__be16 old_word = bpf_htons((__u16)next_hop << 8 | hop_count);
	__be16 new_word = bpf_htons((__u16)(next_hop + 1) << 8 | hop_count);
	struct bpf_fib_lookup fib = {};
	__u8 nh = next_hop + 1;
	long rc;

	/* The old destination is `local`: it becomes the source. */
	if (bpf_skb_store_bytes(skb, TR_ETH_HLEN + offsetof(struct iphdr, saddr), &local, 4, 0) ||
	    bpf_skb_store_bytes(skb, TR_ETH_HLEN + offsetof(struct iphdr, daddr), &hop, 4, 0) ||
	    bpf_skb_store_bytes(skb, TR_GUE_OFF + 6, &nh, 1, 0))
		goto fail;
	if (bpf_l3_csum_replace(skb, ip_csum, old_src, local, 4) ||
	    bpf_l3_csum_replace(skb, ip_csum, local, hop, 4) ||
	    bpf_l4_csum_replace(skb, udp_csum, old_src, local, l4f | 4) ||
	    bpf_l4_csum_replace(skb, udp_csum, local, hop, l4f | 4) ||
	    bpf_l4_csum_replace(skb, udp_csum, old_word, new_word, BPF_F_MARK_MANGLED_0 | 2))
		goto fail;

	fib.family = TR_AF_INET;
	fib.tos = tos;
	fib.l4_protocol = TR_IPPROTO_UDP;
	fib.tot_len = tot_len;
	fib.ipv4_src = local;
	fib.ipv4_dst = hop;
	fib.ifindex = skb->ifindex;
	rc = bpf_fib_lookup(skb, &fib, sizeof(fib), BPF_FIB_LOOKUP_OUTPUT);
	if (rc == BPF_FIB_LKUP_RET_SUCCESS) {
		if (bpf_skb_store_bytes(skb, offsetof(struct ethhdr, h_dest), fib.dmac, 6, 0) ||
		    bpf_skb_store_bytes(skb, offsetof(struct ethhdr, h_source), fib.smac, 6, 0))
			goto fail;
		tr_count_forwarded(vip);
		return (int)bpf_redirect(fib.ifindex, 0);
	}
	if (rc == BPF_FIB_LKUP_RET_NO_NEIGH) {
		/* Route known, neighbour not resolved yet: let the kernel resolve it and send. */
		struct bpf_redir_neigh neigh;

		/*
		 * Every byte written: an initializer leaves the union's other 12 bytes (ipv6_nh)
		 * unset, and without CAP_PERFMON the verifier refuses to pass them to the helper.
		 */
		__builtin_memset(&neigh, 0, sizeof(neigh));
		neigh.nh_family = TR_AF_INET;
		neigh.ipv4_nh = fib.ipv4_dst;
		tr_count_forwarded(vip);
		return (int)bpf_redirect_neigh(fib.ifindex, &neigh, sizeof(neigh), 0);
	}
	if (rc == BPF_FIB_LKUP_RET_FWD_DISABLED) {
		/*
		 * bpf_fib_lookup insists on IP forwarding being enabled on the interface even for
		 * an output lookup. Without it, bpf_redirect_neigh does its own output route
		 * and neighbour lookup out of this interface (slower; an unroutable hop is then
		 * dropped by the kernel after this program, not counted as forward_failed).
		 */
		tr_count_forwarded(vip);
		return (int)bpf_redirect_neigh(skb->ifindex, NULL, 0, 0);
	}
fail:
	tr_count(TR_FORWARD_FAILED);
	return TC_ACT_SHOT;
}

#endif /* TIDE_REDIRECT_HELPERS_H */
