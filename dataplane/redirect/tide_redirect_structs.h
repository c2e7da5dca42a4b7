/* SPDX-License-Identifier: MIT */
/*
 * Structures shared by the BPF program and user space (daemon, tests): the config map value,
 * the counter indexes of the stats map, the keys and values of the VIP and flow maps. Types are the kernel's __u32/__u16/__u64 (vmlinux.h in
 * BPF, <linux/types.h> in user space).
 */
#ifndef TIDE_REDIRECT_STRUCTS_H
#define TIDE_REDIRECT_STRUCTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "tide_redirect_consts.h"

/* The one entry of the config map. */
struct tide_redirect_config {
	__u32 local_addrs[TIDE_REDIRECT_MAX_LOCAL]; /* IPv4, network order; first num_local used */
	__u32 num_local;			    /* 0..TIDE_REDIRECT_MAX_LOCAL */
	__u16 port;				    /* GUE UDP destination port, host order */
	__u16 reserved;
};

/*
 * Counters, one slot each in the per-CPU stats map. X(enum suffix, JSON name). Every GUE packet
 * counts in total and in exactly one accepted_*, forwarded_*, dropped_*, forward_failed or
 * decap_failed slot (the decision slots: total is their sum); not_gue counts what passed through
 * untouched and is not part of total.
 *
 * The last two are not decision slots but "why" counters, counted on top of the packet's decision
 * (so they are left out of that sum): a packet a local socket owns (accepted_established,
 * accepted_syn_cookie or accepted_pmtu) that arrived as a hop (next_hop > 0), i.e. accepted here
 * for a flow whose first hop was another proxy, counts in accepted_second_chance; one of those
 * that came through the alternate pair of a hash-field migration (hop_count 3, next_hop >= 2:
 * hops [secondary, alt_primary, alt_secondary]) also counts in accepted_alternate_hash, a subset.
 * They are appended last so the decision slots keep their indexes.
 */
#define TIDE_REDIRECT_COUNTERS(X)                         \
	X(TOTAL, total)                                   \
	X(ACCEPTED_SYN, accepted_syn)                     \
	X(ACCEPTED_ESTABLISHED, accepted_established)     \
	X(ACCEPTED_SYN_COOKIE, accepted_syn_cookie)       \
	X(ACCEPTED_LAST_RESORT, accepted_last_resort)     \
	X(ACCEPTED_UDP, accepted_udp)                     \
	X(ACCEPTED_ICMP, accepted_icmp)                   \
	X(ACCEPTED_PMTU, accepted_pmtu)                   \
	X(FORWARDED_TO_SELF, forwarded_to_self)           \
	X(FORWARDED_TO_ALTERNATE, forwarded_to_alternate) \
	X(NOT_GUE, not_gue)                               \
	X(DROPPED_MALFORMED, dropped_malformed)           \
	X(DROPPED_TRUNCATED, dropped_truncated)           \
	X(FORWARD_FAILED, forward_failed)                 \
	X(DECAP_FAILED, decap_failed)                     \
	X(ACCEPTED_SECOND_CHANCE, accepted_second_chance) \
	X(ACCEPTED_ALTERNATE_HASH, accepted_alternate_hash)

enum tide_redirect_counter {
#define TR_COUNTER_ENUM(id, name) TR_##id,
	TIDE_REDIRECT_COUNTERS(TR_COUNTER_ENUM)
#undef TR_COUNTER_ENUM
		TR_COUNTER_COUNT
};

/* The first "why" counter: slots before it are decision slots (and total, and not_gue). */
#define TR_FIRST_WHY_COUNTER TR_ACCEPTED_SECOND_CHANCE

/*
 * Per-VIP counters, one value of the VIP map per inner destination (address, port, protocol).
 * X(enum suffix, JSON name); each counts the packets of the global counter of the same name that
 * were for this VIP. Only inner TCP is counted per VIP (a PMTU message by the flow it quotes): UDP
 * and ICMP are always accepted by the first hop and never take a second chance.
 */
#define TIDE_REDIRECT_VIP_COUNTERS(X)                       \
	X(FORWARDED_TO_ALTERNATE, forwarded_to_alternate)   \
	X(ACCEPTED_SECOND_CHANCE, accepted_second_chance)   \
	X(ACCEPTED_ALTERNATE_HASH, accepted_alternate_hash) \
	X(ACCEPTED_LAST_RESORT, accepted_last_resort)       \
	X(ACCEPTED_ESTABLISHED, accepted_established)       \
	X(ACCEPTED_SYN, accepted_syn)

enum tide_redirect_vip_counter {
#define TR_VIP_COUNTER_ENUM(id, name) TR_VIP_##id,
	TIDE_REDIRECT_VIP_COUNTERS(TR_VIP_COUNTER_ENUM)
#undef TR_VIP_COUNTER_ENUM
		TR_VIP_COUNTER_COUNT
};

/* Address family of a VIP key (the inner packet's IP version). */
#define TR_VIP_FAMILY_IPV4 4
#define TR_VIP_FAMILY_IPV6 6

/*
 * Key of the VIP map: the inner packet's destination as the client sent it. 20 bytes, no padding
 * (the whole struct is hashed, so every byte is written before a lookup).
 */
struct tide_redirect_vip_key {
	__u8 addr[16]; /* IPv6, or IPv4 in the first 4 bytes and zeros after; network order */
	__u16 port;    /* destination port, network order */
	__u8 proto;    /* IP protocol number (6: TCP) */
	__u8 family;   /* TR_VIP_FAMILY_IPV4 or TR_VIP_FAMILY_IPV6 */
};

/* Value of the VIP map (per CPU): packets by enum tide_redirect_vip_counter. */
struct tide_redirect_vip_counters {
	__u64 packets[TR_VIP_COUNTER_COUNT];
};

/*
 * Key of the flow map: an inner TCP flow as the client sends it. The VIP key comes first, so the
 * program fills one struct and hands its head to the VIP map. 38 bytes, no padding (the whole
 * struct is hashed, so every byte is written before a lookup).
 */
struct tide_redirect_flow_key {
	struct tide_redirect_vip_key vip; /* destination address, port, proto 6, family */
	__u8 client_addr[16]; /* source: IPv6, or IPv4 in the first 4 bytes; network order */
	__u16 client_port;    /* source port, network order */
};
_Static_assert(sizeof(struct tide_redirect_flow_key) == 38, "flow key without padding");

/*
 * What a flow's packets took, one slot each in the flow map's value. X(enum suffix, JSON name).
 * second_chance: accepted here as a hop because a local socket owns the flow (the packets of
 * accepted_second_chance); alternate_hash: of those, through the alternate pair of a hash-field
 * migration (accepted_alternate_hash); last_resort: no owner and no hop left
 * (accepted_last_resort; the kernel resets the connection).
 */
#define TIDE_REDIRECT_FLOW_KINDS(X)       \
	X(SECOND_CHANCE, second_chance)   \
	X(ALTERNATE_HASH, alternate_hash) \
	X(LAST_RESORT, last_resort)

enum tide_redirect_flow_kind {
#define TR_FLOW_KIND_ENUM(id, name) TR_FLOW_##id,
	TIDE_REDIRECT_FLOW_KINDS(TR_FLOW_KIND_ENUM)
#undef TR_FLOW_KIND_ENUM
		TR_FLOW_KIND_COUNT
};

/* One kind of a flow: how many of its packets, and when the last one was (0: never). */
struct tide_redirect_flow_kind_seen {
	__u64 packets;
	__u64 last_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC, ns */
};

/*
 * Value of the flow map (shared by all CPUs: packets are added atomically, a timestamp written
 * by two CPUs at once keeps either, a few ns apart). A kind's own last_ns tells a 5-tuple reused
 * by a later connection from the old one: the old kinds keep their old time.
 */
struct tide_redirect_flow {
	__u64 first_ns; /* bpf_ktime_get_ns() of the first recorded packet */
	struct tide_redirect_flow_kind_seen kinds[TR_FLOW_KIND_COUNT];
};

#endif /* TIDE_REDIRECT_STRUCTS_H */
