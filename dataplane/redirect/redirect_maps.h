/* SPDX-License-Identifier: MIT */
/*
 * tide-redirect's map accessors (redirect_maps.c): the config, stats, VIP and flow maps of the
 * loaded program, used by the daemon's lifecycle (tide_redirect.c) and its control socket (control.c).
 */
#ifndef TIDE_REDIRECT_MAPS_H
#define TIDE_REDIRECT_MAPS_H

#include "tide_redirect.h"

/* JSON names of the counters, by enum tide_redirect_counter. */
extern const char *const redirect_counter_names[TR_COUNTER_COUNT];

/* Writes `cfg` to the config map and keeps it as the config in force. Returns 0 or -errno. */
int redirect_config_apply(struct redirect_state *st, const struct tide_redirect_config *cfg);

/* Reads the stats map summed over the possible CPUs. Returns 0 or -errno. */
int redirect_counters_read(const struct redirect_state *st, __u64 out[TR_COUNTER_COUNT]);

/* JSON names of the per-VIP counters, by enum tide_redirect_vip_counter. */
extern const char *const redirect_vip_counter_names[TR_VIP_COUNTER_COUNT];

/* One VIP's counters, summed over the possible CPUs. */
struct redirect_vip {
	struct tide_redirect_vip_key key;
	__u64 packets[TR_VIP_COUNTER_COUNT];
};

/*
 * Reads the VIP map: every entry (at most TIDE_REDIRECT_MAX_VIPS), summed over the possible CPUs,
 * into a calloc'ed array the caller frees (*out; NULL with *n 0 when the map is empty). An entry
 * evicted between the key walk and its lookup is skipped. Returns 0 or -errno.
 */
int redirect_vips_read(const struct redirect_state *st, struct redirect_vip **out, size_t *n);

/* JSON names of the flow kinds, by enum tide_redirect_flow_kind. */
extern const char *const redirect_flow_kind_names[TR_FLOW_KIND_COUNT];

/* One entry of the flow map. */
struct redirect_flow {
	struct tide_redirect_flow_key key;
	struct tide_redirect_flow value;
};

/*
 * Reads the flow map: every entry (at most TIDE_REDIRECT_MAX_FLOWS) into a calloc'ed array the
 * caller frees (*out; NULL with *n 0 when the map is empty). Batched (BPF_MAP_LOOKUP_BATCH, a few
 * system calls for the whole map), so an entry the LRU evicts during the read is simply missing,
 * and one inserted meanwhile may be. Returns 0 or -errno.
 */
int redirect_flows_read(const struct redirect_state *st, struct redirect_flow **out, size_t *n);

#endif /* TIDE_REDIRECT_MAPS_H */
