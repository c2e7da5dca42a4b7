/* SPDX-License-Identifier: MIT */
/*
 * Run-to-completion packet loop: every worker lcore polls its own RX queue on every port,
 * runs tide_pipeline() on each packet and sends the GUE packet back out of the same port on its
 * own TX queue. Workers never block and never take a lock: the forwarding table and the
 * encapsulation parameters are read through RCU pointers (rte_rcu_qsbr), counters are per
 * queue and written by one lcore only.
 */
#ifndef TIDE_DIRECTOR_WORKER_H
#define TIDE_DIRECTOR_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_rcu_qsbr.h>

#include "tide_gue.h"
#include "tide_packet.h"

/* RCU reader id of the control thread; workers use their lcore id (< RTE_MAX_LCORE). */
#define WORKER_RCU_CONTROL_ID RTE_MAX_LCORE
#define WORKER_RCU_MAX_THREADS (RTE_MAX_LCORE + 1)

/* One queue's counters, written by its lcore only, read (relaxed) by the control thread. */
struct worker_counters {
	uint64_t rx_packets;
	uint64_t rx_bytes; /* received frame bytes */
	uint64_t forwarded_packets;
	uint64_t forwarded_bytes; /* GUE frame bytes accepted by the TX queue */
	uint64_t forwarded_icmp_pmtu;
	uint64_t forwarded_icmp_echo;
	uint64_t forwarded_ipv4;
	uint64_t forwarded_ipv6;
	uint64_t tx_failed;		      /* encapsulated, but the TX queue refused it */
	uint64_t dropped[TIDE_VERDICT_COUNT]; /* by verdict; [TIDE_FORWARD] unused */
} __rte_cache_aligned;

/* One (lcore, port) pair: the lcore polls rx_queue and sends on tx_queue of port_id. */
struct worker_queue {
	uint16_t port_id;
	uint16_t rx_queue;
	uint16_t tx_queue;
	struct worker_counters counters;
};

struct worker_lcore {
	unsigned int lcore_id;
	uint16_t num_queues;
	struct worker_queue queues[RTE_MAX_ETHPORTS];
} __rte_cache_aligned;

/* Encapsulation parameters per port (source MAC differs), swapped as a whole by RCU. */
struct worker_encap {
	uint8_t gateway_mac[6];
	uint32_t source_ip; /* network order */
	struct tide_encap_params port[RTE_MAX_ETHPORTS];
};

/* Hash fields are per table (struct tide_fwd_table.hash), resolved when a table is loaded. */
struct worker_params {
	uint32_t mtu;		/* largest outer IP packet, bytes */
	uint32_t burst;		/* packets per burst, <= CONFIG_BURST_MAX */
	uint32_t idle_sleep_us; /* sleep after a loop with no packet; 0 = busy-poll */
};

extern volatile bool worker_quit;
extern struct rte_rcu_qsbr *worker_rcu;
extern struct worker_lcore worker_lcores[RTE_MAX_LCORE];
extern unsigned int worker_count; /* entries used in worker_lcores */
extern struct worker_params worker_params;

/* Allocates the RCU state; call once after rte_eal_init(). Returns 0 or -errno. */
int worker_rcu_init(void);

/* Publishes new gateway MAC / source IP for every port. Control thread only. 0 or -errno. */
int worker_set_gateway(const uint8_t mac[6], uint32_t source_ip);

/* The current encapsulation parameters (RCU reader, or the control thread that writes them). */
const struct worker_encap *worker_encap_current(void);

/* lcore entry point (rte_eal_remote_launch); `arg` is the struct worker_lcore. */
int worker_main(void *arg);

void worker_free(void);

#endif /* TIDE_DIRECTOR_WORKER_H */
