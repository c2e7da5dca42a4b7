/* SPDX-License-Identifier: MIT */
/*
 * tide-director as a systemd service (Type=notify, ExecReload=kill -HUP): readiness, the SIGHUP
 * reload of the configuration file, stopping. Notifications go through ../common/tide_sd_notify.h
 * and do nothing outside systemd. What a reload may change is decided by reload_plan.h; this file
 * carries the plan out on the control thread, the one that also runs load_table and set_gateway.
 */
#ifndef TIDE_DIRECTOR_SERVICE_H
#define TIDE_DIRECTOR_SERVICE_H

#include <stddef.h>

#include "config.h"

/*
 * Remembers what a reload needs: the running configuration (changed in place by a reload), the
 * file it came from, and the command-line overrides (--control, --table; NULL when not given),
 * which keep overriding the file after a reload.
 */
void service_init(struct director_config *cfg, const char *config_path, const char *control,
		  const char *table);

/* Asks for a reload; async-signal-safe (the SIGHUP handler calls it). */
void service_request_reload(void);

/* Runs a requested reload, if any. Control thread only, RCU offline (it may load a table). */
void service_reload_pending(void);

/* READY=1 with a STATUS= line (ports, lcores, table): the ports are started and the socket listens. */
void service_ready(void);

/* STOPPING=1: the workers were told to stop. */
void service_stopping(void);

/* The one-line STATUS text: "forwarding on 1 port(s) with 1 lcore(s); table generation 2 (PATH)". */
void service_status_line(char *buf, size_t len);

#endif /* TIDE_DIRECTOR_SERVICE_H */
