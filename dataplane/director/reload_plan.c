/* SPDX-License-Identifier: MIT */
#include "reload_plan.h"

#include <stdbool.h>
#include <string.h>

static void reload_note(const char **list, uint32_t *n, const char *key)
{
	if (*n < RELOAD_MAX_KEYS)
		list[(*n)++] = key;
}

static bool reload_pool_names_equal(const struct director_config *a,
				    const struct director_config *b)
{
	if (a->num_pool_names != b->num_pool_names)
		return false;
	for (uint32_t i = 0; i < a->num_pool_names; i++)
		if (strcmp(a->pool_names[i], b->pool_names[i]) != 0)
			return false;
	return true;
}

void reload_plan_make(const struct director_config *cur, struct director_config *next,
		      const char *serving_path, struct reload_plan *plan)
{
	const char **list;
	uint32_t *n;

	memset(plan, 0, sizeof(*plan));

	/* restart: keep the running value */
	if (strcmp(cur->control_socket, next->control_socket) != 0) {
		reload_note(plan->restart, &plan->num_restart, "control_socket");
		memcpy(next->control_socket, cur->control_socket, sizeof(next->control_socket));
	}
	if (cur->mbufs != next->mbufs) {
		reload_note(plan->restart, &plan->num_restart, "mbufs");
		next->mbufs = cur->mbufs;
	}

	/* gateway */
	if (memcmp(cur->gateway_mac, next->gateway_mac, sizeof(cur->gateway_mac)) != 0)
		reload_note(plan->live, &plan->num_live, "gateway_mac");
	if (cur->source_ip != next->source_ip)
		reload_note(plan->live, &plan->num_live, "source_ip");
	if (plan->num_live)
		plan->actions |= RELOAD_GATEWAY;

	/* params */
	if (cur->mtu != next->mtu)
		reload_note(plan->live, &plan->num_live, "mtu");
	if (cur->burst != next->burst)
		reload_note(plan->live, &plan->num_live, "burst");
	if (cur->idle_sleep_us != next->idle_sleep_us)
		reload_note(plan->live, &plan->num_live, "idle_sleep_us");
	if (cur->mtu != next->mtu || cur->burst != next->burst ||
	    cur->idle_sleep_us != next->idle_sleep_us)
		plan->actions |= RELOAD_PARAMS;

	/* table: the keys are live when this reload loads a table, deferred otherwise */
	if (!next->table_file[0])
		plan->table_reason = RELOAD_TABLE_NONE;
	else if (strcmp(cur->table_file, next->table_file) != 0)
		plan->table_reason = RELOAD_TABLE_NEW_FILE;
	else if (!serving_path[0] || strcmp(serving_path, next->table_file) == 0)
		plan->table_reason = RELOAD_TABLE_REREAD;
	else
		plan->table_reason = RELOAD_TABLE_KEPT_CONTROL;
	if (plan->table_reason == RELOAD_TABLE_NEW_FILE ||
	    plan->table_reason == RELOAD_TABLE_REREAD) {
		plan->actions |= RELOAD_TABLE;
		list = plan->live;
		n = &plan->num_live;
	} else {
		list = plan->deferred;
		n = &plan->num_deferred;
	}
	if (strcmp(cur->table_file, next->table_file) != 0)
		reload_note(list, n, "table_file");
	if (!reload_pool_names_equal(cur, next))
		reload_note(list, n, "pool_names");
	if (cur->hash_fields != next->hash_fields)
		reload_note(list, n, "hash_fields");
	if (cur->alt_hash_fields != next->alt_hash_fields)
		reload_note(list, n, "alt_hash_fields");
}
