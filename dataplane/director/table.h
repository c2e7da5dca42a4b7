/* SPDX-License-Identifier: MIT */
/*
 * The forwarding table the workers read: a GLBD v2/v3 file compiled into a struct tide_fwd_set and
 * published through an RCU pointer. A load validates everything before anything changes; a bad
 * file leaves the old set serving. Loads are serialized by a mutex.
 */
#ifndef TIDE_DIRECTOR_TABLE_H
#define TIDE_DIRECTOR_TABLE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "config.h"
#include "tide_forward.h"

struct table_pool {
	char name[CONFIG_POOL_NAME_MAX];
	char content_hash[65];	      /* sha256 hex of the pool's table as a 1-table GLBD file */
	struct tide_hash_config hash; /* what it is hashed on: v3 trailer, else the default */
	struct timespec loaded_at;    /* CLOCK_REALTIME when this content was first loaded */
};

struct table_info {
	uint64_t generation; /* 0: nothing loaded; 1 for the first load, +1 each success */
	char path[PATH_MAX];
	struct timespec loaded_at; /* CLOCK_REALTIME */
	double load_ms;		   /* read + validate + hash + publish, milliseconds */
	uint32_t num_pools;
	struct table_pool pools[TIDE_MAX_TABLES];
};

/* Why a load failed. `code` is a control-protocol error code. */
struct table_error {
	const char *code; /* "io_error", "invalid_table", "busy", "internal" */
	char message[512];
	bool has_glbd; /* invalid_table: glbd holds the GLBD code and location */
	struct tide_glbd_error glbd;
};

/* Default pool names and the default hash fields (v2 tables) come from `cfg` (by reference). */
void table_init(const struct director_config *cfg);

/*
 * Loads `path` and swaps it in. `names` (may be NULL) names the file's tables in order.
 * Returns 0 and fills *info, or -errno with *err. Never call from a worker or while an RCU
 * reader is online on this thread (it waits for a grace period).
 */
int table_load(const char *path, const char *const *names, uint32_t num_names,
	       struct table_info *info, struct table_error *err);

/* The current set, or NULL. RCU readers only (online on worker_rcu). */
const struct tide_fwd_set *table_current(void);

/* A consistent copy of the metadata of the current set. */
void table_info_get(struct table_info *info);

/* Frees the current set at exit, after every reader has stopped. */
void table_free(void);

#endif /* TIDE_DIRECTOR_TABLE_H */
