/* SPDX-License-Identifier: MIT */
/* The maps of the tide-redirect BPF program. */
#ifndef TIDE_REDIRECT_MAPS_H
#define TIDE_REDIRECT_MAPS_H

#include "tide_redirect_structs.h"

/*
 * Configuration written by the daemon (at start and by the control socket's `config`): GUE port
 * and this host's IPv4 addresses. One entry, key 0. An array so a lookup never fails once the
 * map exists; a zeroed entry (port 0, no address) makes every packet "not GUE".
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tide_redirect_config);
} tide_redirect_config SEC(".maps");

/*
 * Packet counters by decision (enum tide_redirect_counter), per CPU so the packet path never
 * shares a cache line; user space sums the CPUs. Packets, not bytes.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TR_COUNTER_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} tide_redirect_stats SEC(".maps");

#endif /* TIDE_REDIRECT_MAPS_H */
