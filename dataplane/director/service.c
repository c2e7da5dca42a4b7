/* SPDX-License-Identifier: MIT */
#include "service.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_log.h>

#include "reload_plan.h"
#include "table.h"
#include "tide_sd_notify.h"
#include "worker.h"

#define RTE_LOGTYPE_TIDE RTE_LOGTYPE_USER1

static struct director_config *service_cfg;
static const char *service_config_path;
static const char *service_control_override;
static const char *service_table_override;
static volatile sig_atomic_t service_reload_requested;

void service_init(struct director_config *cfg, const char *config_path, const char *control,
		  const char *table)
{
	service_cfg = cfg;
	service_config_path = config_path;
	service_control_override = control;
	service_table_override = table;
}

void service_request_reload(void)
{
	service_reload_requested = 1;
}

void service_status_line(char *buf, size_t len)
{
	static struct table_info info; /* control or main thread; too big for a thread stack */

	table_info_get(&info);
	if (info.generation)
		snprintf(
			buf, len,
			"forwarding on %u port(s) with %u lcore(s); table generation %llu (%.512s)",
			(unsigned int)rte_eth_dev_count_avail(), worker_count,
			(unsigned long long)info.generation, info.path);
	else
		snprintf(buf, len,
			 "forwarding on %u port(s) with %u lcore(s); no table loaded (send "
			 "load_table)",
			 (unsigned int)rte_eth_dev_count_avail(), worker_count);
}

/* READY=1 and a STATUS= line that starts with `note` when there is one. */
static void service_notify_ready(const char *note)
{
	char status[1024];
	int rc;

	service_status_line(status, sizeof(status));
	if (note)
		rc = tide_sd_notifyf("READY=1\nSTATUS=%s; %s", note, status);
	else
		rc = tide_sd_notifyf("READY=1\nSTATUS=%s", status);
	if (rc)
		RTE_LOG(WARNING, TIDE, "cannot notify systemd: %s\n", strerror(-rc));
}

void service_ready(void)
{
	service_notify_ready(NULL);
}

void service_stopping(void)
{
	tide_sd_notify("STOPPING=1\nSTATUS=stopping");
}

/* "a, b, c" from a list of keys. */
static void service_keys(const char *const *keys, uint32_t n, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", keys[i]);
}

/* The refusal: logged, and READY=1 again with the reason (the old configuration serves on). */
static void service_refuse(const char *why)
{
	char note[1100];

	RTE_LOG(ERR, TIDE, "reload refused, the running configuration stays: %s\n", why);
	snprintf(note, sizeof(note), "reload refused (%s)", why);
	service_notify_ready(note);
}

static void service_reload(void)
{
	/* Control thread only; the structs are too big for its stack. */
	static struct director_config next;
	static struct table_info serving;
	struct reload_plan plan;
	struct table_error terr;
	char err[1024], keys[256];

	RTE_LOG(INFO, TIDE, "reload: reading %s\n", service_config_path);
	tide_sd_notify_reloading("reloading the configuration");
	if (config_load(service_config_path, &next, err, sizeof(err)) ||
	    config_override(&next, service_control_override, service_table_override, err,
			    sizeof(err))) {
		service_refuse(err);
		return;
	}
	table_info_get(&serving);
	reload_plan_make(service_cfg, &next, serving.generation ? serving.path : "", &plan);

	for (uint32_t i = 0; i < plan.num_restart; i++)
		RTE_LOG(WARNING, TIDE,
			"reload: \"%s\" changed, but only a restart applies it (systemctl restart "
			"tide-director); keeping the running value\n",
			plan.restart[i]);
	if (plan.actions & RELOAD_TABLE) {
		/* The load names and hashes the tables with the new keys. */
		table_init(&next);
		if (table_load(next.table_file, NULL, 0, NULL, &terr) != 0) {
			table_init(service_cfg);
			/* With no table serving there is nothing to keep: as at start, only log. */
			if (serving.generation) {
				snprintf(err, sizeof(err), "table_file %.300s: %.500s",
					 next.table_file, terr.message);
				service_refuse(err);
				return;
			}
			RTE_LOG(WARNING, TIDE,
				"reload: still no table; send load_table on the control socket\n");
		}
	} else if (plan.table_reason == RELOAD_TABLE_KEPT_CONTROL) {
		RTE_LOG(INFO, TIDE,
			"reload: table_file %s not re-read: %s, loaded over the control socket, "
			"keeps serving\n",
			next.table_file, serving.path);
	}
	if (plan.actions & RELOAD_GATEWAY) {
		int rc = worker_set_gateway(next.gateway_mac, next.source_ip);

		if (rc)
			RTE_LOG(ERR, TIDE, "reload: cannot set the gateway: %s\n", strerror(-rc));
	}
	if (plan.actions & RELOAD_PARAMS) {
		/* Workers read these at every burst; each is one aligned word. */
		__atomic_store_n(&worker_params.mtu, next.mtu, __ATOMIC_RELAXED);
		__atomic_store_n(&worker_params.burst, next.burst, __ATOMIC_RELAXED);
		__atomic_store_n(&worker_params.idle_sleep_us, next.idle_sleep_us,
				 __ATOMIC_RELAXED);
	}
	*service_cfg = next;
	table_init(service_cfg);

	service_keys(plan.live, plan.num_live, keys, sizeof(keys));
	RTE_LOG(INFO, TIDE, "reload: done; applied: %s\n", plan.num_live ? keys : "no change");
	if (plan.num_deferred) {
		service_keys(plan.deferred, plan.num_deferred, keys, sizeof(keys));
		RTE_LOG(INFO, TIDE, "reload: %s apply at the next load_table\n", keys);
	}
	if (plan.num_restart) {
		service_keys(plan.restart, plan.num_restart, keys, sizeof(keys));
		snprintf(err, sizeof(err), "%s need a restart", keys);
		service_notify_ready(err);
	} else {
		service_notify_ready(NULL);
	}
}

void service_reload_pending(void)
{
	if (!service_reload_requested)
		return;
	service_reload_requested = 0;
	service_reload();
}
