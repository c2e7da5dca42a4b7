/* SPDX-License-Identifier: MIT */
#include "control.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdarg.h>
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
#include "stats.h"
#include "table.h"
#include "tide_forward.h"
#include "worker.h"

#define RTE_LOGTYPE_TIDE RTE_LOGTYPE_USER1

#ifndef TIDE_VERSION
#define TIDE_VERSION "0.1.0"
#endif

struct control_client {
	int fd;
	bool skipping; /* discarding the rest of a line that was too long */
	bool eof;      /* the client shut down its side; close once the replies are sent */
	size_t in_len;
	char *in; /* CONTROL_LINE_MAX + 1 bytes */
	char *out;
	size_t out_len;
	size_t out_cap;
};

static const struct director_config *control_cfg;
static int control_fd = -1;
static char control_path[CONFIG_SOCKET_PATH_MAX];
static struct control_client control_clients[CONTROL_MAX_CLIENTS];
static unsigned int control_num_clients;
static struct timespec control_started_real, control_started_mono;

/* ---- replies ---- */

static json_t *control_ok(json_t *id, json_t *result)
{
	return json_pack("{s:O,s:b,s:o}", "id", id ? id : json_null(), "ok", 1, "result",
			 result ? result : json_object());
}

__attribute__((format(printf, 4, 5))) static json_t *
control_err(json_t *id, const char *code, json_t *detail, const char *fmt, ...)
{
	char msg[600];
	json_t *err;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	err = json_pack("{s:s,s:s}", "code", code, "message", msg);
	if (detail)
		json_object_set_new(err, "detail", detail);
	return json_pack("{s:O,s:b,s:o}", "id", id ? id : json_null(), "ok", 0, "error", err);
}

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
	return control_err(id, e->code, detail, "%s", e->message);
}

/* ---- formatting ---- */

static void control_time(const struct timespec *ts, char *buf, size_t len)
{
	struct tm tm;
	char base[32];

	gmtime_r(&ts->tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03ldZ", base, ts->tv_nsec / 1000000L);
}

static json_t *control_time_json(const struct timespec *ts)
{
	char buf[48];

	control_time(ts, buf, sizeof(buf));
	return json_string(buf);
}

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

/* Rejects any key not in `allowed` (NULL-terminated); "id" and "cmd" are always allowed. */
static json_t *control_check_keys(json_t *id, const char *cmd, json_t *req,
				  const char *const *allowed)
{
	const char *key;
	json_t *v;

	json_object_foreach(req, key, v)
	{
		int ok = strcmp(key, "id") == 0 || strcmp(key, "cmd") == 0;

		for (const char *const *a = allowed; !ok && *a; a++)
			ok = strcmp(key, *a) == 0;
		if (!ok)
			return control_err(id, "bad_request", NULL, "unknown field \"%s\" for %s",
					   key, cmd);
	}
	return NULL;
}

/* ---- commands ---- */

static json_t *control_pool_json(const struct tide_fwd_table *tbl, uint32_t index,
				 const struct table_pool *pool)
{
	static const char *const states[] = {"filling", "active", "draining"};
	json_t *backends = json_array(), *binds = json_array();
	uint32_t n_binds = tide_rd_le32(tbl->raw + TIDE_GLBD_NUM_BINDS_OFF);

	for (uint32_t i = 0; i < tbl->num_backends; i++) {
		const uint8_t *b = tbl->raw + TIDE_GLBD_BACKENDS_OFF + i * TIDE_GLBD_BACKEND_SIZE;

		json_array_append_new(backends, json_pack("{s:i,s:o,s:s,s:b}", "slot", (int)i,
							  "address", control_glbd_addr_json(b),
							  "state", states[tide_rd_le16(b + 20)],
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
	return json_pack("{s:i,s:s,s:s,s:o,s:o,s:o}", "index", (int)index, "name", pool->name,
			 "content_hash", pool->content_hash, "loaded_at",
			 control_time_json(&pool->loaded_at), "backends", backends, "binds", binds);
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
		rte_eth_link_get_nowait(port, &link);
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
				  control_time_json(&info.loaded_at), "load_ms", info.load_ms);
	} else {
		table = json_null();
	}
	rte_rcu_qsbr_thread_offline(worker_rcu, WORKER_RCU_CONTROL_ID);

	clock_gettime(CLOCK_MONOTONIC, &now);
	return control_ok(
		id, json_pack("{s:s,s:i,s:o,s:f,s:o,s:o,s:{s:o,s:o},s:i,s:o,s:o,s:o,s:o}",
			      "version", TIDE_VERSION, "pid", (int)getpid(), "started_at",
			      control_time_json(&control_started_real), "uptime_s",
			      (double)(now.tv_sec - control_started_mono.tv_sec) +
				      (double)(now.tv_nsec - control_started_mono.tv_nsec) / 1e9,
			      "hash_fields", control_fields_json(worker_params.hash.fields),
			      "alt_hash_fields", control_fields_json(worker_params.hash.alt_fields),
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

	r = control_check_keys(id, "load_table", req, allowed);
	if (r)
		return r;
	if (!json_is_string(path) || json_string_length(path) == 0)
		return control_err(id, "bad_request", NULL, "\"path\" must be a non-empty string");
	if (jn) {
		size_t i;
		json_t *v;

		if (!json_is_array(jn))
			return control_err(id, "bad_request", NULL,
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
				return control_err(id, "bad_request", NULL,
						   "\"pool_names\"[%zu] must be a string", i);
			names[i] = json_string_value(v);
		}
		n = (uint32_t)json_array_size(jn);
	}
	if (table_load(json_string_value(path), jn ? names : NULL, n, &info, &err))
		return control_table_err(id, &err, json_string_value(path));
	pools = json_array();
	for (uint32_t t = 0; t < info.num_pools; t++)
		json_array_append_new(pools, json_pack("{s:i,s:s,s:s}", "index", (int)t, "name",
						       info.pools[t].name, "content_hash",
						       info.pools[t].content_hash));
	return control_ok(id, json_pack("{s:I,s:f,s:o}", "generation", (json_int_t)info.generation,
					"load_ms", info.load_ms, "pools", pools));
}

static json_t *control_stats(json_t *id, json_t *req)
{
	static const char *const allowed[] = {NULL};
	json_t *r = control_check_keys(id, "stats", req, allowed);

	if (r)
		return r;
	r = stats_result();
	if (!r)
		return control_err(id, "internal", NULL, "out of memory");
	return control_ok(id, r);
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
	struct tide_flow f;
	enum tide_verdict v;
	json_t *r, *hops, *alt = NULL;
	const char *pool_name;
	static struct table_info info; /* control thread only */
	char digest[17];
	int rc;

	r = control_check_keys(id, "explain", req, allowed);
	if (r)
		return r;
	memset(&f, 0, sizeof(f));
	memset(&d, 0, sizeof(d));
	rc = control_addr_arg(json_object_get(req, "src_addr"), &f, f.src);
	if (rc == 0)
		rc = control_addr_arg(json_object_get(req, "dst_addr"), &f, f.dst);
	if (rc == -EPROTO)
		return control_err(id, "bad_request", NULL,
				   "\"src_addr\" and \"dst_addr\" must be the same family");
	if (rc)
		return control_err(id, "bad_request", NULL,
				   "\"src_addr\" and \"dst_addr\" must be IPv4 or IPv6 addresses");
	if (control_port_arg(req, "src_port", &f.src_port) ||
	    control_port_arg(req, "dst_port", &f.dst_port))
		return control_err(id, "bad_request", NULL,
				   "\"src_port\" and \"dst_port\" must be integers 0..65535");
	if (proto && strcmp(proto, "tcp") == 0) {
		f.proto = TIDE_IPPROTO_TCP;
	} else if (proto && strcmp(proto, "udp") == 0) {
		f.proto = TIDE_IPPROTO_UDP;
	} else if (proto && strcmp(proto, "icmp") == 0) {
		/* An echo request: hashed like the packet path does, with ports 0. */
		if (f.src_port || f.dst_port)
			return control_err(id, "bad_request", NULL,
					   "ports do not apply to protocol icmp");
		f.kind = TIDE_FLOW_ICMP_ECHO;
		f.proto = f.family == 4 ? TIDE_IPPROTO_ICMP : TIDE_IPPROTO_ICMPV6;
	} else {
		return control_err(id, "bad_request", NULL,
				   "\"protocol\" must be \"tcp\", \"udp\" or \"icmp\"");
	}

	table_info_get(&info);
	rte_rcu_qsbr_thread_online(worker_rcu, WORKER_RCU_CONTROL_ID);
	set = table_current();
	if (!set) {
		rte_rcu_qsbr_thread_offline(worker_rcu, WORKER_RCU_CONTROL_ID);
		return control_err(id, "no_table", NULL, "no forwarding table is loaded");
	}
	v = tide_fwd_decide(set, &worker_params.hash, &f, &d);
	rte_rcu_qsbr_thread_offline(worker_rcu, WORKER_RCU_CONTROL_ID);
	if (v != TIDE_FORWARD)
		return control_err(id, "no_bind", NULL, "no pool binds %s %s port %u", proto,
				   json_string_value(json_object_get(req, "dst_addr")), f.dst_port);

	hops = json_array();
	for (unsigned int i = 0; i < d.hop_count; i++)
		json_array_append_new(hops, control_ipv4_json(d.hops[i]));
	if (d.hop_count == TIDE_MAX_HOPS)
		alt = json_pack("{s:i,s:o,s:o}", "row", (int)d.alt_row, "primary",
				control_ipv4_json(d.hops[1]), "secondary",
				control_ipv4_json(d.hops[2]));
	pool_name = d.table < info.num_pools ? info.pools[d.table].name : "";
	snprintf(digest, sizeof(digest), "%016llx", (unsigned long long)d.digest);
	return control_ok(id,
			  json_pack("{s:s,s:i,s:i,s:s,s:o,s:o,s:o,s:i,s:o}", "pool", pool_name,
				    "pool_index", (int)d.table, "row", (int)d.row, "digest", digest,
				    "primary", control_ipv4_json(d.primary), "secondary",
				    control_ipv4_json(d.hops[0]), "hops", hops, "outer_source_port",
				    (int)d.outer_sport, "alt", alt ? alt : json_null()));
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

	r = control_check_keys(id, "set_gateway", req, allowed);
	if (r)
		return r;
	if (!mac_s || config_parse_mac(mac_s, mac))
		return control_err(id, "bad_request", NULL,
				   "\"mac\" must be a MAC address like \"aa:bb:cc:dd:ee:ff\"");
	if (!ip_s || config_parse_ipv4(ip_s, &ip))
		return control_err(id, "bad_request", NULL,
				   "\"source_ip\" must be an IPv4 address like \"192.0.2.1\"");
	rc = worker_set_gateway(mac, ip);
	if (rc)
		return control_err(id, "internal", NULL, "cannot set the gateway: %s",
				   strerror(-rc));
	RTE_LOG(INFO, TIDE, "gateway set to %s, source %s\n", mac_s, ip_s);
	return control_ok(id, json_pack("{s:o,s:o}", "mac", control_mac_json(mac), "source_ip",
					control_ipv4_json(ip)));
}

static json_t *control_no_args(json_t *id, const char *cmd, json_t *req)
{
	static const char *const allowed[] = {NULL};

	return control_check_keys(id, cmd, req, allowed);
}

/* One request line -> one reply object. */
static json_t *control_handle(const char *line, size_t len)
{
	json_error_t jerr;
	json_t *req, *id, *cmd, *reply;
	const char *c;

	req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!req)
		return control_err(NULL, "bad_request", NULL, "not JSON: %s (column %d)", jerr.text,
				   jerr.column);
	if (!json_is_object(req)) {
		json_decref(req);
		return control_err(NULL, "bad_request", NULL, "the request must be a JSON object");
	}
	id = json_object_get(req, "id");
	if (id && !json_is_string(id) && !json_is_integer(id)) {
		json_decref(req);
		return control_err(NULL, "bad_request", NULL,
				   "\"id\" must be a string or an integer");
	}
	cmd = json_object_get(req, "cmd");
	c = json_string_value(cmd);
	if (!c)
		reply = control_err(id, "bad_request", NULL, "\"cmd\" must be a string");
	else if (strcmp(c, "status") == 0)
		reply = control_no_args(id, c, req) ?: control_status(id);
	else if (strcmp(c, "load_table") == 0)
		reply = control_load_table(id, req);
	else if (strcmp(c, "stats") == 0)
		reply = control_stats(id, req);
	else if (strcmp(c, "explain") == 0)
		reply = control_explain(id, req);
	else if (strcmp(c, "set_gateway") == 0)
		reply = control_set_gateway(id, req);
	else
		reply = control_err(id, "unknown_command", NULL,
				    "unknown command \"%s\" (status, load_table, stats, explain, "
				    "set_gateway)",
				    c);
	json_decref(req);
	return reply;
}

/* ---- connections ---- */

static void control_drop_client(unsigned int i)
{
	struct control_client *cl = &control_clients[i];

	close(cl->fd);
	free(cl->in);
	free(cl->out);
	control_clients[i] = control_clients[--control_num_clients];
	memset(&control_clients[control_num_clients], 0, sizeof(*cl));
}

/* Sends what the socket takes now. Returns 0, or -errno when the client is gone. */
static int control_flush(struct control_client *cl)
{
	while (cl->out_len) {
		ssize_t n = send(cl->fd, cl->out, cl->out_len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -errno;
		}
		memmove(cl->out, cl->out + n, cl->out_len - (size_t)n);
		cl->out_len -= (size_t)n;
	}
	return 0;
}

static int control_reply(struct control_client *cl, json_t *reply)
{
	char *s = reply ? json_dumps(reply, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
	size_t len;

	json_decref(reply);
	if (!s)
		return -ENOMEM;
	len = strlen(s);
	if (cl->out_len + len + 1 > CONTROL_OUT_MAX) {
		free(s);
		return -ENOBUFS;
	}
	if (cl->out_len + len + 1 > cl->out_cap) {
		size_t cap = cl->out_cap ? cl->out_cap : 4096;
		char *p;

		while (cap < cl->out_len + len + 1)
			cap *= 2;
		p = realloc(cl->out, cap);
		if (!p) {
			free(s);
			return -ENOMEM;
		}
		cl->out = p;
		cl->out_cap = cap;
	}
	memcpy(cl->out + cl->out_len, s, len);
	cl->out[cl->out_len + len] = '\n';
	cl->out_len += len + 1;
	free(s);
	return control_flush(cl);
}

/* Handles every complete line in the input buffer. Returns 0 or -errno to drop the client. */
static int control_lines(struct control_client *cl)
{
	size_t start = 0;
	int rc = 0;

	for (size_t i = 0; i < cl->in_len && rc == 0; i++) {
		size_t end = i;

		if (cl->in[i] != '\n')
			continue;
		if (cl->skipping) {
			cl->skipping = false;
		} else {
			if (end > start && cl->in[end - 1] == '\r')
				end--;
			/* Blank lines (an interactive user pressing enter) are not requests. */
			if (strspn(cl->in + start, " \t\r") < end - start)
				rc = control_reply(cl, control_handle(cl->in + start, end - start));
		}
		start = i + 1;
	}
	memmove(cl->in, cl->in + start, cl->in_len - start);
	cl->in_len -= start;
	if (rc == 0 && cl->in_len > CONTROL_LINE_MAX) {
		/* No newline within the limit: answer once, then discard up to the next newline. */
		if (!cl->skipping)
			rc = control_reply(cl, control_err(NULL, "line_too_long", NULL,
							   "request line longer than %u bytes",
							   CONTROL_LINE_MAX));
		cl->skipping = true;
		cl->in_len = 0;
	}
	return rc;
}

static int control_read(struct control_client *cl)
{
	for (;;) {
		ssize_t n = recv(cl->fd, cl->in + cl->in_len, CONTROL_LINE_MAX + 1 - cl->in_len,
				 MSG_DONTWAIT);
		int rc;

		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -errno;
		}
		cl->in_len += (size_t)n;
		rc = control_lines(cl);
		if (rc)
			return rc;
	}
}

static void control_accept(void)
{
	struct control_client *cl;
	int fd = accept4(control_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (control_num_clients == CONTROL_MAX_CLIENTS) {
		RTE_LOG(WARNING, TIDE, "control: %u clients connected, refusing another\n",
			CONTROL_MAX_CLIENTS);
		close(fd);
		return;
	}
	cl = &control_clients[control_num_clients];
	memset(cl, 0, sizeof(*cl));
	cl->fd = fd;
	cl->in = malloc(CONTROL_LINE_MAX + 1);
	if (!cl->in) {
		close(fd);
		return;
	}
	control_num_clients++;
}

int control_open(const struct director_config *cfg)
{
	struct sockaddr_un addr;
	int fd, rc;

	control_cfg = cfg;
	clock_gettime(CLOCK_REALTIME, &control_started_real);
	clock_gettime(CLOCK_MONOTONIC, &control_started_mono);
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", cfg->control_socket);
	snprintf(control_path, sizeof(control_path), "%s", cfg->control_socket);

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A socket file left by a previous run that died would make bind() fail. */
	if (unlink(addr.sun_path) < 0 && errno != ENOENT) {
		rc = -errno;
		RTE_LOG(ERR, TIDE, "control: cannot remove stale %s: %s\n", addr.sun_path,
			strerror(-rc));
		close(fd);
		return rc;
	}
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    chmod(addr.sun_path, 0660) < 0 || listen(fd, 16) < 0) {
		rc = -errno;
		RTE_LOG(ERR, TIDE, "control: cannot listen on %s: %s\n", addr.sun_path,
			strerror(-rc));
		close(fd);
		unlink(addr.sun_path);
		return rc;
	}
	control_fd = fd;
	RTE_LOG(INFO, TIDE, "control: listening on %s\n", addr.sun_path);
	return 0;
}

int control_run(void)
{
	struct pollfd fds[CONTROL_MAX_CLIENTS + 1];
	int rc;

	rc = rte_rcu_qsbr_thread_register(worker_rcu, WORKER_RCU_CONTROL_ID);
	if (rc)
		return -EINVAL;
	/* Offline except while reading the table; table_load() waits on the other readers. */
	while (!worker_quit) {
		unsigned int n = control_num_clients;

		fds[0].fd = control_fd;
		fds[0].events = POLLIN;
		for (unsigned int i = 0; i < n; i++) {
			fds[i + 1].fd = control_clients[i].fd;
			fds[i + 1].events = (short)((control_clients[i].eof ? 0 : POLLIN) |
						    (control_clients[i].out_len ? POLLOUT : 0));
			fds[i + 1].revents = 0;
		}
		rc = poll(fds, n + 1, CONTROL_POLL_MS);
		if (rc <= 0)
			continue; /* timeout, or EINTR from the stop signal */
		/* Backwards: dropping client i moves the last one into slot i. */
		for (unsigned int i = n; i-- > 0;) {
			struct control_client *cl = &control_clients[i];
			short ev = fds[i + 1].revents;
			int crc = 0;

			if (!cl->eof && (ev & (POLLIN | POLLHUP | POLLERR)))
				crc = control_read(cl);
			/* socat and scripts half-close after the request: still send the replies. */
			if (crc == -ECONNRESET) {
				cl->eof = true;
				crc = control_flush(cl);
			} else if (crc == 0 && (ev & POLLOUT)) {
				crc = control_flush(cl);
			}
			if (crc || (cl->eof && cl->out_len == 0) || (ev & POLLERR))
				control_drop_client(i);
		}
		if (fds[0].revents & POLLIN)
			control_accept();
	}
	rte_rcu_qsbr_thread_unregister(worker_rcu, WORKER_RCU_CONTROL_ID);
	return 0;
}

void *control_thread(void *arg)
{
	(void)arg;
	control_run();
	return NULL;
}

void control_close(void)
{
	while (control_num_clients)
		control_drop_client(control_num_clients - 1);
	if (control_fd >= 0) {
		close(control_fd);
		control_fd = -1;
		unlink(control_path);
	}
}
