/* SPDX-License-Identifier: MIT */
#include "stats.h"

#include <string.h>

#include <rte_ethdev.h>

#include "worker.h"

/*
 * Counters are written by their lcore with plain stores; 64-bit aligned loads are atomic, so a
 * relaxed load gives a recent, untorn value without slowing the writer.
 */
static void stats_add(struct worker_counters *sum, const struct worker_counters *c)
{
#define STATS_ADD(f) (sum->f += __atomic_load_n(&c->f, __ATOMIC_RELAXED))
	STATS_ADD(rx_packets);
	STATS_ADD(rx_bytes);
	STATS_ADD(forwarded_packets);
	STATS_ADD(forwarded_bytes);
	STATS_ADD(forwarded_icmp_pmtu);
	STATS_ADD(forwarded_icmp_echo);
	STATS_ADD(forwarded_ipv4);
	STATS_ADD(forwarded_ipv6);
	STATS_ADD(tx_failed);
	for (int v = 0; v < TIDE_VERDICT_COUNT; v++)
		STATS_ADD(dropped[v]);
#undef STATS_ADD
}

static json_t *stats_counters_json(const struct worker_counters *c)
{
	json_t *dropped = json_object();

	for (int v = 1; v < TIDE_VERDICT_COUNT; v++)
		json_object_set_new(dropped, tide_verdict_name((enum tide_verdict)v),
				    json_integer((json_int_t)c->dropped[v]));
	return json_pack(
		"{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o}", "rx_packets",
		(json_int_t)c->rx_packets, "rx_bytes", (json_int_t)c->rx_bytes, "forwarded_packets",
		(json_int_t)c->forwarded_packets, "forwarded_bytes", (json_int_t)c->forwarded_bytes,
		"forwarded_icmp_pmtu", (json_int_t)c->forwarded_icmp_pmtu, "forwarded_icmp_echo",
		(json_int_t)c->forwarded_icmp_echo, "forwarded_ipv4", (json_int_t)c->forwarded_ipv4,
		"forwarded_ipv6", (json_int_t)c->forwarded_ipv6, "tx_failed",
		(json_int_t)c->tx_failed, "dropped", dropped);
}

json_t *stats_result(void)
{
	struct worker_counters totals;
	json_t *ports = json_array(), *lcores = json_array();
	uint16_t port;

	memset(&totals, 0, sizeof(totals));
	for (unsigned int i = 0; i < worker_count; i++) {
		const struct worker_lcore *w = &worker_lcores[i];

		for (uint16_t j = 0; j < w->num_queues; j++) {
			const struct worker_queue *q = &w->queues[j];
			struct worker_counters c;

			memset(&c, 0, sizeof(c));
			stats_add(&c, &q->counters);
			stats_add(&totals, &c);
			json_array_append_new(
				lcores, json_pack("{s:i,s:i,s:i,s:o}", "lcore_id", (int)w->lcore_id,
						  "port_id", q->port_id, "rx_queue", q->rx_queue,
						  "counters", stats_counters_json(&c)));
		}
	}
	RTE_ETH_FOREACH_DEV(port)
	{
		struct rte_eth_stats s;

		if (rte_eth_stats_get(port, &s) != 0)
			memset(&s, 0, sizeof(s));
		json_array_append_new(
			ports, json_pack("{s:i,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "port_id", port,
					 "rx_packets", (json_int_t)s.ipackets, "rx_bytes",
					 (json_int_t)s.ibytes, "tx_packets", (json_int_t)s.opackets,
					 "tx_bytes", (json_int_t)s.obytes, "rx_missed",
					 (json_int_t)s.imissed, "rx_errors", (json_int_t)s.ierrors,
					 "tx_errors", (json_int_t)s.oerrors));
	}
	return json_pack("{s:o,s:o,s:o}", "totals", stats_counters_json(&totals), "ports", ports,
			 "lcores", lcores);
}
