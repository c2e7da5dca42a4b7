// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * tide-probes: kernel signals behind slow or failing connections, from tracepoints only (this
 * fleet's kernels have no kprobes and refuse fentry). Each group of programs is one "probe" the
 * loader turns on or reports off on its own:
 *
 *   listen_backlog    syscalls:sys_{enter,exit}_listen   requested vs effective backlog (event)
 *   listen_overflow   skb:kfree_skb (tp_btf)             accept-queue overflow drops per port
 *   connect_latency   syscalls:sys_{enter,exit}_connect  per-process log2(us) histogram, errors
 *   port_parity       sock:inet_sock_set_state (tp_btf)  even/odd local ports of new connections
 *   netrx_softirq     irq:softirq_{entry,exit} (tp_btf)  per-CPU NET_RX run time
 *   netrx_wait        irq:softirq_raise (tp_btf)         per-CPU NET_RX raise -> run delay
 *   icmp_frag_needed  icmp:icmp_send (tp_btf)            frag-needed messages per netns
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tide_probes_helpers.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* ---- listen_backlog ---------------------------------------------------------------------- */

SEC("tracepoint/syscalls/sys_enter_listen")
int tp_listen_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct tp_listen_call call = {
		.fd = (__s32)ctx->args[0],
		.backlog = (__s32)ctx->args[1],
	};

	bpf_map_update_elem(&tp_listen_call, &id, &call, BPF_ANY);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_listen")
int tp_listen_exit(struct trace_event_raw_sys_exit *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct tp_listen_event *ev;
	struct tp_listen_call *call;
	struct sock *sk;

	call = bpf_map_lookup_elem(&tp_listen_call, &id);
	if (!call)
		return 0;
	/* Only successful calls set a backlog; failed ones say nothing about the queue. */
	sk = ctx->ret == 0 ? tp_fd_sock(call->fd) : NULL;
	if (sk) {
		ev = bpf_ringbuf_reserve(&tp_listen_evt, sizeof(*ev), 0);
		if (ev) {
			ev->pid = (__u32)(id >> 32);
			ev->netns = tp_sk_netns(sk);
			ev->requested = call->backlog;
			ev->effective = BPF_CORE_READ(sk, sk_max_ack_backlog);
			ev->family = BPF_CORE_READ(sk, __sk_common.skc_family);
			ev->port = ev->family == TP_AF_UNIX
					   ? 0
					   : BPF_CORE_READ(sk, __sk_common.skc_num);
			/* The kernel compares as unsigned: a negative backlog asks for the maximum. */
			ev->limited = ev->effective < (__u32)call->backlog;
			ev->pad[0] = ev->pad[1] = ev->pad[2] = 0;
			bpf_get_current_comm(ev->comm, sizeof(ev->comm));
			bpf_ringbuf_submit(ev, 0);
		}
	}
	bpf_map_delete_elem(&tp_listen_call, &id);
	return 0;
}

/* ---- listen_overflow --------------------------------------------------------------------- */

/*
 * kfree_skb(skb, location, reason[, rx_sk since 6.11]). The drop-reason number is taken from
 * the running kernel's enum skb_drop_reason (it changes between releases). With rx_sk the
 * listener gives port and namespace; without it, the TCP header's destination port and the
 * receiving device's namespace do.
 */
SEC("tp_btf/kfree_skb")
int tp_kfree_skb(__u64 *ctx)
{
	struct sk_buff *skb = (struct sk_buff *)ctx[0];
	struct tp_port_key key = {};
	struct sock *sk = NULL;
	__u64 one = 1, *cnt;

	if (!bpf_core_enum_value_exists(enum skb_drop_reason, SKB_DROP_REASON_TCP_LISTEN_OVERFLOW))
		return 0;
	if ((__u32)ctx[2] !=
	    bpf_core_enum_value(enum skb_drop_reason, SKB_DROP_REASON_TCP_LISTEN_OVERFLOW))
		return 0;
	if (bpf_core_field_exists(struct trace_event_raw_kfree_skb, rx_sk))
		sk = (struct sock *)ctx[3];
	if (sk) {
		key.netns = tp_sk_netns(sk);
		key.port = BPF_CORE_READ(sk, __sk_common.skc_num);
	} else {
		unsigned char *head = BPF_CORE_READ(skb, head);
		__u16 th_off = BPF_CORE_READ(skb, transport_header);
		struct tcphdr th = {};

		bpf_probe_read_kernel(&th, sizeof(th), head + th_off);
		key.netns = BPF_CORE_READ(skb, dev, nd_net.net, ns.inum);
		key.port = bpf_ntohs(th.dest);
	}
	cnt = bpf_map_lookup_elem(&tp_overflow, &key);
	if (cnt)
		__sync_fetch_and_add(cnt, 1);
	else
		bpf_map_update_elem(&tp_overflow, &key, &one, BPF_NOEXIST);
	return 0;
}

/* ---- connect_latency --------------------------------------------------------------------- */

SEC("tracepoint/syscalls/sys_enter_connect")
int tp_connect_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), now;
	__u16 family = 0;

	/* Network destinations only: unix-socket connects (logging, nscd) are not the subject. */
	if (bpf_probe_read_user(&family, sizeof(family), (void *)ctx->args[1]))
		return 0;
	if (family != TP_AF_INET && family != TP_AF_INET6)
		return 0;
	now = bpf_ktime_get_ns();
	bpf_map_update_elem(&tp_connect_call, &id, &now, BPF_ANY);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_connect")
int tp_connect_exit(struct trace_event_raw_sys_exit *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), *start, ns;
	struct tp_connect_stats *st;
	struct tp_proc_key key = {};
	long ret = ctx->ret;

	start = bpf_map_lookup_elem(&tp_connect_call, &id);
	if (!start)
		return 0;
	ns = bpf_ktime_get_ns() - *start;
	bpf_map_delete_elem(&tp_connect_call, &id);
	tp_proc_key_current(&key);
	st = tp_connect_entry(&key);
	if (!st)
		return 0;
	__sync_fetch_and_add(&st->calls, 1);
	__sync_fetch_and_add(&st->total_ns, ns);
	__sync_fetch_and_add(&st->hist[tp_slot(ns)], 1);
	if (ret < 0 && ret != -TP_EINPROGRESS)
		__sync_fetch_and_add(&st->errors, 1);
	if (ret == -TP_EADDRNOTAVAIL)
		__sync_fetch_and_add(&st->eaddrnotavail, 1);
	return 0;
}

/* ---- port_parity ------------------------------------------------------------------------- */

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(tp_sock_state, const struct sock *sk, int oldstate, int newstate)
{
	__u64 skaddr = (__u64)sk;
	struct tp_connect_stats *st;
	struct tp_proc_key key = {}, *owner;
	__u16 sport;

	if (newstate == TCP_SYN_SENT) {
		/* Process context (connect()): remember who connects this socket. */
		tp_proc_key_current(&key);
		bpf_map_update_elem(&tp_syn_sent, &skaddr, &key, BPF_ANY);
		return 0;
	}
	if (oldstate != TCP_SYN_SENT)
		return 0;
	owner = bpf_map_lookup_elem(&tp_syn_sent, &skaddr);
	if (!owner)
		return 0;
	key = *owner;
	bpf_map_delete_elem(&tp_syn_sent, &skaddr);
	/* 0: no local port could be bound (EADDRNOTAVAIL), counted by connect_latency. */
	sport = BPF_CORE_READ(sk, __sk_common.skc_num);
	if (!sport)
		return 0;
	st = tp_connect_entry(&key);
	if (!st)
		return 0;
	if (sport & 1)
		__sync_fetch_and_add(&st->sport_odd, 1);
	else
		__sync_fetch_and_add(&st->sport_even, 1);
	return 0;
}

/* ---- netrx_softirq / netrx_wait ---------------------------------------------------------- */

/* First raise of NET_RX since its last run on this CPU (raises are CPU-local). */
SEC("tp_btf/softirq_raise")
int BPF_PROG(tp_softirq_raise, unsigned int vec)
{
	struct tp_netrx_clock *clk;
	__u32 zero = 0;

	if (vec != NET_RX_SOFTIRQ)
		return 0;
	clk = bpf_map_lookup_elem(&tp_netrx_clock, &zero);
	if (clk && !clk->raise_ns)
		clk->raise_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(tp_softirq_entry, unsigned int vec)
{
	struct tp_netrx_clock *clk;
	struct tp_netrx_stats *st;
	struct tp_netrx_peak *pk;
	__u64 now, wait;
	__u32 zero = 0;

	if (vec != NET_RX_SOFTIRQ)
		return 0;
	clk = bpf_map_lookup_elem(&tp_netrx_clock, &zero);
	if (!clk)
		return 0;
	now = bpf_ktime_get_ns();
	clk->entry_ns = now;
	if (!clk->raise_ns)
		return 0;
	wait = now - clk->raise_ns;
	clk->raise_ns = 0;
	st = bpf_map_lookup_elem(&tp_netrx, &zero);
	pk = bpf_map_lookup_elem(&tp_netrx_peak, &zero);
	if (!st || !pk)
		return 0;
	/* Per-CPU values, only this CPU writes them (softirqs do not nest on a CPU): no atomics. */
	st->waits++;
	st->wait_total_ns += wait;
	st->wait_hist[tp_slot(wait)]++;
	if (wait > pk->wait_max_ns)
		pk->wait_max_ns = wait;
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(tp_softirq_exit, unsigned int vec)
{
	struct tp_netrx_clock *clk;
	struct tp_netrx_stats *st;
	struct tp_netrx_peak *pk;
	__u32 zero = 0;
	__u64 ns;

	if (vec != NET_RX_SOFTIRQ)
		return 0;
	clk = bpf_map_lookup_elem(&tp_netrx_clock, &zero);
	if (!clk || !clk->entry_ns)
		return 0;
	ns = bpf_ktime_get_ns() - clk->entry_ns;
	clk->entry_ns = 0;
	st = bpf_map_lookup_elem(&tp_netrx, &zero);
	pk = bpf_map_lookup_elem(&tp_netrx_peak, &zero);
	if (!st || !pk)
		return 0;
	st->runs++;
	st->total_ns += ns;
	st->hist[tp_slot(ns)]++;
	if (ns > pk->run_max_ns)
		pk->run_max_ns = ns;
	return 0;
}

/* ---- icmp_frag_needed -------------------------------------------------------------------- */

/*
 * icmp_send(skb_in, type, code) fires in __icmp_send before the reply is routed, so it counts
 * attempts even when a firewall drops the reply. The namespace is the one of the device the
 * offending packet arrived on (or left by, for locally generated packets).
 */
SEC("tp_btf/icmp_send")
int BPF_PROG(tp_icmp_send, const struct sk_buff *skb, int type, int code)
{
	struct net_device *dev;
	__u64 one = 1, *cnt;
	__u32 netns;

	if (type != TP_ICMP_DEST_UNREACH || code != TP_ICMP_FRAG_NEEDED)
		return 0;
	dev = BPF_CORE_READ(skb, dev);
	if (!dev) {
		/* skb->_skb_refdst: dst_entry pointer with a "no reference" flag in bit 0. */
		struct dst_entry *dst =
			(struct dst_entry *)(BPF_CORE_READ(skb, _skb_refdst) & ~1UL);

		dev = BPF_CORE_READ(dst, dev);
	}
	netns = BPF_CORE_READ(dev, nd_net.net, ns.inum);
	cnt = bpf_map_lookup_elem(&tp_icmp_fragnd, &netns);
	if (cnt)
		__sync_fetch_and_add(cnt, 1);
	else
		bpf_map_update_elem(&tp_icmp_fragnd, &netns, &one, BPF_NOEXIST);
	return 0;
}
