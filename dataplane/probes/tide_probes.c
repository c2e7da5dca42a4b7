/* SPDX-License-Identifier: MIT */
/*
 * tide-probes: loads the tracepoint programs of tide_probes.bpf.c, attaches whatever this kernel
 * allows and reports on stdout in JSON lines until SIGINT/SIGTERM or EOF on stdin (the agent
 * closing its end).
 *
 *   tide-probes [--interval-ms 1000] [--pin-dir DIR] [--off PROBE]... [--no-stdin] [--verbose]
 *
 * Output (one JSON object per line, see probes/README.md):
 *   {"type":"hello", "probes": {NAME: {"on": true} | {"on": false, "reason": "..."}}, ...}
 *   {"type":"listen", ...}   immediately, for every successful listen()
 *   {"type":"sample", ...}   every --interval-ms: the aggregate maps, cumulative since attach
 *
 * A probe whose programs fail to load or attach is reported off with the reason; the others
 * still run. Lifecycle (libbpf-bootstrap): open -> configure (autoload per probe) -> load ->
 * attach -> report -> one cleanup path that undoes exactly what was done.
 */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tide_daemon.h"
#include "tide_probes.skel.h"
#include "tide_probes_structs.h"

/* The release version, from the root package.json: dataplane/Makefile passes it. */
#ifndef TIDE_VERSION
#error "TIDE_VERSION is not set: build with make -C dataplane"
#endif

#define probes_log(...) tide_log("tide-probes", __VA_ARGS__)

/* Sample period unless --interval-ms says otherwise, and its accepted range, milliseconds. */
#define PROBES_INTERVAL_MS 1000
#define PROBES_INTERVAL_MIN_MS 10
#define PROBES_INTERVAL_MAX_MS 3600000

/* Programs per probe, at most. */
#define PROBES_MAX_PROGS 3
/* Room for a reason string in the hello line, bytes. */
#define PROBES_REASON_LEN 256

/* Where tracefs lives (libbpf looks here unless debugfs is mounted with tracing in it). */
#define PROBES_TRACEFS "/sys/kernel/tracing"
#define PROBES_DEBUGFS_TRACING "/sys/kernel/debug/tracing"

struct probe {
	const char *name;
	const char *progs[PROBES_MAX_PROGS]; /* program names in tide_probes.bpf.c */
	bool on;
	char reason[PROBES_REASON_LEN];
	struct bpf_link *links[PROBES_MAX_PROGS];
};

enum probe_id {
	PROBE_LISTEN_BACKLOG,
	PROBE_LISTEN_OVERFLOW,
	PROBE_CONNECT_LATENCY,
	PROBE_PORT_PARITY,
	PROBE_NETRX_SOFTIRQ,
	PROBE_NETRX_WAIT,
	PROBE_ICMP_FRAG_NEEDED,
	PROBE_COUNT,
};

static struct probe probes[PROBE_COUNT] = {
	[PROBE_LISTEN_BACKLOG] = {"listen_backlog", {"tp_listen_enter", "tp_listen_exit"}},
	[PROBE_LISTEN_OVERFLOW] = {"listen_overflow", {"tp_kfree_skb"}},
	[PROBE_CONNECT_LATENCY] = {"connect_latency", {"tp_connect_enter", "tp_connect_exit"}},
	[PROBE_PORT_PARITY] = {"port_parity", {"tp_sock_state"}},
	[PROBE_NETRX_SOFTIRQ] = {"netrx_softirq", {"tp_softirq_entry", "tp_softirq_exit"}},
	[PROBE_NETRX_WAIT] = {"netrx_wait", {"tp_softirq_raise"}},
	[PROBE_ICMP_FRAG_NEEDED] = {"icmp_frag_needed", {"tp_icmp_send"}},
};

struct probes_args {
	unsigned int interval_ms;
	const char *pin_dir;
	bool no_stdin;
	bool verbose;
	bool disabled[PROBE_COUNT]; /* --off NAME */
};

/* The aggregate maps --pin-dir exposes, pinned under their own names. */
static const char *const probes_pinned[] = {
	"tp_overflow", "tp_connect", "tp_netrx", "tp_netrx_peak", "tp_icmp_fragnd",
};
#define PROBES_PINNED_COUNT (sizeof(probes_pinned) / sizeof(probes_pinned[0]))

static volatile sig_atomic_t probes_stop;

static void probes_on_signal(int sig)
{
	(void)sig;
	probes_stop = 1;
}

/*
 * libbpf's messages: shown with --verbose (warnings; verifier logs are long), and the first
 * warning after probes_libbpf_mark() is kept as the detail of an off probe's reason.
 */
static bool probes_verbose;
static char probes_libbpf_first[160];
static bool probes_libbpf_armed;

static int probes_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	if (probes_libbpf_armed && !probes_libbpf_first[0]) {
		va_list cp;
		size_t n;

		va_copy(cp, ap);
		vsnprintf(probes_libbpf_first, sizeof(probes_libbpf_first), fmt, cp);
		va_end(cp);
		n = strcspn(probes_libbpf_first, "\n");
		probes_libbpf_first[n] = '\0';
	}
	return probes_verbose ? vfprintf(stderr, fmt, ap) : 0;
}

static void probes_libbpf_mark(void)
{
	probes_libbpf_first[0] = '\0';
	probes_libbpf_armed = true;
}

static void probe_off(struct probe *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void probe_off(struct probe *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->on)
		return; /* keep the first reason: it is the root cause */
	p->on = false;
	va_start(ap, fmt);
	vsnprintf(p->reason, sizeof(p->reason), fmt, ap);
	va_end(ap);
}

static void probes_usage(FILE *f)
{
	fprintf(f,
		"usage: tide-probes [--interval-ms %u] [--pin-dir DIR] [--off PROBE]... "
		"[--no-stdin] [--verbose]\nprobes:",
		PROBES_INTERVAL_MS);
	for (int i = 0; i < PROBE_COUNT; i++)
		fprintf(f, " %s", probes[i].name);
	fputc('\n', f);
}

static int probes_parse_args(int argc, char **argv, struct probes_args *a)
{
	static const struct option opts[] = {
		{"interval-ms", required_argument, NULL, 'i'},
		{"pin-dir", required_argument, NULL, 'd'},
		{"off", required_argument, NULL, 'o'},
		{"no-stdin", no_argument, NULL, 'n'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	memset(a, 0, sizeof(*a));
	a->interval_ms = PROBES_INTERVAL_MS;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *end;
		long v;

		switch (c) {
		case 'i':
			v = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || v < PROBES_INTERVAL_MIN_MS ||
			    v > PROBES_INTERVAL_MAX_MS) {
				probes_log("--interval-ms %s: must be %u..%u", optarg,
					   PROBES_INTERVAL_MIN_MS, PROBES_INTERVAL_MAX_MS);
				return -EINVAL;
			}
			a->interval_ms = (unsigned int)v;
			break;
		case 'd':
			a->pin_dir = optarg;
			break;
		case 'o': {
			int i;

			for (i = 0; i < PROBE_COUNT && strcmp(optarg, probes[i].name) != 0; i++)
				;
			if (i == PROBE_COUNT) {
				probes_log("--off %s: no such probe", optarg);
				return -EINVAL;
			}
			a->disabled[i] = true;
			break;
		}
		case 'n':
			a->no_stdin = true;
			break;
		case 'v':
			a->verbose = true;
			break;
		case 'h':
			probes_usage(stdout);
			exit(0);
		default:
			probes_usage(stderr);
			return -EINVAL;
		}
	}
	if (optind != argc) {
		probes_usage(stderr);
		return -EINVAL;
	}
	return 0;
}

/*
 * Syscall tracepoints are found through tracefs (their ids), which is not mounted by default
 * here. Mounts it when neither usual place has it; the caller unmounts it once attached (a
 * perf-event attachment does not need the mount). Returns 0 or -errno.
 */
static int probes_tracefs_prepare(bool *mounted)
{
	*mounted = false;
	if (access(PROBES_TRACEFS "/events", F_OK) == 0 ||
	    access(PROBES_DEBUGFS_TRACING "/events", F_OK) == 0)
		return 0;
	if (mount("tracefs", PROBES_TRACEFS, "tracefs", 0, NULL) < 0)
		return -errno;
	*mounted = true;
	return 0;
}

/*
 * Can this kernel attach the program at all? tracepoint/CAT/NAME needs the event in tracefs,
 * tp_btf/NAME the btf_trace_NAME typedef in the kernel's BTF. Returns 0 or -ENOENT with `why`.
 */
static int probes_check_target(const char *sec, const struct btf *vmlinux, int tracefs_err,
			       char *why, size_t len)
{
	char path[512], tname[160];

	if (strncmp(sec, "tracepoint/", 11) == 0) {
		if (tracefs_err) {
			snprintf(why, len, "tracefs is not mounted and cannot be: %s",
				 strerror(-tracefs_err));
			return -ENOENT;
		}
		snprintf(path, sizeof(path), "%s/events/%s/id",
			 access(PROBES_TRACEFS "/events", F_OK) == 0 ? PROBES_TRACEFS
								     : PROBES_DEBUGFS_TRACING,
			 sec + 11);
		if (access(path, F_OK) != 0) {
			snprintf(why, len, "no tracepoint %s in this kernel", sec + 11);
			return -ENOENT;
		}
		return 0;
	}
	if (strncmp(sec, "tp_btf/", 7) == 0) {
		if (!vmlinux) {
			snprintf(why, len, "kernel has no BTF (/sys/kernel/btf/vmlinux)");
			return -ENOENT;
		}
		snprintf(tname, sizeof(tname), "btf_trace_%s", sec + 7);
		if (btf__find_by_name_kind(vmlinux, tname, BTF_KIND_TYPEDEF) < 0) {
			snprintf(why, len, "no BTF tracepoint %s in this kernel", sec + 7);
			return -ENOENT;
		}
	}
	return 0;
}

/* Is `value` a member of enum `type` in the kernel's BTF? */
static bool probes_btf_enum_has(const struct btf *vmlinux, const char *type, const char *value)
{
	const struct btf_type *t;
	int id;

	if (!vmlinux)
		return false;
	id = btf__find_by_name_kind(vmlinux, type, BTF_KIND_ENUM);
	if (id < 0)
		return false;
	t = btf__type_by_id(vmlinux, (__u32)id);
	for (unsigned int i = 0; i < btf_vlen(t); i++) {
		const char *n = btf__name_by_offset(vmlinux, btf_enum(t)[i].name_off);

		if (n && strcmp(n, value) == 0)
			return true;
	}
	return false;
}

/* Turns off the probes this kernel cannot host, before anything is loaded. */
static void probes_precheck(struct tide_probes_bpf *skel, int tracefs_err)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	char why[PROBES_REASON_LEN];

	for (int i = 0; i < PROBE_COUNT; i++) {
		struct probe *p = &probes[i];

		for (int j = 0; j < PROBES_MAX_PROGS && p->progs[j]; j++) {
			struct bpf_program *prog =
				bpf_object__find_program_by_name(skel->obj, p->progs[j]);

			if (!prog) {
				probe_off(p, "program %s missing from the object", p->progs[j]);
				break;
			}
			if (probes_check_target(bpf_program__section_name(prog), vmlinux,
						tracefs_err, why, sizeof(why))) {
				probe_off(p, "%s", why);
				break;
			}
		}
	}
	if (!probes_btf_enum_has(vmlinux, "skb_drop_reason", "SKB_DROP_REASON_TCP_LISTEN_OVERFLOW"))
		probe_off(&probes[PROBE_LISTEN_OVERFLOW],
			  "kernel has no drop reason SKB_DROP_REASON_TCP_LISTEN_OVERFLOW");
	btf__free(vmlinux);
}

/*
 * Opens the object and loads the programs of the probes selected by `only` (a probe index) or,
 * when `only` is -1, of every probe still on. Maps are always created. NULL with *err on failure.
 */
static struct tide_probes_bpf *probes_open_load(int only, int *err)
{
	struct tide_probes_bpf *skel;
	int rc;

	probes_libbpf_mark();
	skel = tide_probes_bpf__open();
	if (!skel) {
		*err = -errno;
		return NULL;
	}
	for (int i = 0; i < PROBE_COUNT; i++) {
		bool load = only < 0 ? probes[i].on : i == only;

		for (int j = 0; j < PROBES_MAX_PROGS && probes[i].progs[j]; j++) {
			struct bpf_program *prog =
				bpf_object__find_program_by_name(skel->obj, probes[i].progs[j]);

			if (prog)
				bpf_program__set_autoload(prog, load);
		}
	}
	rc = tide_probes_bpf__load(skel);
	if (rc) {
		tide_probes_bpf__destroy(skel);
		*err = rc;
		return NULL;
	}
	*err = 0;
	return skel;
}

/*
 * Loads every probe that passed the precheck. When the whole object fails (one program refused
 * by this kernel's verifier), each probe is tried alone to find the culprits, which are turned
 * off with the error; then the rest is loaded. NULL when not even the maps can be created.
 */
static struct tide_probes_bpf *probes_load(void)
{
	struct tide_probes_bpf *skel;
	int err;

	skel = probes_open_load(-1, &err);
	if (skel)
		return skel;
	for (int i = 0; i < PROBE_COUNT; i++) {
		struct tide_probes_bpf *one;

		if (!probes[i].on)
			continue;
		one = probes_open_load(i, &err);
		if (one) {
			tide_probes_bpf__destroy(one);
			continue;
		}
		if (err == -EPERM)
			probe_off(&probes[i],
				  "load failed: %s (needs root, or CAP_BPF and "
				  "CAP_PERFMON)",
				  strerror(-err));
		else
			probe_off(&probes[i], "load failed: %s%s%s", strerror(-err),
				  probes_libbpf_first[0] ? " | " : "", probes_libbpf_first);
	}
	skel = probes_open_load(-1, &err);
	if (!skel) {
		for (int i = 0; i < PROBE_COUNT; i++)
			probe_off(&probes[i], "load failed: %s", strerror(-err));
	}
	return skel;
}

static void probes_attach(struct tide_probes_bpf *skel)
{
	for (int i = 0; i < PROBE_COUNT; i++) {
		struct probe *p = &probes[i];

		for (int j = 0; j < PROBES_MAX_PROGS && p->progs[j] && p->on; j++) {
			struct bpf_program *prog =
				bpf_object__find_program_by_name(skel->obj, p->progs[j]);

			probes_libbpf_mark();
			p->links[j] = bpf_program__attach(prog);
			if (!p->links[j]) {
				int err = -errno;

				probe_off(p, "attach %s failed: %s",
					  bpf_program__section_name(prog), strerror(-err));
			}
		}
		if (!p->on) {
			for (int j = 0; j < PROBES_MAX_PROGS; j++) {
				bpf_link__destroy(p->links[j]);
				p->links[j] = NULL;
			}
		}
	}
}

/* Pins the aggregate maps; `pinned[i]` records what to unpin. Returns 0 or -errno. */
static int probes_pin(struct tide_probes_bpf *skel, const char *dir, bool *pinned)
{
	char path[4096];

	for (size_t i = 0; i < PROBES_PINNED_COUNT; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(skel->obj, probes_pinned[i]);
		int rc;

		if (!m)
			return -ENOENT;
		snprintf(path, sizeof(path), "%s/%s", dir, probes_pinned[i]);
		unlink(path); /* left by a run that was killed */
		rc = bpf_map__pin(m, path);
		if (rc)
			return rc;
		pinned[i] = true;
	}
	return 0;
}

static void probes_unpin(struct tide_probes_bpf *skel, const char *dir, const bool *pinned)
{
	char path[4096];

	for (size_t i = 0; i < PROBES_PINNED_COUNT; i++) {
		if (!pinned[i])
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, probes_pinned[i]);
		bpf_map__unpin(bpf_object__find_map_by_name(skel->obj, probes_pinned[i]), path);
	}
}

/* ---- output ------------------------------------------------------------------------------ */

/* Wall clock, milliseconds since the Unix epoch. */
static long long probes_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long long probes_mono_ms(void)
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

static int probes_emit_hello(const struct probes_args *a, const char *pin_error)
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
static int probes_on_listen(void *ctx, void *data, size_t len)
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

static int probes_emit_sample(struct tide_probes_bpf *skel)
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

/* ---- main -------------------------------------------------------------------------------- */

/* Serves until a signal, EOF on stdin or a dead stdout. Returns 0 or -errno. */
static int probes_run(struct tide_probes_bpf *skel, struct ring_buffer *rb,
		      const struct probes_args *a)
{
	long long next = probes_mono_ms() + a->interval_ms;
	struct pollfd pfd[2];
	int n = 0, in_idx = -1, rb_idx = -1;

	if (!a->no_stdin) {
		pfd[n] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
		in_idx = n++;
	}
	if (rb) {
		pfd[n] = (struct pollfd){.fd = ring_buffer__epoll_fd(rb), .events = POLLIN};
		rb_idx = n++;
	}
	while (!probes_stop) {
		long long now = probes_mono_ms();
		int r;

		r = poll(pfd, (nfds_t)n, next > now ? (int)(next - now) : 0);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r > 0 && in_idx >= 0 && pfd[in_idx].revents) {
			char buf[512];
			ssize_t got = read(STDIN_FILENO, buf, sizeof(buf));

			if (got <= 0)
				return 0; /* the agent closed stdin: stop */
			/* Input is reserved for future commands; ignored today. */
		}
		if (r > 0 && rb_idx >= 0 && pfd[rb_idx].revents) {
			int c = ring_buffer__consume(rb);

			if (c == -EPIPE)
				return c;
		}
		now = probes_mono_ms();
		if (now >= next) {
			if (probes_emit_sample(skel))
				return -EPIPE;
			next += a->interval_ms;
			if (next <= now)
				next = now + a->interval_ms; /* we were stopped: do not burst */
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	bool tracefs_mounted = false, bpffs_mounted = false, pin_dir_made = false;
	bool pinned[PROBES_PINNED_COUNT] = {false};
	struct tide_probes_bpf *skel = NULL, *probe_skel;
	char pin_error[PROBES_REASON_LEN] = "";
	struct ring_buffer *rb = NULL;
	struct probes_args args;
	struct sigaction sa;
	int rc, tracefs_err;

	rc = probes_parse_args(argc, argv, &args);
	if (rc)
		return 2;
	probes_verbose = args.verbose;
	libbpf_set_print(probes_libbpf_print);
	for (int i = 0; i < PROBE_COUNT; i++) {
		probes[i].on = true;
		if (args.disabled[i])
			probe_off(&probes[i], "turned off by --off");
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = probes_on_signal; /* no SA_RESTART: poll() returns at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN); /* a closed stdout shows up as a write error */

	/* open (only to look at the programs) -> configure: turn off what the kernel lacks */
	tracefs_err = probes_tracefs_prepare(&tracefs_mounted);
	probe_skel = tide_probes_bpf__open();
	if (probe_skel) {
		probes_precheck(probe_skel, tracefs_err);
		tide_probes_bpf__destroy(probe_skel);
	} else {
		rc = -errno;
		for (int i = 0; i < PROBE_COUNT; i++)
			probe_off(&probes[i], "cannot open the BPF object: %s", strerror(-rc));
	}

	/* load -> attach */
	skel = probes_load();
	if (skel)
		probes_attach(skel);
	if (tracefs_mounted && umount2(PROBES_TRACEFS, MNT_DETACH) == 0)
		tracefs_mounted = false;

	if (skel && probes[PROBE_LISTEN_BACKLOG].on) {
		rb = ring_buffer__new(bpf_map__fd(skel->maps.tp_listen_evt), probes_on_listen, NULL,
				      NULL);
		if (!rb) {
			rc = -errno;
			for (int j = 0; j < PROBES_MAX_PROGS; j++) {
				bpf_link__destroy(probes[PROBE_LISTEN_BACKLOG].links[j]);
				probes[PROBE_LISTEN_BACKLOG].links[j] = NULL;
			}
			probe_off(&probes[PROBE_LISTEN_BACKLOG], "ring buffer: %s", strerror(-rc));
		}
	}

	if (args.pin_dir && skel) {
		rc = tide_bpffs_mount(args.pin_dir, &bpffs_mounted, &pin_dir_made);
		if (rc == 0)
			rc = probes_pin(skel, args.pin_dir, pinned);
		if (rc)
			snprintf(pin_error, sizeof(pin_error), "cannot pin maps in %s: %s",
				 args.pin_dir, strerror(-rc));
	} else if (args.pin_dir) {
		snprintf(pin_error, sizeof(pin_error), "nothing loaded, nothing pinned");
	}

	rc = probes_emit_hello(&args, pin_error[0] ? pin_error : NULL);
	if (rc == 0)
		rc = probes_run(skel, rb, &args);
	if (rc && rc != -EPIPE)
		probes_log("stopped: %s", strerror(-rc));

	/* One cleanup path: undo what was done, in reverse. */
	ring_buffer__free(rb);
	if (skel && args.pin_dir)
		probes_unpin(skel, args.pin_dir, pinned);
	if (bpffs_mounted)
		umount(args.pin_dir);
	if (pin_dir_made)
		rmdir(args.pin_dir);
	for (int i = 0; i < PROBE_COUNT; i++) {
		for (int j = 0; j < PROBES_MAX_PROGS; j++)
			bpf_link__destroy(probes[i].links[j]);
	}
	tide_probes_bpf__destroy(skel);
	if (tracefs_mounted)
		umount2(PROBES_TRACEFS, MNT_DETACH);
	return rc && rc != -EPIPE ? 1 : 0;
}
