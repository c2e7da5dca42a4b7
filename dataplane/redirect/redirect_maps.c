/* SPDX-License-Identifier: MIT */
/*
 * tide-redirect's map accessors: what the daemon (tide_redirect.c) and its control socket
 * (control.c) read and write in the BPF program's maps. Neither of those files calls the other.
 */
#include "redirect_maps.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>

#include "tide_redirect.skel.h"

const char *const redirect_counter_names[TR_COUNTER_COUNT] = {
#define TR_COUNTER_NAME(id, name) [TR_##id] = #name,
	TIDE_REDIRECT_COUNTERS(TR_COUNTER_NAME)
#undef TR_COUNTER_NAME
};

int redirect_config_apply(struct redirect_state *st, const struct tide_redirect_config *cfg)
{
	__u32 key = 0;
	int rc;

	rc = bpf_map__update_elem(st->skel->maps.tide_redirect_config, &key, sizeof(key), cfg,
				  sizeof(*cfg), BPF_ANY);
	if (rc)
		return rc;
	st->cfg = *cfg;
	return 0;
}

int redirect_counters_read(const struct redirect_state *st, __u64 out[TR_COUNTER_COUNT])
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *vals;
	int rc = 0;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (__u32 k = 0; k < TR_COUNTER_COUNT && rc == 0; k++) {
		rc = bpf_map__lookup_elem(st->skel->maps.tide_redirect_stats, &k, sizeof(k), vals,
					  sizeof(*vals) * (size_t)ncpu, 0);
		out[k] = 0;
		for (int c = 0; c < ncpu && rc == 0; c++)
			out[k] += vals[c];
	}
	free(vals);
	return rc;
}
