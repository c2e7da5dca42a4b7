/* SPDX-License-Identifier: MIT */
/*
 * Ethernet port setup: every port gets one RX and one TX queue per worker lcore, RSS when
 * there is more than one queue and the device can hash, promiscuous mode on. The director is
 * one-armed: a packet leaves, encapsulated, through the port it arrived on.
 */
#ifndef TIDE_DIRECTOR_PORT_H
#define TIDE_DIRECTOR_PORT_H

#include <stdint.h>

#include "config.h"

/* Descriptors per queue; rte_eth_dev_adjust_nb_rx_tx_desc() may lower them. */
#define PORT_RX_DESC 1024u
#define PORT_TX_DESC 1024u
/* Per-lcore mbuf cache; must stay <= RTE_MEMPOOL_CACHE_MAX_SIZE. */
#define PORT_MBUF_CACHE 256u

/*
 * Creates the mbuf pool, configures and starts every port with `num_queues` queue pairs and
 * fills worker_lcores[].queues (lcore i uses queue i on every port). Returns 0 or -errno.
 */
int port_init_all(const struct director_config *cfg, const unsigned int *lcores,
		  unsigned int num_queues);

/* Number of RX/TX queues configured per port. */
uint16_t port_num_queues(void);

/* Stops and closes every port (the pcap PMD flushes its tx file on stop). */
void port_close_all(void);

#endif /* TIDE_DIRECTOR_PORT_H */
