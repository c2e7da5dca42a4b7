/* SPDX-License-Identifier: MIT */
/*
 * tide-redirect: loads the second-chance BPF program on TC clsact ingress of the proxy's
 * interface and serves the control socket until SIGINT/SIGTERM.
 *
 *   tide-redirect --iface IFNAME [--netns NAME] [--local ADDR]... [--port 19523]
 *                 --socket PATH [--pin-dir DIR]
 *
 * Lifecycle (libbpf-bootstrap): open -> configure -> load -> attach -> serve -> one cleanup path
 * that undoes exactly what was done (the clsact qdisc is removed only if this process made it).
 * Under systemd (Type=notify) READY=1 follows the attach and the listen, STOPPING=1 the signal.
 * Exit codes: 1 runtime failure (no such interface, load, attach, socket), 2 bad command line.
 * Everything it serves is set on the command line or over the socket: no file to reload.
 */
#include "tide_redirect.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control.h"
#include "redirect_maps.h"
#include "tide_daemon.h"
#include "tide_redirect.skel.h"
#include "tide_sd_notify.h"

#define redirect_log(...) tide_log("tide-redirect", __VA_ARGS__)

/* How often the main loop looks at the stop flag, milliseconds. */
#define REDIRECT_POLL_MS 200
/* File name of the pinned stats map inside --pin-dir. */
#define REDIRECT_PIN_STATS "tide_redirect_stats"

struct redirect_args {
	const char *iface;
	const char *netns;
	const char *socket_path;
	const char *pin_dir;
	struct tide_redirect_config cfg; /* port and the --local addresses */
};

static volatile sig_atomic_t redirect_stop;

static void redirect_on_signal(int sig)
{
	(void)sig;
	redirect_stop = 1;
}

/* libbpf's own messages: warnings and errors only (debug output is for bpftool users). */
static bool redirect_libbpf_quiet; /* set around calls whose failure is expected */

static int redirect_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || redirect_libbpf_quiet)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void redirect_usage(FILE *f)
{
	fprintf(f,
		"usage: tide-redirect --iface IFNAME [--netns NAME] [--local ADDR]... "
		"[--port %u] --socket PATH [--pin-dir DIR]\n",
		TIDE_REDIRECT_DEFAULT_PORT);
}

static int redirect_parse_args(int argc, char **argv, struct redirect_args *a)
{
	static const struct option opts[] = {
		{"iface", required_argument, NULL, 'i'},  {"netns", required_argument, NULL, 'n'},
		{"local", required_argument, NULL, 'l'},  {"port", required_argument, NULL, 'p'},
		{"socket", required_argument, NULL, 's'}, {"pin-dir", required_argument, NULL, 'd'},
		{"help", no_argument, NULL, 'h'},	  {NULL, 0, NULL, 0},
	};
	int c;

	memset(a, 0, sizeof(*a));
	a->cfg.port = TIDE_REDIRECT_DEFAULT_PORT;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *end;
		long v;

		switch (c) {
		case 'i':
			a->iface = optarg;
			break;
		case 'n':
			a->netns = optarg;
			break;
		case 'l':
			if (a->cfg.num_local == TIDE_REDIRECT_MAX_LOCAL) {
				redirect_log("at most %u --local addresses",
					     TIDE_REDIRECT_MAX_LOCAL);
				return -EINVAL;
			}
			if (inet_pton(AF_INET, optarg, &a->cfg.local_addrs[a->cfg.num_local]) !=
			    1) {
				redirect_log("--local %s: not an IPv4 address", optarg);
				return -EINVAL;
			}
			a->cfg.num_local++;
			break;
		case 'p':
			v = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || v < 1 || v > 65535) {
				redirect_log("--port %s: must be 1..65535", optarg);
				return -EINVAL;
			}
			a->cfg.port = (__u16)v;
			break;
		case 's':
			a->socket_path = optarg;
			break;
		case 'd':
			a->pin_dir = optarg;
			break;
		case 'h':
			redirect_usage(stdout);
			exit(0);
		default:
			redirect_usage(stderr);
			return -EINVAL;
		}
	}
	/* An empty --iface is what a unit gets from an unset variable: a configuration error. */
	if (optind != argc || !a->iface || !a->iface[0] || !a->socket_path || !a->socket_path[0]) {
		redirect_usage(stderr);
		return -EINVAL;
	}
	if (strlen(a->iface) >= IF_NAMESIZE ||
	    (a->netns && strlen(a->netns) >= REDIRECT_NETNS_MAX) ||
	    (a->netns && (strchr(a->netns, '/') || a->netns[0] == '.'))) {
		redirect_log("bad --iface or --netns name");
		return -EINVAL;
	}
	return 0;
}

/* The interface's IPv4 addresses, when no --local was given. Returns 0 or -errno. */
static int redirect_iface_addrs(const char *iface, struct tide_redirect_config *cfg)
{
	struct ifaddrs *list, *ifa;

	if (getifaddrs(&list) < 0)
		return -errno;
	for (ifa = list; ifa && cfg->num_local < TIDE_REDIRECT_MAX_LOCAL; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET ||
		    strcmp(ifa->ifa_name, iface) != 0)
			continue;
		memcpy(&cfg->local_addrs[cfg->num_local++],
		       &((struct sockaddr_in *)ifa->ifa_addr)->sin_addr, 4);
	}
	freeifaddrs(list);
	return cfg->num_local ? 0 : -EADDRNOTAVAIL;
}

/* Refuses a second instance: whatever holds our handle/priority on the hook is reported. */
static int redirect_check_free(struct bpf_tc_hook *hook)
{
	LIBBPF_OPTS(bpf_tc_opts, q, .handle = TIDE_REDIRECT_TC_HANDLE,
		    .priority = TIDE_REDIRECT_TC_PRIORITY);
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	int fd;

	if (bpf_tc_query(hook, &q) != 0)
		return 0; /* nothing holds our handle */
	memset(&info, 0, sizeof(info));
	fd = bpf_prog_get_fd_by_id(q.prog_id);
	if (fd >= 0) {
		bpf_obj_get_info_by_fd(fd, &info, &len);
		close(fd);
	}
	if (strcmp(info.name, TIDE_REDIRECT_PROG_NAME) == 0)
		redirect_log("another tide-redirect program (prog id %u) is already attached to %s "
			     "tc ingress; stop it first",
			     q.prog_id, hook->ifindex ? "this interface's" : "the");
	else
		redirect_log("tc ingress filter handle 0x%x priority %u is taken by program %u "
			     "(\"%s\"); refusing to replace it",
			     TIDE_REDIRECT_TC_HANDLE, TIDE_REDIRECT_TC_PRIORITY, q.prog_id,
			     info.name);
	return -EBUSY;
}

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, tc, .handle = TIDE_REDIRECT_TC_HANDLE,
		    .priority = TIDE_REDIRECT_TC_PRIORITY);
	static struct redirect_state st;
	struct redirect_args args;
	char pin_path[4096] = "";
	bool hook_created = false, attached = false, control_up = false;
	bool bpffs_mounted = false, pin_dir_made = false;
	struct sigaction sa;
	int rc;

	rc = redirect_parse_args(argc, argv, &args);
	if (rc)
		return 2;
	libbpf_set_print(redirect_libbpf_print);
	clock_gettime(CLOCK_REALTIME, &st.started_real);
	clock_gettime(CLOCK_MONOTONIC, &st.started_mono);
	snprintf(st.iface, sizeof(st.iface), "%s", args.iface);

	if (args.netns) {
		rc = tide_netns_enter(args.netns);
		if (rc) {
			redirect_log("cannot enter netns %s: %s", args.netns, strerror(-rc));
			return 1;
		}
		snprintf(st.netns, sizeof(st.netns), "%s", args.netns);
	}
	st.ifindex = (int)if_nametoindex(args.iface);
	if (!st.ifindex) {
		redirect_log("no interface %s: %s", args.iface, strerror(errno));
		return 1;
	}
	if (!args.cfg.num_local) {
		rc = redirect_iface_addrs(args.iface, &args.cfg);
		if (rc) {
			redirect_log("%s has no IPv4 address; give --local", args.iface);
			return 1;
		}
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = redirect_on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	/* open -> load (nothing to configure before load: the config lives in a map) */
	st.skel = tide_redirect_bpf__open_and_load();
	if (!st.skel) {
		rc = -errno;
		redirect_log("cannot load the BPF program: %s", strerror(-rc));
		goto out;
	}
	rc = redirect_config_apply(&st, &args.cfg);
	if (rc) {
		redirect_log("cannot write the config map: %s", strerror(-rc));
		goto out;
	}

	/* attach */
	hook.ifindex = st.ifindex;
	redirect_libbpf_quiet = true; /* "exclusivity flag on" just means the qdisc exists */
	rc = bpf_tc_hook_create(&hook);
	redirect_libbpf_quiet = false;
	if (rc == 0) {
		hook_created = true; /* a new qdisc has no filter: nothing to check */
	} else if (rc == -EEXIST) {
		redirect_libbpf_quiet = true;
		rc = redirect_check_free(&hook);
		redirect_libbpf_quiet = false;
		if (rc)
			goto out;
	} else {
		redirect_log("cannot create the clsact qdisc on %s: %s", args.iface, strerror(-rc));
		goto out;
	}
	tc.prog_fd = bpf_program__fd(st.skel->progs.tide_redirect);
	rc = bpf_tc_attach(&hook, &tc);
	if (rc) {
		redirect_log("cannot attach to %s tc ingress: %s", args.iface, strerror(-rc));
		goto out;
	}
	attached = true;
	st.prog_id = tc.prog_id;

	if (args.pin_dir) {
		rc = tide_bpffs_mount(args.pin_dir, &bpffs_mounted, &pin_dir_made);
		if (rc) {
			redirect_log("cannot mount bpffs on %s: %s", args.pin_dir, strerror(-rc));
			goto out;
		}
		snprintf(pin_path, sizeof(pin_path), "%s/%s", args.pin_dir, REDIRECT_PIN_STATS);
		unlink(pin_path); /* left by a run that was killed */
		rc = bpf_map__pin(st.skel->maps.tide_redirect_stats, pin_path);
		if (rc) {
			redirect_log("cannot pin the stats map at %s: %s", pin_path, strerror(-rc));
			pin_path[0] = '\0';
			goto out;
		}
	}

	rc = redirect_control_open(&st, args.socket_path);
	if (rc) {
		redirect_log("cannot listen on %s: %s", args.socket_path, strerror(-rc));
		goto out;
	}
	control_up = true;
	redirect_log("attached to %s (ifindex %d%s%s) tc ingress, prog id %u, port %u, %u local "
		     "address(es), control %s",
		     args.iface, st.ifindex, args.netns ? ", netns " : "",
		     args.netns ? args.netns : "", st.prog_id, st.cfg.port, st.cfg.num_local,
		     args.socket_path);
	tide_sd_notifyf("READY=1\nSTATUS=attached to %s tc ingress (prog id %u), %u local "
			"address(es), control %s",
			args.iface, st.prog_id, st.cfg.num_local, args.socket_path);

	while (!redirect_stop) {
		rc = redirect_control_poll(REDIRECT_POLL_MS);
		if (rc) {
			redirect_log("control socket failed: %s", strerror(-rc));
			break;
		}
	}

out:
	if (control_up)
		tide_sd_notify("STOPPING=1\nSTATUS=detaching");
	/* One cleanup path: undo what was done, in reverse. */
	if (control_up)
		redirect_control_close();
	if (pin_path[0])
		bpf_map__unpin(st.skel->maps.tide_redirect_stats, pin_path);
	if (bpffs_mounted)
		umount(args.pin_dir);
	if (pin_dir_made)
		rmdir(args.pin_dir);
	if (attached) {
		tc.prog_fd = 0;
		tc.prog_id = 0;
		tc.flags = 0;
		if (bpf_tc_detach(&hook, &tc))
			redirect_log("cannot detach from %s", args.iface);
	}
	if (hook_created) {
		/* Destroying clsact takes both attach points. */
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&hook);
	}
	tide_redirect_bpf__destroy(st.skel);
	if (rc == 0 && redirect_stop)
		redirect_log("stopped");
	return rc ? 1 : 0;
}
