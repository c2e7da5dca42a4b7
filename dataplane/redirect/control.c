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

#include "redirect_maps.h"
#include "tide_control.h"

static struct tide_control_server control_server;

/* ---- replies ---- */

static json_t *control_addrs_json(const struct tide_redirect_config *cfg)
{
	json_t *a = json_array();

	for (__u32 i = 0; i < cfg->num_local && i < TIDE_REDIRECT_MAX_LOCAL; i++) {
		char buf[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &cfg->local_addrs[i], buf, sizeof(buf));
		json_array_append_new(a, json_string(buf));
	}
	return a;
}

static json_t *control_status(const struct redirect_state *st, json_t *id)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return tide_control_ok(
		id, json_pack("{s:s,s:i,s:o,s:f,s:s,s:i,s:o,s:s,s:I,s:i,s:o}", "version",
			      TIDE_VERSION, "pid", (int)getpid(), "started_at",
			      tide_control_time(&st->started_real), "uptime_s",
			      (double)(now.tv_sec - st->started_mono.tv_sec) +
				      (double)(now.tv_nsec - st->started_mono.tv_nsec) / 1e9,
			      "iface", st->iface, "ifindex", st->ifindex, "netns",
			      st->netns[0] ? json_string(st->netns) : json_null(), "attach",
			      "tc-ingress", "prog_id", (json_int_t)st->prog_id, "port",
			      (int)st->cfg.port, "local_addresses", control_addrs_json(&st->cfg)));
}

/* One VIP of the stats reply: {address, port, proto, counters}. */
static json_t *control_vip_json(const struct redirect_vip *v)
{
	char addr[INET6_ADDRSTRLEN] = "";
	json_t *counters = json_object();

	inet_ntop(v->key.family == TR_VIP_FAMILY_IPV6 ? AF_INET6 : AF_INET, v->key.addr, addr,
		  sizeof(addr));
	for (unsigned int i = 0; i < TR_VIP_COUNTER_COUNT; i++)
		json_object_set_new(counters, redirect_vip_counter_names[i],
				    json_integer((json_int_t)v->packets[i]));
	return json_pack("{s:s,s:i,s:s,s:o}", "address", addr, "port", (int)ntohs(v->key.port),
			 "proto", v->key.proto == IPPROTO_UDP ? "udp" : "tcp", "counters",
			 counters);
}

static json_t *control_stats(const struct redirect_state *st, json_t *id)
{
	__u64 v[TR_COUNTER_COUNT];
	struct redirect_vip *vips = NULL;
	json_t *counters, *list;
	size_t nvips = 0;
	int rc = redirect_counters_read(st, v);

	if (!rc)
		rc = redirect_vips_read(st, &vips, &nvips);
	if (rc)
		return tide_control_err(id, "internal", NULL, "cannot read the stats maps: %s",
					strerror(-rc));
	counters = json_object();
	for (unsigned int i = 0; i < TR_COUNTER_COUNT; i++)
		json_object_set_new(counters, redirect_counter_names[i],
				    json_integer((json_int_t)v[i]));
	list = json_array();
	for (size_t i = 0; i < nvips; i++)
		json_array_append_new(list, control_vip_json(&vips[i]));
	free(vips);
	return tide_control_ok(id, json_pack("{s:o,s:o}", "counters", counters, "vips", list));
}

/* ---- flows ---- */

/* The newest packet of any kind of `f`, bpf_ktime_get_ns() ns (0: none yet). */
static __u64 flow_newest_ns(const struct tide_redirect_flow *f)
{
	__u64 newest = 0;

	for (unsigned int i = 0; i < TR_FLOW_KIND_COUNT; i++)
		if (f->kinds[i].last_ns > newest)
			newest = f->kinds[i].last_ns;
	return newest;
}

/* qsort order of the flows reply: newest first. */
static int flow_newest_first(const void *a, const void *b)
{
	__u64 x = flow_newest_ns(&((const struct redirect_flow *)a)->value);
	__u64 y = flow_newest_ns(&((const struct redirect_flow *)b)->value);

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Whole ms from `then_ns` to `now_ns` (0 if `then_ns` is later: a packet after the clock read). */
static json_int_t ms_ago(__u64 now_ns, __u64 then_ns)
{
	return then_ns < now_ns ? (json_int_t)((now_ns - then_ns) / 1000000u) : 0;
}

/*
 * One kind of a flow: {packets, last_seen_ms_ago}, or null when it never happened. A kind older
 * than the window is still reported, with its own age: that age is what tells a 5-tuple reused by
 * a later connection from the old connection's last resort (the reader compares it).
 */
static json_t *control_flow_kind_json(const struct tide_redirect_flow_kind_seen *k, __u64 now_ns)
{
	if (k->packets == 0 || k->last_ns == 0)
		return json_null();
	return json_pack("{s:I,s:I}", "packets", (json_int_t)k->packets, "last_seen_ms_ago",
			 ms_ago(now_ns, k->last_ns));
}

/* One flow of the flows reply. */
static json_t *control_flow_json(const struct redirect_flow *f, __u64 now_ns)
{
	int af = f->key.vip.family == TR_VIP_FAMILY_IPV6 ? AF_INET6 : AF_INET;
	char client[INET6_ADDRSTRLEN] = "", vip[INET6_ADDRSTRLEN] = "";
	json_t *j;

	inet_ntop(af, f->key.client_addr, client, sizeof(client));
	inet_ntop(af, f->key.vip.addr, vip, sizeof(vip));
	j = json_pack("{s:s,s:i,s:s,s:i,s:s,s:I}", "client_address", client, "client_port",
		      (int)ntohs(f->key.client_port), "address", vip, "port",
		      (int)ntohs(f->key.vip.port), "proto", "tcp", "first_seen_ms_ago",
		      ms_ago(now_ns, f->value.first_ns));
	for (unsigned int i = 0; i < TR_FLOW_KIND_COUNT; i++)
		json_object_set_new(j, redirect_flow_kind_names[i],
				    control_flow_kind_json(&f->value.kinds[i], now_ns));
	return j;
}

/*
 * `flows`: the flows whose newest second-chance, alternate-hash or last-resort packet is at most
 * since_ms old, newest first, at most REDIRECT_MAX_FLOWS_REPLY; matched counts them all. Ages are
 * taken against one clock read after the map is read (CLOCK_MONOTONIC, bpf_ktime_get_ns's clock).
 */
static json_t *control_flows(const struct redirect_state *st, json_t *id, json_t *req)
{
	static const char *const allowed[] = {"since_ms", NULL};
	json_t *r, *since = json_object_get(req, "since_ms"), *list;
	json_int_t since_ms = REDIRECT_FLOWS_DEFAULT_SINCE_MS;
	struct redirect_flow *flows = NULL;
	__u64 now_ns, since_ns;
	size_t n = 0, matched = 0;
	struct timespec now;
	int rc;

	r = tide_control_check_keys(id, "flows", req, allowed);
	if (r)
		return r;
	if (since) {
		if (!json_is_integer(since) || json_integer_value(since) < 1 ||
		    json_integer_value(since) > REDIRECT_FLOWS_MAX_SINCE_MS)
			return tide_control_err(id, "bad_request", NULL,
						"\"since_ms\" must be an integer 1..%d",
						REDIRECT_FLOWS_MAX_SINCE_MS);
		since_ms = json_integer_value(since);
	}
	rc = redirect_flows_read(st, &flows, &n);
	if (rc)
		return tide_control_err(id, "internal", NULL, "cannot read the flow map: %s",
					strerror(-rc));
	clock_gettime(CLOCK_MONOTONIC, &now);
	now_ns = (__u64)now.tv_sec * 1000000000u + (__u64)now.tv_nsec;
	since_ns = now_ns > (__u64)since_ms * 1000000u ? now_ns - (__u64)since_ms * 1000000u : 1;
	for (size_t i = 0; i < n; i++)
		if (flow_newest_ns(&flows[i].value) >= since_ns)
			flows[matched++] = flows[i];
	qsort(flows, matched, sizeof(*flows), flow_newest_first);
	list = json_array();
	for (size_t i = 0; i < matched && i < REDIRECT_MAX_FLOWS_REPLY; i++)
		json_array_append_new(list, control_flow_json(&flows[i], now_ns));
	free(flows);
	return tide_control_ok(id, json_pack("{s:o,s:I,s:I}", "flows", list, "matched",
					     (json_int_t)matched, "capacity",
					     (json_int_t)TIDE_REDIRECT_MAX_FLOWS));
}

static json_t *control_config_json(const struct redirect_state *st)
{
	return json_pack("{s:i,s:o}", "port", (int)st->cfg.port, "local_addresses",
			 control_addrs_json(&st->cfg));
}

/* `config`: optional local_addresses and port; every field is checked before anything changes. */
static json_t *control_config(struct redirect_state *st, json_t *id, json_t *req)
{
	static const char *const allowed[] = {"local_addresses", "port", NULL};
	json_t *r, *addrs = json_object_get(req, "local_addresses");
	json_t *port = json_object_get(req, "port");
	struct tide_redirect_config cfg = st->cfg;
	int rc;

	r = tide_control_check_keys(id, "config", req, allowed);
	if (r)
		return r;
	if (port) {
		if (!json_is_integer(port) || json_integer_value(port) < 1 ||
		    json_integer_value(port) > 65535)
			return tide_control_err(id, "bad_request", NULL,
						"\"port\" must be an integer 1..65535");
		cfg.port = (__u16)json_integer_value(port);
	}
	if (addrs) {
		size_t i;
		json_t *v;

		if (!json_is_array(addrs) || json_array_size(addrs) == 0 ||
		    json_array_size(addrs) > TIDE_REDIRECT_MAX_LOCAL)
			return tide_control_err(
				id, "bad_request", NULL,
				"\"local_addresses\" must be an array of 1..%u IPv4 "
				"addresses",
				TIDE_REDIRECT_MAX_LOCAL);
		memset(cfg.local_addrs, 0, sizeof(cfg.local_addrs));
		json_array_foreach(addrs, i, v)
		{
			const char *s = json_string_value(v);

			if (!s || inet_pton(AF_INET, s, &cfg.local_addrs[i]) != 1)
				return tide_control_err(
					id, "bad_request", NULL,
					"\"local_addresses\"[%zu] must be an IPv4 address", i);
			for (size_t j = 0; j < i; j++)
				if (cfg.local_addrs[j] == cfg.local_addrs[i])
					return tide_control_err(
						id, "bad_request", NULL,
						"\"local_addresses\"[%zu] repeats %s", i, s);
		}
		cfg.num_local = (__u32)json_array_size(addrs);
	}
	rc = redirect_config_apply(st, &cfg);
	if (rc)
		return tide_control_err(id, "internal", NULL, "cannot update the config map: %s",
					strerror(-rc));
	return tide_control_ok(id, control_config_json(st));
}

/*
 * tide-redirect's commands; NULL for anything else (the server answers unknown_command). `ctx` is
 * the daemon's struct redirect_state, given to tide_control_open().
 */
static json_t *control_dispatch(void *ctx, json_t *id, const char *cmd, json_t *req)
{
	static const char *const none[] = {NULL};
	struct redirect_state *st = ctx;

	if (strcmp(cmd, "status") == 0)
		return tide_control_check_keys(id, cmd, req, none) ?: control_status(st, id);
	if (strcmp(cmd, "stats") == 0)
		return tide_control_check_keys(id, cmd, req, none) ?: control_stats(st, id);
	if (strcmp(cmd, "config") == 0)
		return control_config(st, id, req);
	if (strcmp(cmd, "flows") == 0)
		return control_flows(st, id, req);
	return NULL;
}

int redirect_control_open(struct redirect_state *st, const char *path)
{
	return tide_control_open(&control_server, path, "tide-redirect",
				 "status, stats, config, flows", control_dispatch, st);
}

int redirect_control_poll(int timeout_ms)
{
	return tide_control_poll(&control_server, timeout_ms);
}

void redirect_control_close(void)
{
	tide_control_close(&control_server);
}
