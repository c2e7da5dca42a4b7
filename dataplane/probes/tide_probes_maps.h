/* SPDX-License-Identifier: MIT */
/*
 * The maps of the tide-probes BPF programs. Aggregates (tp_overflow, tp_connect, tp_netrx,
 * tp_icmp_fragnd) are cumulative since attach and are what --pin-dir exposes; tp_netrx_peak is
 * reset by the loader every sample; the rest is in-flight scratch state.
 */
#ifndef TIDE_PROBES_MAPS_H
#define TIDE_PROBES_MAPS_H

#include "tide_probes_structs.h"

/*
 * listen() arguments while the call runs, keyed by pid_tgid. In-flight maps are plain
 * preallocated hashes (no LRU bookkeeping on the hot path): an entry left by a thread killed
 * mid-call is overwritten when its id comes back, and the size bounds what can be left.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TP_INFLIGHT_MAX);
	__type(key, __u64);
	__type(value, struct tp_listen_call);
} tp_listen_call SEC(".maps");

/* One struct tp_listen_event per successful listen(), consumed by the loader immediately. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, TP_LISTEN_RING_BYTES);
} tp_listen_evt SEC(".maps");

/* Accept-queue overflow drops (skb:kfree_skb reason TCP_LISTEN_OVERFLOW) per (netns, port). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TP_PORT_MAX);
	__type(key, struct tp_port_key);
	__type(value, __u64); /* packets dropped */
} tp_overflow SEC(".maps");

/* connect() entry time, ns (bpf_ktime_get_ns), keyed by pid_tgid while the call runs. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TP_INFLIGHT_MAX);
	__type(key, __u64);
	__type(value, __u64);
} tp_connect_call SEC(".maps");

/* connect() latency histogram, errors and local-port parity per process (LRU by process). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TP_PROC_MAX);
	__type(key, struct tp_proc_key);
	__type(value, struct tp_connect_stats);
} tp_connect SEC(".maps");

/*
 * Sockets in SYN_SENT -> the process that connected them. The local port is chosen after the
 * state change to SYN_SENT (tcp_v4_connect: tcp_set_state() then inet_hash_connect()), and the
 * state leaves SYN_SENT in softirq context where `current` is arbitrary, so the owner is
 * remembered here and the parity counted when the socket leaves SYN_SENT (every exit from
 * SYN_SENT, close included, is a state change that deletes the entry).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TP_INFLIGHT_MAX);
	__type(key, __u64); /* struct sock address */
	__type(value, struct tp_proc_key);
} tp_syn_sent SEC(".maps");

/* Per-CPU NET_RX timestamps (scratch), key 0. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tp_netrx_clock);
} tp_netrx_clock SEC(".maps");

/* Per-CPU NET_RX softirq run/wait histograms, cumulative, key 0. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tp_netrx_stats);
} tp_netrx SEC(".maps");

/* Per-CPU NET_RX maxima, key 0; the loader zeroes it after each sample. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tp_netrx_peak);
} tp_netrx_peak SEC(".maps");

/* ICMP "fragmentation needed" (type 3 code 4) messages this host tried to send, per netns. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TP_NETNS_MAX);
	__type(key, __u32);   /* netns inode number */
	__type(value, __u64); /* messages */
} tp_icmp_fragnd SEC(".maps");

#endif /* TIDE_PROBES_MAPS_H */
