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
 *
 * This file: options, the serve loop, main and its cleanup. Load and attach: probes_load.c; the
 * JSON lines: probes_report.c; what they share: tide_probes.h.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tide_probes.h"
#include "tide_probes.skel.h"

/* Sample period unless --interval-ms says otherwise, and its accepted range, milliseconds. */
#define PROBES_INTERVAL_MS 1000
#define PROBES_INTERVAL_MIN_MS 10
#define PROBES_INTERVAL_MAX_MS 3600000

static volatile sig_atomic_t probes_stop;

static void probes_on_signal(int sig)
{
	(void)sig;
	probes_stop = 1;
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
	probes_libbpf_setup(args.verbose);
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
