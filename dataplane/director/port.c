/* SPDX-License-Identifier: MIT */
#include "port.h"

#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "tide_gue.h"
#include "worker.h"

#define RTE_LOGTYPE_TIDE RTE_LOGTYPE_USER1

static struct rte_mempool *port_pool;
static uint16_t port_queues;

uint16_t port_num_queues(void)
{
	return port_queues;
}

static int port_init(uint16_t port, const struct director_config *cfg, uint16_t nq)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct rte_eth_txconf txconf;
	struct rte_eth_rxconf rxconf;
	uint16_t nb_rxd = PORT_RX_DESC, nb_txd = PORT_TX_DESC;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_info_get(port, &info);
	if (rc) {
		RTE_LOG(ERR, TIDE, "port %u: cannot get device info: %s\n", port, strerror(-rc));
		return rc;
	}
	if (info.max_rx_queues < nq || info.max_tx_queues < nq) {
		RTE_LOG(ERR, TIDE, "port %u (%s): needs %u rx/tx queues, device has %u/%u\n", port,
			info.driver_name, nq, info.max_rx_queues, info.max_tx_queues);
		return -ENOTSUP;
	}
	if (nq > 1) {
		uint64_t want = RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP;
		uint64_t hf = want & info.flow_type_rss_offloads;

		if (hf) {
			conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
			conf.rx_adv_conf.rss_conf.rss_hf = hf;
		} else {
			RTE_LOG(WARNING, TIDE,
				"port %u (%s): no IP/TCP/UDP RSS; queues beyond 0 may stay idle\n",
				port, info.driver_name);
		}
	}
	/* Only raise the MTU when needed: virtual PMDs often refuse any change. */
	if (cfg->mtu > RTE_ETHER_MTU) {
		if (info.max_mtu < cfg->mtu) {
			RTE_LOG(ERR, TIDE, "port %u: mtu %u above the device's max %u\n", port,
				cfg->mtu, info.max_mtu);
			return -EINVAL;
		}
		conf.rxmode.mtu = cfg->mtu;
	}
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;

	rc = rte_eth_dev_configure(port, nq, nq, &conf);
	if (rc) {
		RTE_LOG(ERR, TIDE, "port %u: configure failed: %s\n", port, strerror(-rc));
		return rc;
	}
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd);
	if (rc) {
		RTE_LOG(ERR, TIDE, "port %u: descriptor adjustment failed: %s\n", port,
			strerror(-rc));
		return rc;
	}
	rxconf = info.default_rxconf;
	rxconf.offloads = conf.rxmode.offloads;
	txconf = info.default_txconf;
	txconf.offloads = conf.txmode.offloads;
	for (uint16_t q = 0; q < nq; q++) {
		rc = rte_eth_rx_queue_setup(port, q, nb_rxd, rte_eth_dev_socket_id(port), &rxconf,
					    port_pool);
		if (rc) {
			RTE_LOG(ERR, TIDE, "port %u: rx queue %u setup failed: %s\n", port, q,
				strerror(-rc));
			return rc;
		}
		rc = rte_eth_tx_queue_setup(port, q, nb_txd, rte_eth_dev_socket_id(port), &txconf);
		if (rc) {
			RTE_LOG(ERR, TIDE, "port %u: tx queue %u setup failed: %s\n", port, q,
				strerror(-rc));
			return rc;
		}
	}
	rc = rte_eth_dev_start(port);
	if (rc) {
		RTE_LOG(ERR, TIDE, "port %u: start failed: %s\n", port, strerror(-rc));
		return rc;
	}
	rc = rte_eth_promiscuous_enable(port);
	if (rc)
		RTE_LOG(WARNING, TIDE, "port %u: promiscuous mode not enabled: %s\n", port,
			strerror(-rc));
	RTE_LOG(INFO, TIDE, "port %u (%s): %u rx/tx queue(s), %u/%u descriptors%s\n", port,
		info.driver_name, nq, nb_rxd, nb_txd,
		conf.rxmode.mq_mode == RTE_ETH_MQ_RX_RSS ? ", RSS" : "");
	return 0;
}

int port_init_all(const struct director_config *cfg, const unsigned int *lcores,
		  unsigned int num_queues)
{
	uint16_t nb_ports = rte_eth_dev_count_avail(), port;
	/* Room for the largest frame plus the GUE headers prepended in the headroom. */
	uint32_t data_room = RTE_MBUF_DEFAULT_BUF_SIZE;
	uint64_t need;
	int rc;

	if (nb_ports == 0) {
		RTE_LOG(ERR, TIDE, "no Ethernet ports (use a NIC bound to DPDK or --vdev)\n");
		return -ENODEV;
	}
	if (cfg->mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN + RTE_PKTMBUF_HEADROOM > data_room)
		data_room = cfg->mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN + RTE_PKTMBUF_HEADROOM;
	need = (uint64_t)nb_ports * num_queues * (PORT_RX_DESC + PORT_TX_DESC + cfg->burst) +
	       (uint64_t)rte_lcore_count() * PORT_MBUF_CACHE;
	if (cfg->mbufs < need)
		RTE_LOG(WARNING, TIDE,
			"mbufs %u is below the %llu the rings and caches can hold; RX may stall\n",
			cfg->mbufs, (unsigned long long)need);
	port_pool = rte_pktmbuf_pool_create("tide_mbufs", cfg->mbufs, PORT_MBUF_CACHE, 0,
					    (uint16_t)data_room, rte_socket_id());
	if (!port_pool) {
		RTE_LOG(ERR, TIDE, "cannot create the mbuf pool (%u mbufs): %s\n", cfg->mbufs,
			rte_strerror(rte_errno));
		return -rte_errno;
	}
	port_queues = (uint16_t)num_queues;
	for (unsigned int i = 0; i < num_queues; i++) {
		worker_lcores[i].lcore_id = lcores[i];
		worker_lcores[i].num_queues = 0;
	}
	worker_count = num_queues;
	RTE_ETH_FOREACH_DEV(port)
	{
		rc = port_init(port, cfg, (uint16_t)num_queues);
		if (rc)
			return rc;
		for (unsigned int i = 0; i < num_queues; i++) {
			struct worker_queue *q =
				&worker_lcores[i].queues[worker_lcores[i].num_queues++];

			q->port_id = port;
			q->rx_queue = (uint16_t)i;
			q->tx_queue = (uint16_t)i;
		}
	}
	return 0;
}

void port_close_all(void)
{
	uint16_t port;

	RTE_ETH_FOREACH_DEV(port)
	{
		int rc = rte_eth_dev_stop(port);

		if (rc)
			RTE_LOG(WARNING, TIDE, "port %u: stop failed: %s\n", port, strerror(-rc));
		rte_eth_dev_close(port);
	}
	if (port_pool) {
		rte_mempool_free(port_pool);
		port_pool = NULL;
	}
}
