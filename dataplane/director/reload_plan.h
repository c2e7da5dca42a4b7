/* SPDX-License-Identifier: MIT */
/*
 * What a SIGHUP reload of tide-director's configuration file does, decided without touching
 * anything (service.c carries it out). Every key of the file is in one of four groups:
 *
 *   restart  control_socket (the socket is bound and the agent and unit name it), mbufs (the
 *            packet pool is sized once, before the ports start): a change is refused with a log
 *            line naming the key, and the running value is kept
 *   gateway  gateway_mac, source_ip: published to the workers (as set_gateway does), but only
 *            when the file changed them, so a set_gateway sent over the socket is not undone
 *   params   mtu, burst, idle_sleep_us: read by the workers at every burst
 *   table    table_file, pool_names, hash_fields, alt_hash_fields: they take effect when a table
 *            is loaded, so the reload loads the configured table file (see reload_plan_make)
 *
 * Pure: no I/O, no globals; unit tested in tests/unit/test_reload.c.
 */
#ifndef TIDE_DIRECTOR_RELOAD_PLAN_H
#define TIDE_DIRECTOR_RELOAD_PLAN_H

#include <stdint.h>

#include "config.h"

/* Actions of a plan, or-ed in reload_plan.actions. */
#define RELOAD_TABLE 0x1u   /* table_load(next->table_file) */
#define RELOAD_GATEWAY 0x2u /* worker_set_gateway(next->gateway_mac, next->source_ip) */
#define RELOAD_PARAMS 0x4u  /* worker_params := next's mtu, burst, idle_sleep_us */

/* Every key of the file fits in each list. */
#define RELOAD_MAX_KEYS 11u

/* Why the configured table file is, or is not, loaded. */
enum reload_table_reason {
	RELOAD_TABLE_NONE,	   /* no table_file, nothing to load */
	RELOAD_TABLE_NEW_FILE,	   /* table_file names another file: load it */
	RELOAD_TABLE_REREAD,	   /* the serving table is the configured file (or none): re-read */
	RELOAD_TABLE_KEPT_CONTROL, /* the serving table came from load_table over the socket */
};

struct reload_plan {
	unsigned int actions; /* RELOAD_* */
	enum reload_table_reason table_reason;
	/* Keys whose new value is applied by this reload (in the order of the groups above). */
	const char *live[RELOAD_MAX_KEYS];
	uint32_t num_live;
	/* Table keys accepted but not applied now: no table is loaded by this reload, so they take
	 * effect at the next load (load_table over the socket). */
	const char *deferred[RELOAD_MAX_KEYS];
	uint32_t num_deferred;
	/* Keys that changed but need a restart; next holds their running values again. */
	const char *restart[RELOAD_MAX_KEYS];
	uint32_t num_restart;
};

/*
 * Compares the running configuration `cur` with the file just read, `next`, and fills *plan.
 * `serving_path` is the file the serving table was loaded from ("" when no table is loaded).
 * Keys that need a restart are set back to their running values in *next, so that *next is the
 * configuration that runs once the plan is carried out.
 *
 * Tables: a table_file that names another file is loaded; the same file is re-read when it is
 * what serves (or nothing does), so that `systemctl reload` picks up a rewritten file and changed
 * pool_names / hash fields. When the agent has since loaded another file over the control socket,
 * that table keeps serving (it is newer than the file on disk); new pool_names / hash fields then
 * apply at the next load_table. An emptied table_file unloads nothing.
 */
void reload_plan_make(const struct director_config *cur, struct director_config *next,
		      const char *serving_path, struct reload_plan *plan);

#endif /* TIDE_DIRECTOR_RELOAD_PLAN_H */
