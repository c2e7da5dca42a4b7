/* SPDX-License-Identifier: MIT */
/* The control protocol's "stats" result: per-queue counters, their sum, and ethdev counters. */
#ifndef TIDE_DIRECTOR_STATS_H
#define TIDE_DIRECTOR_STATS_H

#include <jansson.h>

/* Returns a new JSON object {"totals", "ports", "lcores"}, or NULL when out of memory. */
json_t *stats_result(void);

#endif /* TIDE_DIRECTOR_STATS_H */
