/* SPDX-License-Identifier: MIT */
/*
 * Structures shared by the BPF program and user space (daemon, tests): the config map value and
 * the counter indexes of the stats map. Types are the kernel's __u32/__u16/__u64 (vmlinux.h in
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
 * decap_failed slot;
 * not_gue counts what passed through untouched and is not part of total.
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
	X(DECAP_FAILED, decap_failed)

enum tide_redirect_counter {
#define TR_COUNTER_ENUM(id, name) TR_##id,
	TIDE_REDIRECT_COUNTERS(TR_COUNTER_ENUM)
#undef TR_COUNTER_ENUM
		TR_COUNTER_COUNT
};

#endif /* TIDE_REDIRECT_STRUCTS_H */
