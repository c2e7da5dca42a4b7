/* SPDX-License-Identifier: MIT */
#include "control.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_log.h>

#include "port.h"
#include "service.h"
#include "stats.h"
#include "table.h"
#include "tide_control.h"
#include "tide_forward.h"
#include "worker.h"

#define RTE_LOGTYPE_TIDE RTE_LOGTYPE_USER1

/* The release version, from the root package.json: dataplane/Makefile passes it. */
#ifndef TIDE_VERSION
#error "TIDE_VERSION is not set: build with make -C dataplane"
#endif

static const struct director_config *control_cfg;
static struct tide_control_server control_server;
static struct timespec control_started_real, control_started_mono;

/* ---- replies ---- */

static json_t *control_loc(int64_t v)
{
	return v < 0 ? json_null() : json_integer((json_int_t)v);
}

static json_t *control_table_err(json_t *id, const struct table_error *e, const char *path)
{
	json_t *detail = NULL;

	if (e->has_glbd)
		detail = json_pack("{s:s,s:o,s:o,s:o,s:o}", "glbd_code", e->glbd.code, "table",
				   control_loc(e->glbd.table), "slot", control_loc(e->glbd.slot),
				   "row", control_loc(e->glbd.row), "offset",
				   control_loc(e->glbd.offset));
	else if (strcmp(e->code, "io_error") == 0)
		detail = json_pack("{s:s}", "path", path);
	return tide_control_err(id, e->code, detail, "%s", e->message);
}

/* ---- formatting ---- */

static json_t *control_ipv4_json(uint32_t addr)
{
	char buf[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &addr, buf, sizeof(buf));
	return json_string(buf);
}

/* A GLBD address field: u32 family then 16 bytes. */
static json_t *control_glbd_addr_json(const uint8_t *field)
{
	char buf[INET6_ADDRSTRLEN];

	inet_ntop(tide_rd_le32(field) == TIDE_FAMILY_IPV4 ? AF_INET : AF_INET6, field + 4, buf,
		  sizeof(buf));
	return json_string(buf);
}

static json_t *control_mac_json(const uint8_t *mac)
{
	char buf[18];

	snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
		 mac[4], mac[5]);
	return json_string(buf);
}

static json_t *control_fields_json(uint8_t fields)
{
	json_t *a = json_array();

	for (unsigned int bit = 1; bit <= TIDE_HASH_DST_PORT; bit <<= 1)
		if (fields & bit)
			json_array_append_new(a, json_string(config_hash_field_name(bit)));
	return a;
}

/* ---- argument checks ---- */

/* ---- commands ---- */

/* "hash_fields" and "alt_hash_fields" of a table, added to `obj`. */
static json_t *control_add_fields(json_t *obj, const struct tide_hash_config *hash)
{
	json_object_set_new(obj, "hash_fields", control_fields_json(hash->fields));
	json_object_set_new(obj, "alt_hash_fields", control_fields_json(hash->alt_fields));
	return obj;
}

static json_t *control_pool_json(const struct tide_fwd_table *tbl, uint32_t index,
				 const struct table_pool *pool)
{
	static const char *const states[] = {"filling", "active", "draining"};
	json_t *backends = json_array(), *binds = json_array();
	uint32_t n_binds = tide_rd_le32(tbl->raw + TIDE_GLBD_NUM_BINDS_OFF);
	bool used[TIDE_MAX_BACKENDS] = {false};

	/* State 2 is shared by draining and inactive; only inactive proxies are in no row (the
	 * same rule as decodeGlbd in packages/forwarding). */
	for (uint32_t r = 0; r < TIDE_TABLE_ROWS; r++) {
		used[tbl->slots[r][0]] = true;
		used[tbl->slots[r][1]] = true;
	}
	for (uint32_t i = 0; i < tbl->num_backends; i++) {
		const uint8_t *b = tbl->raw + TIDE_GLBD_BACKENDS_OFF + i * TIDE_GLBD_BACKEND_SIZE;
		uint16_t state = tide_rd_le16(b + 20);

		json_array_append_new(backends,
				      json_pack("{s:i,s:o,s:s,s:b}", "slot", (int)i, "address",
						control_glbd_addr_json(b), "state",
						state == TIDE_STATE_DRAINING && !used[i]
							? "inactive"
							: states[state],
						"healthy", tide_rd_le16(b + 22) == 1));
	}
	for (uint32_t i = 0; i < n_binds; i++) {
		const uint8_t *b = tbl->raw + TIDE_GLBD_BINDS_OFF + i * TIDE_GLBD_BIND_SIZE;

		json_array_append_new(binds, json_pack("{s:o,s:i,s:s,s:i,s:i}", "address",
						       control_glbd_addr_json(b), "prefix_bits",
						       (int)tide_rd_le16(b + 20), "proto",
						       b[26] == TIDE_PROTO_TCP ? "tcp" : "udp",
						       "port_start", (int)tide_rd_le16(b + 22),
						       "port_end", (int)tide_rd_le16(b + 24)));
	}
	return control_add_fields(json_pack("{s:i,s:s,s:s,s:o,s:o,s:o}", "index", (int)index,
					    "name", pool->name, "content_hash", pool->content_hash,
					    "loaded_at", tide_control_time(&pool->loaded_at),
					    "backends", backends, "binds", binds),
				  &tbl->hash);
}

static json_t *control_status(json_t *id)
{
	static struct table_info info; /* control thread only */
	const struct worker_encap *e = worker_encap_current();
	const struct tide_fwd_set *set;
	struct timespec now;
	json_t *ports = json_array(), *lcores = json_array(), *pools = json_array(), *table;
	uint16_t port;

	RTE_ETH_FOREACH_DEV(port)
	{
		char name[RTE_ETH_NAME_MAX_LEN] = "";
		struct rte_ether_addr mac;
		struct rte_eth_link link;

		memset(&mac, 0, sizeof(mac));
		memset(&link, 0, sizeof(link));
		rte_eth_dev_get_name_by_port(port, name);
		rte_eth_macaddr_get(port, &mac);
		/* 24.11 warns on an unused result: a port whose link cannot be read reports it down. */
		if (rte_eth_link_get_nowait(port, &link) != 0)
			link.link_status = RTE_ETH_LINK_DOWN;
		json_array_append_new(
			ports, json_pack("{s:i,s:s,s:o,s:b,s:i,s:i}", "port_id", port, "name", name,
					 "mac", control_mac_json(mac.addr_bytes), "link_up",
					 link.link_status == RTE_ETH_LINK_UP, "rx_queues",
					 port_num_queues(), "tx_queues", port_num_queues()));
	}
	for (unsigned int i = 0; i < worker_count; i++)
		for (uint16_t j = 0; j < worker_lcores[i].num_queues; j++) {
			const struct worker_queue *q = &worker_lcores[i].queues[j];

			json_array_append_new(lcores,
					      json_pack("{s:i,s:i,s:i,s:i}", "lcore_id",
							(int)worker_lcores[i].lcore_id, "port_id",
							q->port_id, "rx_queue", q->rx_queue,
							"tx_queue", q->tx_queue));
		}

	/* Loads run on this thread, so the metadata and the set cannot change in between. */
	table_info_get(&info);
	rte_rcu_qsbr_thread_online(worker_rcu, WORKER_RCU_CONTROL_ID);
	set = table_current();
	if (set && info.generation) {
		for (uint32_t t = 0; t < set->num_tables && t < info.num_pools; t++)
			json_array_append_new(
				pools, control_pool_json(&set->tables[t], t, &info.pools[t]));
		table = json_pack("{s:s,s:I,s:o,s:f}", "path", info.path, "generation",
				  (json_int_t)info.generation, "loaded_at",
				  tide_control_time(&info.loaded_at), "load_ms", info.load_ms);
	} else {
		table = json_null();
	}
	rte_rcu_qsbr_thread_offline(worker_rcu, WORKER_RCU_CONTROL_ID);

	clock_gettime(CLOCK_MONOTONIC, &now);
	return tide_control_ok(
		id, json_pack("{s:s,s:i,s:o,s:f,s:o,s:o,s:{s:o,s:o},s:i,s:o,s:o,s:o,s:o}",
			      "version", TIDE_VERSION, "pid", (int)getpid(), "started_at",
			      tide_control_time(&control_started_real), "uptime_s",
			      (double)(now.tv_sec - control_started_mono.tv_sec) +
				      (double)(now.tv_nsec - control_started_mono.tv_nsec) / 1e9,
			      "hash_fields", control_fields_json(control_cfg->hash_fields),
			      "alt_hash_fields", control_fields_json(control_cfg->alt_hash_fields),
			      "gateway", "mac", control_mac_json(e->gateway_mac), "source_ip",
			      control_ipv4_json(e->source_ip), "mtu", (int)worker_params.mtu,
			      "ports", ports, "lcores", lcores, "table", table, "pools", pools));
}

static json_t *control_load_table(json_t *id, json_t *req)
{
	static const char *const allowed[] = {"path", "pool_names", NULL};
	static struct table_info info; /* control thread only */
	const char *names[TIDE_MAX_TABLES];
	struct table_error err;
	json_t *r, *path = json_object_get(req, "path"), *jn = json_object_get(req, "pool_names");
	json_t *pools;
	uint32_t n = 0;

	r = tide_control_check_keys(id, "load_table", req, allowed);
	if (r)
		return r;
	if (!json_is_string(path) || json_string_length(path) == 0)
		return tide_control_err(id, "bad_request", NULL,
					"\"path\" must be a non-empty string");
	if (jn) {
		size_t i;
		json_t *v;

		if (!json_is_array(jn))
			return tide_control_err(id, "bad_request", NULL,
						"\"pool_names\" must be an array of strings");
		if (json_array_size(jn) > TIDE_MAX_TABLES) {
			err.code = "invalid_table";
			err.has_glbd = true;
			tide_glbd_fail(&err.glbd, "pool_names", -1, -1, -1, -1,
				       "%zu pool names; a file holds at most %u tables",
				       json_array_size(jn), TIDE_MAX_TABLES);
			snprintf(err.message, sizeof(err.message), "%s", err.glbd.message);
			return control_table_err(id, &err, json_string_value(path));
		}
		json_array_foreach(jn, i, v)
		{
			if (!json_is_string(v))
				return tide_control_err(id, "bad_request", NULL,
							"\"pool_names\"[%zu] must be a string", i);
			names[i] = json_string_value(v);
		}
		n = (uint32_t)json_array_size(jn);
	}
	if (table_load(json_string_value(path), jn ? names : NULL, n, &info, &err))
		return control_table_err(id, &err, json_string_value(path));
	pools = json_array();
	for (uint32_t t = 0; t < info.num_pools; t++)
		json_array_append_new(
			pools,
			control_add_fields(json_pack("{s:i,s:s,s:s}", "index", (int)t, "name",
						     info.pools[t].name, "content_hash",
						     info.pools[t].content_hash),
					   &info.pools[t].hash));
	return tide_control_ok(id,
			       json_pack("{s:I,s:f,s:o}", "generation", (json_int_t)info.generation,
					 "load_ms", info.load_ms, "pools", pools));
}

static json_t *control_stats(json_t *id, json_t *req)
{
	static const char *const allowed[] = {NULL};
	json_t *r = tide_control_check_keys(id, "stats", req, allowed);

	if (r)
		return r;
	r = stats_result();
	if (!r)
		return tide_control_err(id, "internal", NULL, "out of memory");
	return tide_control_ok(id, r);
}

/* Reads an optional port field: absent is 0. Returns 0 or -EINVAL. */
static int control_port_arg(json_t *req, const char *key, uint16_t *out)
{
	json_t *v = json_object_get(req, key);

	*out = 0;
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 65535)
		return -EINVAL;
	*out = (uint16_t)json_integer_value(v);
	return 0;
}

static int control_addr_arg(json_t *v, struct tide_flow *f, uint8_t *dst)
{
	const char *s = json_string_value(v);
	uint8_t family;

	if (!s)
		return -EINVAL;
	if (inet_pton(AF_INET, s, dst) == 1)
		family = 4;
	else if (inet_pton(AF_INET6, s, dst) == 1)
		family = 6;
	else
		return -EINVAL;
	if (f->family && f->family != family)
		return -EPROTO;
	f->family = family;
	return 0;
}

static json_t *control_explain(json_t *id, json_t *req)
{
	static const char *const allowed[] = {"src_addr", "dst_addr", "protocol",
					      "src_port", "dst_port", NULL};
	const char *proto = json_string_value(json_object_get(req, "protocol"));
	const struct tide_fwd_set *set;
	struct tide_decision d;
	struct tide_hash_config hash = {0, 0};
	struct tide_flow f;
	enum tide_verdict v;
	json_t *r, *hops, *alt = NULL;
	const char *pool_name;
	static struct table_info info; /* control thread only */
	char digest[17];
	int rc;

	r = tide_control_check_keys(id, "explain", req, allowed);
	if (r)
		return r;
	memset(&f, 0, sizeof(f));
	memset(&d, 0, sizeof(d));
	rc = control_addr_arg(json_object_get(req, "src_addr"), &f, f.src);
	if (rc == 0)
		rc = control_addr_arg(json_object_get(req, "dst_addr"), &f, f.dst);
	if (rc == -EPROTO)
		return tide_control_err(id, "bad_request", NULL,
					"\"src_addr\" and \"dst_addr\" must be the same family");
	if (rc)
		return tide_control_err(
			id, "bad_request", NULL,
			"\"src_addr\" and \"dst_addr\" must be IPv4 or IPv6 addresses");
	if (control_port_arg(req, "src_port", &f.src_port) ||
	    control_port_arg(req, "dst_port", &f.dst_port))
		return tide_control_err(id, "bad_request", NULL,
					"\"src_port\" and \"dst_port\" must be integers 0..65535");
	if (proto && strcmp(proto, "tcp") == 0) {
		f.proto = TIDE_IPPROTO_TCP;
	} else if (proto && strcmp(proto, "udp") == 0) {
		f.proto = TIDE_IPPROTO_UDP;
	} else if (proto && strcmp(proto, "icmp") == 0) {
		/* An echo request: hashed like the packet path does, with ports 0. */
		if (f.src_port || f.dst_port)
			return tide_control_err(id, "bad_request", NULL,
						"ports do not apply to protocol icmp");
		f.kind = TIDE_FLOW_ICMP_ECHO;
		f.proto = f.family == 4 ? TIDE_IPPROTO_ICMP : TIDE_IPPROTO_ICMPV6;
	} else {
		return tide_control_err(id, "bad_request", NULL,
					"\"protocol\" must be \"tcp\", \"udp\" or \"icmp\"");
	}

	table_info_get(&info);
	rte_rcu_qsbr_thread_online(worker_rcu, WORKER_RCU_CONTROL_ID);
	set = table_current();
	if (!set) {
		rte_rcu_qsbr_thread_offline(worker_rcu, WORKER_RCU_CONTROL_ID);
		return tide_control_err(id, "no_table", NULL, "no forwarding table is loaded");
	}
	v = tide_fwd_decide(set, &f, &d);
	if (v == TIDE_FORWARD)
		hash = set->tables[d.table].hash;
	rte_rcu_qsbr_thread_offline(worker_rcu, WORKER_RCU_CONTROL_ID);
	if (v != TIDE_FORWARD)
		return tide_control_err(id, "no_bind", NULL, "no pool binds %s %s port %u", proto,
					json_string_value(json_object_get(req, "dst_addr")),
					f.dst_port);

	hops = json_array();
	for (unsigned int i = 0; i < d.hop_count; i++)
		json_array_append_new(hops, control_ipv4_json(d.hops[i]));
	if (d.hop_count == TIDE_MAX_HOPS)
		alt = json_pack("{s:i,s:o,s:o}", "row", (int)d.alt_row, "primary",
				control_ipv4_json(d.hops[1]), "secondary",
				control_ipv4_json(d.hops[2]));
	pool_name = d.table < info.num_pools ? info.pools[d.table].name : "";
	snprintf(digest, sizeof(digest), "%016llx", (unsigned long long)d.digest);
	return tide_control_ok(
		id,
		control_add_fields(
			json_pack("{s:s,s:i,s:i,s:s,s:o,s:o,s:o,s:i,s:o}", "pool", pool_name,
				  "pool_index", (int)d.table, "row", (int)d.row, "digest", digest,
				  "primary", control_ipv4_json(d.primary), "secondary",
				  control_ipv4_json(d.hops[0]), "hops", hops, "outer_source_port",
				  (int)d.outer_sport, "alt", alt ? alt : json_null()),
			&hash));
}

static json_t *control_set_gateway(json_t *id, json_t *req)
{
	static const char *const allowed[] = {"mac", "source_ip", NULL};
	const char *mac_s = json_string_value(json_object_get(req, "mac"));
	const char *ip_s = json_string_value(json_object_get(req, "source_ip"));
	uint8_t mac[6];
	uint32_t ip;
	json_t *r;
	int rc;

	r = tide_control_check_keys(id, "set_gateway", req, allowed);
	if (r)
		return r;
	if (!mac_s || config_parse_mac(mac_s, mac))
		return tide_control_err(id, "bad_request", NULL,
					"\"mac\" must be a MAC address like \"aa:bb:cc:dd:ee:ff\"");
	if (!ip_s || config_parse_ipv4(ip_s, &ip))
		return tide_control_err(id, "bad_request", NULL,
					"\"source_ip\" must be an IPv4 address like \"192.0.2.1\"");
	rc = worker_set_gateway(mac, ip);
	if (rc)
		return tide_control_err(id, "internal", NULL, "cannot set the gateway: %s",
					strerror(-rc));
	RTE_LOG(INFO, TIDE, "gateway set to %s, source %s\n", mac_s, ip_s);
	return tide_control_ok(id, json_pack("{s:o,s:o}", "mac", control_mac_json(mac), "source_ip",
					     control_ipv4_json(ip)));
}

static json_t *control_no_args(json_t *id, const char *cmd, json_t *req)
{
	static const char *const allowed[] = {NULL};

	return tide_control_check_keys(id, cmd, req, allowed);
}

/* The director's commands; NULL for anything else (the server answers unknown_command). */
static json_t *control_dispatch(void *ctx, json_t *id, const char *cmd, json_t *req)
{
	(void)ctx;
	if (strcmp(cmd, "status") == 0)
		return control_no_args(id, cmd, req) ?: control_status(id);
	if (strcmp(cmd, "load_table") == 0)
		return control_load_table(id, req);
	if (strcmp(cmd, "stats") == 0)
		return control_stats(id, req);
	if (strcmp(cmd, "explain") == 0)
		return control_explain(id, req);
	if (strcmp(cmd, "set_gateway") == 0)
		return control_set_gateway(id, req);
	return NULL;
}

int director_control_open(const struct director_config *cfg)
{
	int rc;

	control_cfg = cfg;
	clock_gettime(CLOCK_REALTIME, &control_started_real);
	clock_gettime(CLOCK_MONOTONIC, &control_started_mono);
	rc = tide_control_open(&control_server, cfg->control_socket, "tide-director",
			       "status, load_table, stats, explain, set_gateway", control_dispatch,
			       NULL);
	if (rc == 0)
		RTE_LOG(INFO, TIDE, "control: listening on %s\n", cfg->control_socket);
	return rc;
}

int director_control_run(void)
{
	int rc;

	rc = rte_rcu_qsbr_thread_register(worker_rcu, WORKER_RCU_CONTROL_ID);
	if (rc)
		return -EINVAL;
	/* Offline except while reading the table; table_load() waits on the other readers. */
	while (!worker_quit) {
		tide_control_poll(&control_server, CONTROL_POLL_MS);
		/* SIGHUP: at most CONTROL_POLL_MS late, between two requests. */
		service_reload_pending();
	}
	rte_rcu_qsbr_thread_unregister(worker_rcu, WORKER_RCU_CONTROL_ID);
	return 0;
}

void *director_control_thread(void *arg)
{
	(void)arg;
	director_control_run();
	return NULL;
}

void director_control_close(void)
{
	tide_control_close(&control_server);
}
