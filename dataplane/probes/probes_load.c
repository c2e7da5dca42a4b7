/* SPDX-License-Identifier: MIT */
/*
 * tide-probes, load and attach: the probe table, the kernel prechecks, open -> autoload per
 * probe -> load (probe by probe when the whole object is refused) -> attach, and pinning the
 * aggregate maps. A probe that cannot run is turned off with its reason (probe_off).
 */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "tide_probes.h"
#include "tide_probes.skel.h"
#include "tide_probes_structs.h"

struct probe probes[PROBE_COUNT] = {
	[PROBE_LISTEN_BACKLOG] = {"listen_backlog", {"tp_listen_enter", "tp_listen_exit"}},
	[PROBE_LISTEN_OVERFLOW] = {"listen_overflow", {"tp_kfree_skb"}},
	[PROBE_CONNECT_LATENCY] = {"connect_latency", {"tp_connect_enter", "tp_connect_exit"}},
	[PROBE_PORT_PARITY] = {"port_parity", {"tp_sock_state"}},
	[PROBE_NETRX_SOFTIRQ] = {"netrx_softirq", {"tp_softirq_entry", "tp_softirq_exit"}},
	[PROBE_NETRX_WAIT] = {"netrx_wait", {"tp_softirq_raise"}},
	[PROBE_ICMP_FRAG_NEEDED] = {"icmp_frag_needed", {"tp_icmp_send"}},
};

/* The aggregate maps --pin-dir exposes, pinned under their own names. */
static const char *const probes_pinned[] = {
	"tp_overflow", "tp_connect", "tp_netrx", "tp_netrx_peak", "tp_icmp_fragnd",
};
_Static_assert(sizeof(probes_pinned) / sizeof(probes_pinned[0]) == PROBES_PINNED_COUNT,
	       "PROBES_PINNED_COUNT is the length of probes_pinned");

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

void probes_libbpf_setup(bool verbose)
{
	probes_verbose = verbose;
	libbpf_set_print(probes_libbpf_print);
}

void probe_off(struct probe *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->on)
		return; /* keep the first reason: it is the root cause */
	p->on = false;
	va_start(ap, fmt);
	vsnprintf(p->reason, sizeof(p->reason), fmt, ap);
	va_end(ap);
}

/*
 * Syscall tracepoints are found through tracefs (their ids), which is not mounted by default
 * here. Mounts it when neither usual place has it; the caller unmounts it once attached (a
 * perf-event attachment does not need the mount). Returns 0 or -errno.
 */
int probes_tracefs_prepare(bool *mounted)
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
void probes_precheck(struct tide_probes_bpf *skel, int tracefs_err)
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
struct tide_probes_bpf *probes_load(void)
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

void probes_attach(struct tide_probes_bpf *skel)
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
int probes_pin(struct tide_probes_bpf *skel, const char *dir, bool *pinned)
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

void probes_unpin(struct tide_probes_bpf *skel, const char *dir, const bool *pinned)
{
	char path[4096];

	for (size_t i = 0; i < PROBES_PINNED_COUNT; i++) {
		if (!pinned[i])
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, probes_pinned[i]);
		bpf_map__unpin(bpf_object__find_map_by_name(skel->obj, probes_pinned[i]), path);
	}
}
