/* SPDX-License-Identifier: MIT */
/*
 * tide-probes constants: histogram geometry, map sizes and the few protocol numbers the programs
 * compare against. Limits are defines so a build can override them (-DTP_PROC_MAX=8192).
 * Kernel enum values (drop reasons, TCP states, softirq vectors) are NOT here: the programs take
 * them from the running kernel's BTF through CO-RE or from vmlinux.h.
 */
#ifndef TIDE_PROBES_CONSTS_H
#define TIDE_PROBES_CONSTS_H

/*
 * log2 histograms in microseconds: bucket 0 holds [0, 1) us, bucket i (i >= 1) holds
 * [2^(i-1), 2^i) us, the last bucket is open-ended. 27 buckets: the last one starts at 2^25 us
 * (33.5 s), beyond any connect() timeout worth distinguishing.
 */
#define TP_HIST_SLOTS 27

/* Processes tracked for connect() statistics at once (LRU: exited processes age out). */
#ifndef TP_PROC_MAX
#define TP_PROC_MAX 4096
#endif

/* Threads inside listen()/connect() at once, and sockets in SYN_SENT at once (LRU). */
#ifndef TP_INFLIGHT_MAX
#define TP_INFLIGHT_MAX 16384
#endif

/* (netns, port) pairs with listen-overflow drops, and namespaces with ICMP counts. */
#ifndef TP_PORT_MAX
#define TP_PORT_MAX 4096
#endif
#ifndef TP_NETNS_MAX
#define TP_NETNS_MAX 1024
#endif

/* Ring buffer for listen() events, bytes (power of two, page multiple): ~6500 events. */
#ifndef TP_LISTEN_RING_BYTES
#define TP_LISTEN_RING_BYTES (256 * 1024)
#endif

/* Task comm length (TASK_COMM_LEN), bytes. */
#define TP_COMM_LEN 16

/* Address families (socket ABI). */
#define TP_AF_UNIX 1
#define TP_AF_INET 2
#define TP_AF_INET6 10

/* errno values returned (negated) by connect(), Linux ABI. */
#define TP_EADDRNOTAVAIL 99
#define TP_EINPROGRESS 115

/* ICMP destination unreachable / fragmentation needed and DF set (RFC 792). */
#define TP_ICMP_DEST_UNREACH 3
#define TP_ICMP_FRAG_NEEDED 4

#endif /* TIDE_PROBES_CONSTS_H */
