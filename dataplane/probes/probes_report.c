/* SPDX-License-Identifier: MIT */
/*
 * tide-probes, report: the JSON lines on stdout (hello, listen, sample; see probes/README.md),
 * read from the aggregate maps and the listen ring buffer.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tide_probes.h"
#include "tide_probes.skel.h"
#include "tide_probes_structs.h"

/* Wall clock, milliseconds since the Unix epoch. */
static long long probes_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long probes_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Writes one JSON line and frees it. Returns 0 or -EPIPE when stdout is gone. */
static int probes_emit(json_t *obj)
{
	int rc = json_dumpf(obj, stdout, JSON_COMPACT) || fputc('\n', stdout) == EOF ||
				 fflush(stdout) == EOF
			 ? -EPIPE
			 : 0;

	json_decref(obj);
	return rc;
}

/* Lower bounds of the log2 buckets, microseconds: 0, 1, 2, 4, ... */
static json_t *probes_bucket_bounds(void)
{
	json_t *a = json_array();

	json_array_append_new(a, json_integer(0));
	for (int i = 1; i < TP_HIST_SLOTS; i++)
		json_array_append_new(a, json_integer(1LL << (i - 1)));
	return a;
}

static json_t *probes_hist(const __u64 *h)
{
	json_t *a = json_array();

	for (int i = 0; i < TP_HIST_SLOTS; i++)
		json_array_append_new(a, json_integer((json_int_t)h[i]));
	return a;
}

static const char *probes_family(unsigned int f)
{
	switch (f) {
	case TP_AF_INET:
		return "inet";
	case TP_AF_INET6:
		return "inet6";
	case TP_AF_UNIX:
		return "unix";
	default:
		return "other";
	}
}

int probes_emit_hello(const struct probes_args *a, const char *pin_error)
{
	json_t *o = json_object(), *ps = json_object();

	for (int i = 0; i < PROBE_COUNT; i++) {
		json_t *p = json_object();

		json_object_set_new(p, "on", json_boolean(probes[i].on));
		if (!probes[i].on)
			json_object_set_new(p, "reason", json_string(probes[i].reason));
		json_object_set_new(ps, probes[i].name, p);
	}
	json_object_set_new(o, "type", json_string("hello"));
	json_object_set_new(o, "version", json_string(TIDE_VERSION));
	json_object_set_new(o, "pid", json_integer(getpid()));
	json_object_set_new(o, "at", json_integer(probes_now_ms()));
	json_object_set_new(o, "interval_ms", json_integer(a->interval_ms));
	json_object_set_new(o, "counters",
			    json_string("cumulative since attach; netrx max_us and "
					"wait_max_us since the previous sample"));
	json_object_set_new(o, "bucket_lo_us", probes_bucket_bounds());
	json_object_set_new(o, "probes", ps);
	if (a->pin_dir) {
		json_object_set_new(o, "pin_dir", json_string(a->pin_dir));
		if (pin_error)
			json_object_set_new(o, "pin_error", json_string(pin_error));
	}
	return probes_emit(o);
}

/* Ring-buffer callback: one listen() call, printed at once. */
int probes_on_listen(void *ctx, void *data, size_t len)
{
	const struct tp_listen_event *ev = data;
	json_t *o;

	(void)ctx;
	if (len < sizeof(*ev))
		return 0;
	o = json_object();
	json_object_set_new(o, "type", json_string("listen"));
	json_object_set_new(o, "at", json_integer(probes_now_ms()));
	json_object_set_new(o, "pid", json_integer(ev->pid));
	json_object_set_new(o, "comm", json_stringn(ev->comm, strnlen(ev->comm, TP_COMM_LEN)));
	json_object_set_new(o, "netns", json_integer(ev->netns));
	json_object_set_new(o, "family", json_string(probes_family(ev->family)));
	json_object_set_new(o, "port", json_integer(ev->port));
	json_object_set_new(o, "requested", json_integer(ev->requested));
	json_object_set_new(o, "effective", json_integer(ev->effective));
	json_object_set_new(o, "limited", json_boolean(ev->limited));
	return probes_emit(o) ? -EPIPE : 0;
}

static json_t *probes_sample_overflow(struct tide_probes_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.tp_overflow);
	struct tp_port_key key, next, *prev = NULL;
	json_t *a = json_array();
	__u64 drops;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &drops))
			continue; /* deleted meanwhile */
		json_array_append_new(a,
				      json_pack("{s:I, s:i, s:I}", "netns", (json_int_t)key.netns,
						"port", (int)key.port, "drops", (json_int_t)drops));
	}
	return a;
}

static json_t *probes_sample_connect(struct tide_probes_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.tp_connect);
	struct tp_proc_key key, next, *prev = NULL;
	struct tp_connect_stats st;
	json_t *a = json_array();

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		json_t *o;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &st))
			continue;
		o = json_object();
		json_object_set_new(o, "netns", json_integer(key.netns));
		json_object_set_new(o, "pid", json_integer(key.tgid));
		json_object_set_new(o, "comm",
				    json_stringn(key.comm, strnlen(key.comm, TP_COMM_LEN)));
		json_object_set_new(o, "calls", json_integer((json_int_t)st.calls));
		json_object_set_new(o, "errors", json_integer((json_int_t)st.errors));
		json_object_set_new(o, "eaddrnotavail", json_integer((json_int_t)st.eaddrnotavail));
		json_object_set_new(o, "total_us", json_integer((json_int_t)(st.total_ns / 1000)));
		json_object_set_new(o, "sport_even", json_integer((json_int_t)st.sport_even));
		json_object_set_new(o, "sport_odd", json_integer((json_int_t)st.sport_odd));
		json_object_set_new(o, "hist", probes_hist(st.hist));
		json_array_append_new(a, o);
	}
	return a;
}

/* Per-CPU NET_RX figures; resets the per-CPU maxima so the next sample has its own. */
static json_t *probes_sample_netrx(struct tide_probes_bpf *skel)
{
	int ncpu = libbpf_num_possible_cpus();
	struct tp_netrx_stats *st = NULL;
	struct tp_netrx_peak *pk = NULL;
	json_t *a = json_array();
	__u32 zero = 0;

	if (ncpu <= 0)
		return a;
	st = calloc((size_t)ncpu, sizeof(*st));
	pk = calloc((size_t)ncpu, sizeof(*pk));
	if (!st || !pk)
		goto out;
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.tp_netrx), &zero, st) ||
	    bpf_map_lookup_elem(bpf_map__fd(skel->maps.tp_netrx_peak), &zero, pk))
		goto out;
	for (int c = 0; c < ncpu; c++) {
		json_t *o = json_object();

		json_object_set_new(o, "cpu", json_integer(c));
		json_object_set_new(o, "runs", json_integer((json_int_t)st[c].runs));
		json_object_set_new(o, "total_us",
				    json_integer((json_int_t)(st[c].total_ns / 1000)));
		json_object_set_new(o, "max_us",
				    json_integer((json_int_t)(pk[c].run_max_ns / 1000)));
		json_object_set_new(o, "hist", probes_hist(st[c].hist));
		json_object_set_new(o, "waits", json_integer((json_int_t)st[c].waits));
		json_object_set_new(o, "wait_total_us",
				    json_integer((json_int_t)(st[c].wait_total_ns / 1000)));
		json_object_set_new(o, "wait_max_us",
				    json_integer((json_int_t)(pk[c].wait_max_ns / 1000)));
		json_object_set_new(o, "wait_hist", probes_hist(st[c].wait_hist));
		json_array_append_new(a, o);
	}
	/* A maximum recorded between the read and this reset is lost: acceptable for a peak. */
	memset(pk, 0, sizeof(*pk) * (size_t)ncpu);
	bpf_map_update_elem(bpf_map__fd(skel->maps.tp_netrx_peak), &zero, pk, BPF_EXIST);
out:
	free(st);
	free(pk);
	return a;
}

static json_t *probes_sample_icmp(struct tide_probes_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.tp_icmp_fragnd);
	__u32 key, next, *prev = NULL;
	json_t *a = json_array();
	__u64 sent;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &sent))
			continue;
		json_array_append_new(a, json_pack("{s:I, s:I}", "netns", (json_int_t)key, "sent",
						   (json_int_t)sent));
	}
	return a;
}

int probes_emit_sample(struct tide_probes_bpf *skel)
{
	json_t *o = json_object();

	json_object_set_new(o, "type", json_string("sample"));
	json_object_set_new(o, "at", json_integer(probes_now_ms()));
	if (skel && probes[PROBE_LISTEN_OVERFLOW].on)
		json_object_set_new(o, "listen_overflow", probes_sample_overflow(skel));
	if (skel && (probes[PROBE_CONNECT_LATENCY].on || probes[PROBE_PORT_PARITY].on))
		json_object_set_new(o, "connect", probes_sample_connect(skel));
	if (skel && (probes[PROBE_NETRX_SOFTIRQ].on || probes[PROBE_NETRX_WAIT].on))
		json_object_set_new(o, "netrx", probes_sample_netrx(skel));
	if (skel && probes[PROBE_ICMP_FRAG_NEEDED].on)
		json_object_set_new(o, "icmp_frag_needed", probes_sample_icmp(skel));
	return probes_emit(o);
}
