/* SPDX-License-Identifier: MIT */
#include "worker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "config.h"
#include "table.h"
#include "tide_pipeline.h"

#define RTE_LOGTYPE_TIDE RTE_LOGTYPE_USER1

volatile bool worker_quit;
struct rte_rcu_qsbr *worker_rcu;
struct worker_lcore worker_lcores[RTE_MAX_LCORE];
unsigned int worker_count;
struct worker_params worker_params;

/* RCU-protected: workers load it with acquire once per burst; written by the control thread. */
static struct worker_encap *worker_encap;

int worker_rcu_init(void)
{
	size_t sz = rte_rcu_qsbr_get_memsize(WORKER_RCU_MAX_THREADS);

	worker_rcu = rte_zmalloc("tide_rcu", sz, RTE_CACHE_LINE_SIZE);
	if (!worker_rcu)
		return -ENOMEM;
	return rte_rcu_qsbr_init(worker_rcu, WORKER_RCU_MAX_THREADS);
}

const struct worker_encap *worker_encap_current(void)
{
	return __atomic_load_n(&worker_encap, __ATOMIC_ACQUIRE);
}

int worker_set_gateway(const uint8_t mac[6], uint32_t source_ip)
{
	struct worker_encap *e = calloc(1, sizeof(*e)), *old;
	uint16_t port;

	if (!e)
		return -ENOMEM;
	memcpy(e->gateway_mac, mac, 6);
	e->source_ip = source_ip;
	RTE_ETH_FOREACH_DEV(port)
	{
		struct rte_ether_addr addr;

		if (rte_eth_macaddr_get(port, &addr) == 0)
			memcpy(e->port[port].src_mac, addr.addr_bytes, 6);
		memcpy(e->port[port].gateway_mac, mac, 6);
		e->port[port].source_ip = source_ip;
	}
	old = worker_encap;
	__atomic_store_n(&worker_encap, e, __ATOMIC_RELEASE);
	if (old) {
		rte_rcu_qsbr_synchronize(worker_rcu, RTE_QSBR_THRID_INVALID);
		free(old);
	}
	return 0;
}

void worker_free(void)
{
	free(worker_encap);
	worker_encap = NULL;
	rte_free(worker_rcu);
	worker_rcu = NULL;
}

/* Per-forwarded-packet facts kept until the TX burst says which packets left. */
struct worker_sent {
	uint8_t family;
	uint8_t kind;
};

static void worker_count_sent(struct worker_counters *c, struct rte_mbuf **tx,
			      const struct worker_sent *sent, uint16_t n_tx, uint16_t n_sent)
{
	for (uint16_t i = 0; i < n_sent; i++) {
		c->forwarded_bytes += rte_pktmbuf_pkt_len(tx[i]);
		if (sent[i].family == 4)
			c->forwarded_ipv4++;
		else
			c->forwarded_ipv6++;
		if (sent[i].kind == TIDE_FLOW_ICMP_PMTU)
			c->forwarded_icmp_pmtu++;
		else if (sent[i].kind == TIDE_FLOW_ICMP_ECHO)
			c->forwarded_icmp_echo++;
	}
	c->forwarded_packets += n_sent;
	if (n_sent < n_tx) {
		c->tx_failed += (uint16_t)(n_tx - n_sent);
		rte_pktmbuf_free_bulk(&tx[n_sent], (unsigned int)(n_tx - n_sent));
	}
}

/*
 * One burst: stage 1 (parse, bind, hash, row prefetch) for every packet, then stage 2 (row read,
 * MTU check, encapsulation in place) for those still forwarded, so row cache misses overlap.
 */
static uint16_t worker_burst(struct worker_queue *q, const struct tide_fwd_set *set,
			     const struct tide_encap_params *ep)
{
	struct rte_mbuf *rx[CONFIG_BURST_MAX], *tx[CONFIG_BURST_MAX], *drop[CONFIG_BURST_MAX];
	struct worker_sent sent[CONFIG_BURST_MAX];
	struct tide_flow flow[CONFIG_BURST_MAX];
	struct tide_decision dec[CONFIG_BURST_MAX];
	enum tide_verdict verdict[CONFIG_BURST_MAX];
	struct worker_counters *c = &q->counters;
	uint16_t n_rx, n_tx = 0, n_drop = 0, n_sent;

	n_rx = rte_eth_rx_burst(q->port_id, q->rx_queue, rx, (uint16_t)worker_params.burst);
	if (n_rx == 0)
		return 0;
	c->rx_packets += n_rx;
	for (uint16_t i = 0; i < n_rx; i++) {
		struct rte_mbuf *m = rx[i];

		c->rx_bytes += rte_pktmbuf_pkt_len(m);
		if (i + 1 < n_rx)
			rte_prefetch0(rte_pktmbuf_mtod(rx[i + 1], void *));
		/* The pipeline works on one contiguous buffer; chains are rare (jumbo + scatter). */
		if (m->nb_segs > 1 && rte_pktmbuf_linearize(m) != 0) {
			verdict[i] = TIDE_DROP_UNSUPPORTED;
			continue;
		}
		verdict[i] = tide_pipeline_classify(set, rte_pktmbuf_mtod(m, uint8_t *),
						    rte_pktmbuf_data_len(m), &flow[i], &dec[i]);
	}
	for (uint16_t i = 0; i < n_rx; i++) {
		struct rte_mbuf *m = rx[i];
		uint32_t prepend = 0, out_len = 0;
		enum tide_verdict v = verdict[i];

		if (v == TIDE_FORWARD)
			v = tide_pipeline_finish(
				set, ep, worker_params.mtu, rte_pktmbuf_mtod(m, uint8_t *),
				rte_pktmbuf_headroom(m), &flow[i], &dec[i], &prepend, &out_len);
		if (v != TIDE_FORWARD || !rte_pktmbuf_prepend(m, (uint16_t)prepend)) {
			c->dropped[v != TIDE_FORWARD ? v : TIDE_DROP_TOO_BIG]++;
			drop[n_drop++] = m;
			continue;
		}
		/* Drops Ethernet padding after the inner IP packet. */
		if (rte_pktmbuf_pkt_len(m) > out_len)
			rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) - out_len));
		/* Checksums are complete in software; no TX offload applies to the new headers. */
		m->ol_flags = 0;
		m->packet_type = 0;
		sent[n_tx].family = flow[i].family;
		sent[n_tx].kind = flow[i].kind;
		tx[n_tx++] = m;
	}
	if (n_drop)
		rte_pktmbuf_free_bulk(drop, n_drop);
	if (n_tx) {
		n_sent = rte_eth_tx_burst(q->port_id, q->tx_queue, tx, n_tx);
		worker_count_sent(c, tx, sent, n_tx, n_sent);
	}
	return n_rx;
}

int worker_main(void *arg)
{
	struct worker_lcore *w = arg;
	unsigned int id = rte_lcore_id();
	int rc;

	rc = rte_rcu_qsbr_thread_register(worker_rcu, id);
	if (rc) {
		RTE_LOG(ERR, TIDE, "lcore %u: cannot register with RCU\n", id);
		return rc;
	}
	rte_rcu_qsbr_thread_online(worker_rcu, id);
	RTE_LOG(INFO, TIDE, "lcore %u: forwarding on %u queue(s)\n", id, w->num_queues);
	while (!worker_quit) {
		/* One consistent table and gateway per loop iteration. */
		const struct tide_fwd_set *set = table_current();
		const struct worker_encap *e = worker_encap_current();

		unsigned int got = 0;

		for (uint16_t i = 0; i < w->num_queues; i++)
			got += worker_burst(&w->queues[i], set, &e->port[w->queues[i].port_id]);
		/* Past this point this lcore holds no reference to a set or encap struct. */
		rte_rcu_qsbr_quiescent(worker_rcu, id);
		/*
		 * Labs and shared hosts: give the CPU back when idle. Offline while asleep so a
		 * table swap never waits for a sleeping worker.
		 */
		if (got == 0 && worker_params.idle_sleep_us) {
			rte_rcu_qsbr_thread_offline(worker_rcu, id);
			rte_delay_us_sleep(worker_params.idle_sleep_us);
			rte_rcu_qsbr_thread_online(worker_rcu, id);
		}
	}
	rte_rcu_qsbr_thread_offline(worker_rcu, id);
	rte_rcu_qsbr_thread_unregister(worker_rcu, id);
	RTE_LOG(INFO, TIDE, "lcore %u: stopped\n", id);
	return 0;
}
