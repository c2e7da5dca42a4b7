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

/*
 * Packet counters per VIP (inner destination address, port, protocol; struct
 * tide_redirect_vip_key) for the decisions a page of a pool needs by VIP: how many packets of its
 * flows took a second chance, went through the alternate hash, were a last resort, or were new
 * or established here. A proxy in two pools is told apart by the pools' VIPs. LRU so a flood of
 * destinations cannot fill it for good; per CPU so the packet path never shares a cache line.
 * Packets, not bytes; user space sums the CPUs.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, TIDE_REDIRECT_MAX_VIPS);
	__type(key, struct tide_redirect_vip_key);
	__type(value, struct tide_redirect_vip_counters);
} tide_redirect_vips SEC(".maps");

/*
 * The flows (inner TCP 5-tuples, struct tide_redirect_flow_key) that took a second chance, the
 * alternate hash or a last resort, with packets and last time per kind: the change report's
 * connections, which the packet counters cannot give. Only those packets touch it; a primary hit,
 * a SYN, a forwarded packet never do. LRU so a flood of broken flows cannot fill it for good;
 * shared, not per CPU, so one entry is one flow and the daemon need not merge CPUs.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TIDE_REDIRECT_MAX_FLOWS);
	__type(key, struct tide_redirect_flow_key);
	__type(value, struct tide_redirect_flow);
} tide_redirect_flows SEC(".maps");

#endif /* TIDE_REDIRECT_MAPS_H */
