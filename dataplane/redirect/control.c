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
	return NULL;
}

int redirect_control_open(struct redirect_state *st, const char *path)
{
	return tide_control_open(&control_server, path, "tide-redirect", "status, stats, config",
				 control_dispatch, st);
}

int redirect_control_poll(int timeout_ms)
{
	return tide_control_poll(&control_server, timeout_ms);
}

void redirect_control_close(void)
{
	tide_control_close(&control_server);
}
