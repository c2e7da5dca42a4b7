/* SPDX-License-Identifier: MIT */
/*
 * BPF-side helpers of tide-probes: histogram bucketing, namespace and socket lookups. Every
 * kernel read goes through BPF_CORE_READ (probe-read + CO-RE relocation), so a missing pointer
 * reads as 0 instead of faulting and a moved field is found by name.
 */
#ifndef TIDE_PROBES_HELPERS_H
#define TIDE_PROBES_HELPERS_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "tide_probes_maps.h"

/* floor(log2(v)) for v >= 1, without a loop (the BPF ISA has no count-leading-zeros). */
static __always_inline __u64 tp_log2(__u64 v)
{
	__u64 r, shift;

	r = (__u64)(v > 0xffffffffULL) << 5;
	v >>= r;
	shift = (__u64)(v > 0xffff) << 4;
	v >>= shift;
	r |= shift;
	shift = (__u64)(v > 0xff) << 3;
	v >>= shift;
	r |= shift;
	shift = (__u64)(v > 0xf) << 2;
	v >>= shift;
	r |= shift;
	shift = (__u64)(v > 0x3) << 1;
	v >>= shift;
	r |= shift;
	r |= v >> 1;
	return r;
}

/*
 * Histogram bucket of a duration in ns: 0 for < 1 us, else floor(log2(us)) + 1, capped. The
 * barrier keeps clang from bounds-checking a 32-bit copy and indexing with another register,
 * which the verifier rejects as an unbounded access.
 */
static __always_inline __u64 tp_slot(__u64 ns)
{
	__u64 us = ns / 1000;
	__u64 slot;

	if (!us)
		return 0;
	slot = tp_log2(us) + 1;
	barrier_var(slot);
	if (slot > TP_HIST_SLOTS - 1)
		slot = TP_HIST_SLOTS - 1;
	return slot;
}

/* Inode number of a socket's network namespace (what /proc/PID/ns/net shows). */
static __always_inline __u32 tp_sk_netns(const struct sock *sk)
{
	return BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
}

/* Inode number of the current task's network namespace. */
static __always_inline __u32 tp_task_netns(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	return BPF_CORE_READ(task, nsproxy, net_ns, ns.inum);
}

/*
 * The struct sock behind file descriptor `fd` of the current task: files->fdt->fd[fd] is a
 * struct file whose private_data is the struct socket (valid only when the fd is a socket, which
 * a successful listen()/connect() on it guarantees). NULL when anything is missing.
 */
static __always_inline struct sock *tp_fd_sock(int fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds, *file = NULL;
	struct socket *sock;

	if (!fdt || fd < 0 || (unsigned int)fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_core_read(&file, sizeof(file), &fds[fd]) || !file)
		return NULL;
	sock = BPF_CORE_READ(file, private_data);
	if (!sock)
		return NULL;
	return BPF_CORE_READ(sock, sk);
}

/* The key of the calling process in tp_connect. */
static __always_inline void tp_proc_key_current(struct tp_proc_key *key)
{
	key->netns = tp_task_netns();
	key->tgid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	bpf_get_current_comm(key->comm, sizeof(key->comm));
}

/* The process's connect() statistics, created zeroed on first use; NULL if the map is full. */
static __always_inline struct tp_connect_stats *tp_connect_entry(const struct tp_proc_key *key)
{
	static const struct tp_connect_stats zero;
	struct tp_connect_stats *st;

	st = bpf_map_lookup_elem(&tp_connect, key);
	if (st)
		return st;
	bpf_map_update_elem(&tp_connect, key, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&tp_connect, key);
}

#endif /* TIDE_PROBES_HELPERS_H */
