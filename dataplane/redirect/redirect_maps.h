/* SPDX-License-Identifier: MIT */
/*
 * tide-redirect's map accessors (redirect_maps.c): the config and stats maps of the loaded
 * program, used by the daemon's lifecycle (tide_redirect.c) and its control socket (control.c).
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

#endif /* TIDE_REDIRECT_MAPS_H */
