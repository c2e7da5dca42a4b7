// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * tide-redirect: the proxy-side "second chance" of GLB-style load balancing, on TC clsact ingress
 * of the proxy's interface (direct action).
 *
 * A packet is GUE when it is IPv4 without options or fragmentation, UDP to the configured port,
 * and addressed to one of this host's configured addresses; anything else passes untouched
 * (not_gue). A GUE packet is decided in this order (glb-redirect's):
 *   1. malformed or truncated GUE/inner headers                      -> drop
 *   2. inner UDP, inner ICMP other than frag-needed/packet-too-big   -> accept (health probes too)
 *   3. inner TCP SYN without ACK                                     -> accept (new flows stay)
 *   4. a local TCP socket other than a listener owns the inner flow  -> accept
 *      (ICMP frag-needed/packet-too-big: the embedded flow, reversed)
 *   5. a pure ACK carrying a valid SYN cookie of a local listener    -> accept
 *   6. next_hop >= hop_count                                         -> accept (last resort:
 *      the kernel answers with a reset)
 *   7. hops[next_hop] is local -> accept (forwarded_to_self, as glb does); otherwise rewrite the
 *      outer header towards hops[next_hop] and send it out (forwarded_to_alternate).
 * "Accept" decapsulates here (the kernel has no fou/GUE) and lets the stack deliver the inner
 * packet to the VIP configured on a local interface; replies go straight to the client (DSR).
 *
 * Besides its one decision counter, a packet a local socket owns that arrived as a hop counts in
 * accepted_second_chance (and accepted_alternate_hash when it came through the alternate pair of
 * a hash-field migration), and the TCP packets of steps 3, 4, 6 and 7 count for their VIP (inner
 * destination address, port, protocol) in the VIP map. Cost: one hash lookup on those packets
 * (two more on a VIP's first packet), nothing on the others; see tide_redirect_helpers.h. The
 * inner TCP packets that took a second chance or a last resort are also recorded by flow (client
 * and VIP address and port) in the flow map, for the change report: one more lookup on those
 * (two more on a flow's first), nothing on a primary hit, a SYN or a forwarded packet.
 */
#include "vmlinux.h"

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "tide_redirect_helpers.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/*
 * Steps 2 to 5 for a TCP/UDP/ICMP packet whose L4 header starts at l4 and whose IP packet ends
 * at l4_end. `tuple` already holds the addresses (client -> VIP); iph is the inner IP header.
 * A TCP packet completes `flow` (the caller wrote the addresses) with its ports and protocol.
 */
static __always_inline int tr_decide_l4(struct __sk_buff *skb, __u8 proto, __u32 l4, __u32 l4_end,
					struct bpf_sock_tuple *tuple, __u32 tuple_len, void *iph,
					__u32 iph_len, int v6, struct tide_redirect_flow_key *flow)
{
	/*
	 * Zeroed: the options load below has a variable length, and without CAP_PERFMON (which the
	 * unit does not grant) the verifier refuses a variable-length helper access to stack bytes
	 * that were never written ("invalid read from stack"). 40 bytes of stores per TCP packet.
	 */
	__u8 th[TR_TCP_MAX_HLEN] = {};
	__u32 th_len;
	__u8 flags;

	if (proto == TR_IPPROTO_UDP)
		return l4 + TR_UDP_HLEN > l4_end ? TR_DROPPED_TRUNCATED : TR_ACCEPTED_UDP;
	if (proto != TR_IPPROTO_TCP)
		return -1; /* other protocols: no flow to look up, follow the hops */
	if (l4 + TR_TCP_HLEN > l4_end || bpf_skb_load_bytes(skb, l4, th, TR_TCP_HLEN))
		return TR_DROPPED_TRUNCATED;
	__builtin_memcpy(&flow->client_port, th, 2);  /* source port, network order */
	__builtin_memcpy(&flow->vip.port, th + 2, 2); /* destination port, network order */
	flow->vip.proto = TR_IPPROTO_TCP;
	flow->vip.family = v6 ? TR_VIP_FAMILY_IPV6 : TR_VIP_FAMILY_IPV4;
	th_len = (__u32)(th[12] >> 4) * 4;
	if (th_len < TR_TCP_HLEN)
		return TR_DROPPED_MALFORMED;
	if (l4 + th_len > l4_end)
		return TR_DROPPED_TRUNCATED;
	flags = th[13];
	if ((flags & (TR_TCP_SYN | TR_TCP_ACK)) == TR_TCP_SYN)
		return TR_ACCEPTED_SYN;
	if (th_len > TR_TCP_HLEN && th_len <= TR_TCP_MAX_HLEN &&
	    bpf_skb_load_bytes(skb, l4, th, th_len))
		return TR_DROPPED_TRUNCATED;
	if (v6) {
		__builtin_memcpy(&tuple->ipv6.sport, th, 4); /* source and destination ports */
	} else {
		__builtin_memcpy(&tuple->ipv4.sport, th, 4);
	}
	return tr_tcp_owner(skb, tuple, tuple_len, iph, iph_len, (struct tcphdr *)th, th_len,
			    (flags & (TR_TCP_ACK | TR_TCP_SYN | TR_TCP_RST | TR_TCP_FIN)) ==
				    TR_TCP_ACK);
}

/*
 * ICMP frag-needed / packet-too-big: the embedded header is a packet this host sent
 * (VIP:vport -> client:cport); the owner is the local socket of the reversed flow. Only the
 * first 8 L4 bytes of the embedded packet are guaranteed (RFC 792), enough for the ports. A TCP
 * flow (the embedded one, reversed: client -> VIP) is written to `flow`.
 */
static __always_inline int tr_decide_pmtu(struct __sk_buff *skb, __u32 emb, __u32 l4_end, int v6,
					  struct tide_redirect_flow_key *flow)
{
	struct bpf_sock_tuple tuple = {};
	__u8 hdr[TR_IPV6_HLEN];
	__u32 emb_l4, tuple_len;
	__be16 ports[2];
	__u8 proto;

	if (v6) {
		if (emb + TR_IPV6_HLEN > l4_end || bpf_skb_load_bytes(skb, emb, hdr, TR_IPV6_HLEN))
			return TR_DROPPED_TRUNCATED;
		if (hdr[0] >> 4 != 6)
			return TR_DROPPED_MALFORMED;
		proto = hdr[6];
		emb_l4 = emb + TR_IPV6_HLEN;
		__builtin_memcpy(tuple.ipv6.saddr, hdr + 24, 16); /* client: embedded destination */
		__builtin_memcpy(tuple.ipv6.daddr, hdr + 8, 16);
		tuple_len = sizeof(tuple.ipv6);
	} else {
		if (emb + TR_IPV4_HLEN > l4_end || bpf_skb_load_bytes(skb, emb, hdr, TR_IPV4_HLEN))
			return TR_DROPPED_TRUNCATED;
		if (hdr[0] >> 4 != 4 || (hdr[0] & 0xf) < 5)
			return TR_DROPPED_MALFORMED;
		proto = hdr[9];
		emb_l4 = emb + (__u32)(hdr[0] & 0xf) * 4;
		__builtin_memcpy(&tuple.ipv4.saddr, hdr + 16, 4);
		__builtin_memcpy(&tuple.ipv4.daddr, hdr + 12, 4);
		tuple_len = sizeof(tuple.ipv4);
	}
	/* UDP flows are always accepted by the first hop (step 2), so the PMTU message is ours. */
	if (proto == TR_IPPROTO_UDP)
		return TR_ACCEPTED_PMTU;
	if (proto != TR_IPPROTO_TCP)
		return -1;
	if (emb_l4 + 4 > l4_end || bpf_skb_load_bytes(skb, emb_l4, ports, 4))
		return TR_DROPPED_TRUNCATED;
	if (v6) {
		tuple.ipv6.sport = ports[1];
		tuple.ipv6.dport = ports[0];
		__builtin_memcpy(flow->vip.addr, hdr + 8, 16);
		__builtin_memcpy(flow->client_addr, hdr + 24, 16);
	} else {
		tuple.ipv4.sport = ports[1];
		tuple.ipv4.dport = ports[0];
		__builtin_memcpy(flow->vip.addr, hdr + 12, 4);
		__builtin_memcpy(flow->client_addr, hdr + 16, 4);
	}
	flow->client_port = ports[1];
	flow->vip.port = ports[0];
	flow->vip.proto = TR_IPPROTO_TCP;
	flow->vip.family = v6 ? TR_VIP_FAMILY_IPV6 : TR_VIP_FAMILY_IPV4;
	return tr_tcp_owner(skb, &tuple, tuple_len, NULL, 0, NULL, 0, 0) >= 0 ? TR_ACCEPTED_PMTU
									      : -1;
}

/*
 * Steps 1 (inner part) to 5 for an inner IPv4 packet at `off`; `end` is where the GUE ends. The
 * inner TCP flow (client and VIP) is written to `flow` (zeroed by the caller; left incomplete,
 * its family 0, otherwise).
 */
static __always_inline int tr_decide_v4(struct __sk_buff *skb, __u32 off, __u32 end,
					struct tide_redirect_flow_key *flow)
{
	struct bpf_sock_tuple tuple = {};
	__u8 icmp[TR_ICMP_HLEN];
	struct iphdr iph;
	__u32 ihl, tot, l4, l4_end;

	if (off + TR_IPV4_HLEN > end || bpf_skb_load_bytes(skb, off, &iph, TR_IPV4_HLEN))
		return TR_DROPPED_TRUNCATED;
	if (iph.version != 4 || iph.ihl < 5)
		return TR_DROPPED_MALFORMED;
	ihl = (__u32)iph.ihl * 4;
	tot = bpf_ntohs(iph.tot_len);
	if (tot < ihl)
		return TR_DROPPED_MALFORMED;
	if (off + tot > end)
		return TR_DROPPED_TRUNCATED;
	if (iph.frag_off & bpf_htons(0x1fff))
		return -1; /* a later fragment has no L4 header (the director sends none anyway) */
	l4 = off + ihl;
	l4_end = off + tot;
	if (iph.protocol == TR_IPPROTO_ICMP) {
		if (l4 + TR_ICMP_HLEN > l4_end || bpf_skb_load_bytes(skb, l4, icmp, TR_ICMP_HLEN))
			return TR_DROPPED_TRUNCATED;
		if (icmp[0] != TR_ICMP_DEST_UNREACH || icmp[1] != TR_ICMP_FRAG_NEEDED)
			return TR_ACCEPTED_ICMP;
		return tr_decide_pmtu(skb, l4 + TR_ICMP_HLEN, l4_end, 0, flow);
	}
	tuple.ipv4.saddr = iph.saddr;
	tuple.ipv4.daddr = iph.daddr;
	__builtin_memcpy(flow->vip.addr, &iph.daddr, 4);
	__builtin_memcpy(flow->client_addr, &iph.saddr, 4);
	return tr_decide_l4(skb, iph.protocol, l4, l4_end, &tuple, sizeof(tuple.ipv4), &iph,
			    TR_IPV4_HLEN, 0, flow);
}

/* The same for an inner IPv6 packet; extension headers are not walked (the director sends none). */
static __always_inline int tr_decide_v6(struct __sk_buff *skb, __u32 off, __u32 end,
					struct tide_redirect_flow_key *flow)
{
	struct bpf_sock_tuple tuple = {};
	__u8 ip6[TR_IPV6_HLEN];
	__u8 icmp[TR_ICMP_HLEN];
	__u32 l4, l4_end;

	if (off + TR_IPV6_HLEN > end || bpf_skb_load_bytes(skb, off, ip6, TR_IPV6_HLEN))
		return TR_DROPPED_TRUNCATED;
	if (ip6[0] >> 4 != 6)
		return TR_DROPPED_MALFORMED;
	l4 = off + TR_IPV6_HLEN;
	l4_end = l4 + ((__u32)ip6[4] << 8 | ip6[5]);
	if (l4_end > end)
		return TR_DROPPED_TRUNCATED;
	if (ip6[6] == TR_IPPROTO_ICMPV6) {
		if (l4 + TR_ICMP_HLEN > l4_end || bpf_skb_load_bytes(skb, l4, icmp, TR_ICMP_HLEN))
			return TR_DROPPED_TRUNCATED;
		if (icmp[0] != TR_ICMPV6_PACKET_TOO_BIG)
			return TR_ACCEPTED_ICMP;
		return tr_decide_pmtu(skb, l4 + TR_ICMP_HLEN, l4_end, 1, flow);
	}
	__builtin_memcpy(tuple.ipv6.saddr, ip6 + 8, 16);
	__builtin_memcpy(tuple.ipv6.daddr, ip6 + 24, 16);
	__builtin_memcpy(flow->vip.addr, ip6 + 24, 16);
	__builtin_memcpy(flow->client_addr, ip6 + 8, 16);
	return tr_decide_l4(skb, ip6[6], l4, l4_end, &tuple, sizeof(tuple.ipv6), ip6, TR_IPV6_HLEN,
			    1, flow);
}

SEC("tc")
int tide_redirect(struct __sk_buff *skb)
{
	const __u32 zero = 0;
	const struct tide_redirect_config *cfg;
	struct tide_redirect_flow_key flow = {};
	void *data, *data_end;
	struct ethhdr *eth;
	struct iphdr *ip;
	struct udphdr *udp;
	__u32 saddr, daddr, hop, end, inner_off;
	__u16 tot_len, udp_len;
	__u8 gue[TR_GUE_BASE_HLEN + TR_GLB_PRIV_HLEN];
	__u8 tos, next_hop, hop_count;
	int verdict;

	cfg = bpf_map_lookup_elem(&tide_redirect_config, &zero);
	if (!cfg)
		return TC_ACT_OK;
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	eth = data;
	if ((void *)(eth + 1) > data_end || eth->h_proto != bpf_htons(TR_ETH_P_IP))
		goto not_gue;
	if (data + TR_GUE_OFF > data_end) {
		/* Outer headers not all in the linear area: pull them, then look again. */
		if (skb->len < TR_GUE_OFF || bpf_skb_pull_data(skb, TR_GUE_OFF))
			goto not_gue;
		data = (void *)(long)skb->data;
		data_end = (void *)(long)skb->data_end;
		if (data + TR_GUE_OFF > data_end)
			goto not_gue;
	}
	ip = data + TR_ETH_HLEN;
	udp = data + TR_UDP_OFF;
	if (ip->version != 4 || ip->ihl != 5 || ip->protocol != TR_IPPROTO_UDP ||
	    (ip->frag_off & bpf_htons(TR_IP_FRAG_MASK)))
		goto not_gue;
	if (udp->dest != bpf_htons(cfg->port) || !tr_is_local(cfg, ip->daddr))
		goto not_gue;

	tr_count(TR_TOTAL);
	saddr = ip->saddr;
	daddr = ip->daddr;
	tos = ip->tos;
	tot_len = bpf_ntohs(ip->tot_len);
	udp_len = bpf_ntohs(udp->len);
	if (tot_len < TR_IPV4_HLEN + TR_UDP_HLEN || udp_len < TR_UDP_HLEN)
		goto malformed;
	if (TR_ETH_HLEN + (__u32)tot_len > skb->len || udp_len > tot_len - TR_IPV4_HLEN)
		goto truncated;
	/* The UDP length bounds the GUE payload (anything after it is Ethernet padding). */
	end = TR_UDP_OFF + (__u32)udp_len;
	if (TR_HOPS_OFF > end || bpf_skb_load_bytes(skb, TR_GUE_OFF, gue, sizeof(gue)))
		goto truncated;
	next_hop = gue[6];
	hop_count = gue[7];
	if ((gue[0] >> TR_GUE_VERSION_SHIFT) != 0 || (gue[0] & TR_GUE_C_BIT) ||
	    (gue[0] & TR_GUE_HLEN_MASK) != hop_count + 1 ||
	    (gue[1] != TR_GUE_PROTO_IPV4 && gue[1] != TR_GUE_PROTO_IPV6) || gue[4] || gue[5])
		goto malformed;
	/* hlen is 5 bits, so hop_count <= TIDE_REDIRECT_MAX_HOPS here. */
	inner_off = TR_HOPS_OFF + 4 * (__u32)hop_count;
	if (inner_off > end)
		goto truncated;

	if (gue[1] == TR_GUE_PROTO_IPV4)
		verdict = tr_decide_v4(skb, inner_off, end, &flow);
	else
		verdict = tr_decide_v6(skb, inner_off, end, &flow);
	if (verdict == TR_DROPPED_MALFORMED)
		goto malformed;
	if (verdict == TR_DROPPED_TRUNCATED)
		goto truncated;
	if (verdict >= 0)
		goto accept;

	/* 6: the hop list is used up: this is the last proxy that can take the packet. */
	if (next_hop >= hop_count) {
		verdict = TR_ACCEPTED_LAST_RESORT;
		goto accept;
	}
	if (bpf_skb_load_bytes(skb, TR_HOPS_OFF + 4 * (__u32)(next_hop & 0x1f), &hop, 4))
		goto truncated;
	/* 7: the next hop is this host again (two of its addresses in the row): keep it here. */
	if (tr_is_local(cfg, hop)) {
		verdict = TR_FORWARDED_TO_SELF;
		goto accept;
	}
	return tr_forward(skb, saddr, daddr, hop, next_hop, hop_count, tos, tot_len, &flow.vip);

accept:
	if (tr_decap(skb, inner_off, gue[1] == TR_GUE_PROTO_IPV6)) {
		tr_count(TR_DECAP_FAILED);
		return TC_ACT_SHOT;
	}
	tr_count((__u32)verdict);
	tr_count_accepted(verdict, next_hop, hop_count, &flow);
	return TC_ACT_OK;
malformed:
	tr_count(TR_DROPPED_MALFORMED);
	return TC_ACT_SHOT;
truncated:
	tr_count(TR_DROPPED_TRUNCATED);
	return TC_ACT_SHOT;
not_gue:
	tr_count(TR_NOT_GUE);
	return TC_ACT_OK;
}
