/* SPDX-License-Identifier: MIT */
/*
 * Map keys/values and ring-buffer records shared by the BPF programs, the loader and whoever
 * reads the pinned maps (the Node agent through the npm `bpf` package). Every layout is fixed,
 * naturally aligned, with explicit padding, little-endian (x86-64); offsets are given in bytes
 * so a reader in another language can decode them. Ports are in host byte order.
 */
#ifndef TIDE_PROBES_STRUCTS_H
#define TIDE_PROBES_STRUCTS_H

#include "tide_probes_consts.h"

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* listen() arguments between sys_enter_listen and sys_exit_listen, keyed by pid_tgid. */
struct tp_listen_call {
	__s32 fd;
	__s32 backlog; /* as passed by the caller: negative means "as large as allowed" */
};

/* Ring-buffer record for one successful listen() (40 bytes). */
struct tp_listen_event {
	__u32 pid;	 /* 0: thread group id */
	__u32 netns;	 /* 4: inode number of the socket's network namespace */
	__s32 requested; /* 8: backlog passed to listen() */
	__u32 effective; /* 12: sk_max_ack_backlog after the call (capped at somaxconn) */
	__u16 port;	 /* 16: local port, 0 for AF_UNIX */
	__u16 family;	 /* 18: AF_INET 2, AF_INET6 10, AF_UNIX 1 */
	__u8 limited;	 /* 20: 1 when effective < requested (the kernel capped it) */
	__u8 pad[3];
	char comm[TP_COMM_LEN]; /* 24 */
};

/* Key of tp_overflow: a listening port in a namespace (8 bytes). */
struct tp_port_key {
	__u32 netns; /* 0 */
	__u16 port;  /* 4 */
	__u16 pad;   /* 6: always 0 */
};

/* Key of tp_connect: one process in one namespace (24 bytes). */
struct tp_proc_key {
	__u32 netns;		/* 0: the calling task's network namespace */
	__u32 tgid;		/* 4 */
	char comm[TP_COMM_LEN]; /* 8 */
};

/*
 * Value of tp_connect: connect() calls of one process (AF_INET/AF_INET6 destinations only),
 * cumulative since the program was attached. 48 + 8 * TP_HIST_SLOTS bytes.
 */
struct tp_connect_stats {
	__u64 calls;	     /* 0: connect() calls that returned */
	__u64 errors;	     /* 8: returned < 0, EINPROGRESS excluded (non-blocking start) */
	__u64 eaddrnotavail; /* 16: returned -EADDRNOTAVAIL: no free local port */
	__u64 total_ns;	     /* 24: sum of syscall durations */
	__u64 sport_even;    /* 32: TCP connections that left SYN_SENT with an even local port */
	__u64 sport_odd;     /* 40: ... with an odd local port */
	__u64 hist[TP_HIST_SLOTS]; /* 48: syscall duration, log2 us buckets (see consts) */
};

/* Per-CPU NET_RX softirq statistics, cumulative (16 + 8 * TP_HIST_SLOTS) * 2 bytes. */
struct tp_netrx_stats {
	__u64 runs;		   /* NET_RX softirq handler runs on this CPU */
	__u64 total_ns;		   /* time spent in them */
	__u64 hist[TP_HIST_SLOTS]; /* run duration, log2 us buckets */
	__u64 waits;		   /* raise -> entry intervals measured */
	__u64 wait_total_ns;
	__u64 wait_hist[TP_HIST_SLOTS]; /* raise -> entry delay, log2 us buckets */
};

/* Per-CPU NET_RX maxima since the loader last reset them (each sample). */
struct tp_netrx_peak {
	__u64 run_max_ns;
	__u64 wait_max_ns;
};

/* Per-CPU scratch: when the current NET_RX run started and when NET_RX was first raised. */
struct tp_netrx_clock {
	__u64 entry_ns; /* 0: not inside NET_RX */
	__u64 raise_ns; /* 0: not pending (or raised before we attached) */
};

#endif /* TIDE_PROBES_STRUCTS_H */
