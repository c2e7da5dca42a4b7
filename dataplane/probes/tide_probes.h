/* SPDX-License-Identifier: MIT */
/*
 * tide-probes' loader, what its three files share: tide_probes.c (options, serve loop, main),
 * probes_load.c (the probe table, prechecks, load, attach, pinning) and probes_report.c (the
 * JSON lines). Not seen by the BPF side (tide_probes_*.h).
 */
#ifndef TIDE_PROBES_H
#define TIDE_PROBES_H

#include <stdbool.h>
#include <stddef.h>

#include "tide_daemon.h"

/* The release version, from the root package.json: dataplane/Makefile passes it. */
#ifndef TIDE_VERSION
#error "TIDE_VERSION is not set: build with make -C dataplane"
#endif

#define probes_log(...) tide_log("tide-probes", __VA_ARGS__)

/* Programs per probe, at most. */
#define PROBES_MAX_PROGS 3
/* Room for a reason string in the hello line, bytes. */
#define PROBES_REASON_LEN 256
/* Aggregate maps --pin-dir exposes (probes_pinned in probes_load.c). */
#define PROBES_PINNED_COUNT 5

/* Where tracefs lives (libbpf looks here unless debugfs is mounted with tracing in it). */
#define PROBES_TRACEFS "/sys/kernel/tracing"
#define PROBES_DEBUGFS_TRACING "/sys/kernel/debug/tracing"

struct bpf_link;
struct tide_probes_bpf;

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

/* The probes, by enum probe_id (probes_load.c). */
extern struct probe probes[PROBE_COUNT];

struct probes_args {
	unsigned int interval_ms;
	const char *pin_dir;
	bool no_stdin;
	bool verbose;
	bool disabled[PROBE_COUNT]; /* --off NAME */
};

/* ---- probes_load.c ---- */

/* libbpf's messages to stderr with `verbose`; the first warning is kept for probe_off reasons. */
void probes_libbpf_setup(bool verbose);

/* Turns `p` off with a reason; the first reason stays (it is the root cause). */
void probe_off(struct probe *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Mounts tracefs when neither usual place has it. Returns 0 or -errno. */
int probes_tracefs_prepare(bool *mounted);

/* Turns off the probes this kernel cannot host, before anything is loaded. */
void probes_precheck(struct tide_probes_bpf *skel, int tracefs_err);

/* Loads every probe still on (each alone to find culprits); NULL when nothing loads. */
struct tide_probes_bpf *probes_load(void);

/* Attaches every probe still on; a probe that fails is turned off and detached. */
void probes_attach(struct tide_probes_bpf *skel);

/* Pins the aggregate maps; `pinned[i]` records what to unpin. Returns 0 or -errno. */
int probes_pin(struct tide_probes_bpf *skel, const char *dir, bool *pinned);

void probes_unpin(struct tide_probes_bpf *skel, const char *dir, const bool *pinned);

/* ---- probes_report.c ---- */

/* Monotonic clock, milliseconds. */
long long probes_mono_ms(void);

/* The hello line: version, interval, each probe on or off (with its reason), pinning. */
int probes_emit_hello(const struct probes_args *a, const char *pin_error);

/* Ring-buffer callback: one listen() call, printed at once. */
int probes_on_listen(void *ctx, void *data, size_t len);

/* One sample line from the aggregate maps (`skel` may be NULL). 0 or -EPIPE. */
int probes_emit_sample(struct tide_probes_bpf *skel);

#endif /* TIDE_PROBES_H */
