/* SPDX-License-Identifier: MIT */
/*
 * tide-redirect's map accessors: what the daemon (tide_redirect.c) and its control socket
 * (control.c) read and write in the BPF program's maps. Neither of those files calls the other.
 */
#include "redirect_maps.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tide_redirect.skel.h"

const char *const redirect_counter_names[TR_COUNTER_COUNT] = {
#define TR_COUNTER_NAME(id, name) [TR_##id] = #name,
	TIDE_REDIRECT_COUNTERS(TR_COUNTER_NAME)
#undef TR_COUNTER_NAME
};

const char *const redirect_vip_counter_names[TR_VIP_COUNTER_COUNT] = {
#define TR_VIP_COUNTER_NAME(id, name) [TR_VIP_##id] = #name,
	TIDE_REDIRECT_VIP_COUNTERS(TR_VIP_COUNTER_NAME)
#undef TR_VIP_COUNTER_NAME
};

const char *const redirect_flow_kind_names[TR_FLOW_KIND_COUNT] = {
#define TR_FLOW_KIND_NAME(id, name) [TR_FLOW_##id] = #name,
	TIDE_REDIRECT_FLOW_KINDS(TR_FLOW_KIND_NAME)
#undef TR_FLOW_KIND_NAME
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

int redirect_vips_read(const struct redirect_state *st, struct redirect_vip **out, size_t *n)
{
	const struct bpf_map *map = st->skel->maps.tide_redirect_vips;
	struct tide_redirect_vip_key key, next;
	int ncpu = libbpf_num_possible_cpus();
	struct tide_redirect_vip_counters *vals;
	struct redirect_vip *vips;
	size_t count = 0;
	void *prev = NULL;
	int rc;

	*out = NULL;
	*n = 0;
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	vips = calloc(TIDE_REDIRECT_MAX_VIPS, sizeof(*vips));
	if (!vals || !vips) {
		free(vals);
		free(vips);
		return -ENOMEM;
	}
	/* An LRU map may evict while we walk it: stop at its size, skip what vanished. */
	while (count < TIDE_REDIRECT_MAX_VIPS) {
		rc = bpf_map__get_next_key(map, prev, &next, sizeof(next));
		if (rc == -ENOENT)
			break;
		if (rc)
			goto fail;
		key = next;
		prev = &key;
		rc = bpf_map__lookup_elem(map, &key, sizeof(key), vals,
					  sizeof(*vals) * (size_t)ncpu, 0);
		if (rc == -ENOENT)
			continue;
		if (rc)
			goto fail;
		memset(&vips[count], 0, sizeof(vips[count]));
		vips[count].key = key;
		for (int c = 0; c < ncpu; c++)
			for (unsigned int i = 0; i < TR_VIP_COUNTER_COUNT; i++)
				vips[count].packets[i] += vals[c].packets[i];
		count++;
	}
	free(vals);
	if (count == 0) {
		free(vips);
		return 0;
	}
	*out = vips;
	*n = count;
	return 0;
fail:
	free(vals);
	free(vips);
	return rc;
}

int redirect_flows_read(const struct redirect_state *st, struct redirect_flow **out, size_t *n)
{
	int fd = bpf_map__fd(st->skel->maps.tide_redirect_flows);
	struct tide_redirect_flow_key *keys;
	struct tide_redirect_flow *vals;
	struct redirect_flow *flows;
	__u32 token = 0; /* a hash map's batch position: a bucket index, 4 bytes */
	size_t total = 0;
	bool first = true;
	int rc = 0;

	*out = NULL;
	*n = 0;
	keys = calloc(TIDE_REDIRECT_MAX_FLOWS, sizeof(*keys));
	vals = calloc(TIDE_REDIRECT_MAX_FLOWS, sizeof(*vals));
	if (!keys || !vals) {
		rc = -ENOMEM;
		goto out;
	}
	/*
	 * Whole buckets at a time until the map is walked (ENOENT, with the last entries in count).
	 * An LRU map may evict and insert while we read: stop at its size, and take ENOSPC (a
	 * bucket larger than the room left, which only churn can cause) as the end too.
	 */
	while (total < TIDE_REDIRECT_MAX_FLOWS) {
		__u32 count = (__u32)(TIDE_REDIRECT_MAX_FLOWS - total);

		rc = bpf_map_lookup_batch(fd, first ? NULL : &token, &token, keys + total,
					  vals + total, &count, NULL);
		first = false;
		total += count;
		if (rc == -ENOENT || (rc == -ENOSPC && total > 0)) {
			rc = 0;
			break;
		}
		if (rc)
			goto out;
	}
	if (total == 0)
		goto out;
	flows = calloc(total, sizeof(*flows));
	if (!flows) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < total; i++) {
		flows[i].key = keys[i];
		flows[i].value = vals[i];
	}
	*out = flows;
	*n = total;
out:
	free(keys);
	free(vals);
	return rc;
}
