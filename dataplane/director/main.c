/* SPDX-License-Identifier: MIT */
/*
 * tide-director: GLB-style L4 director on DPDK. Receives client packets, picks a proxy pair from
 * the forwarding table (GLBD v2 or v3) and sends them on GUE-encapsulated, one-armed.
 *
 *   tide-director [EAL options] -- --config PATH [--control PATH] [--table PATH]
 *   tide-director [EAL options] -- --help
 *
 * Worker lcores (every EAL lcore but the main one) forward; the main lcore serves the control
 * socket. With a single lcore, the main lcore forwards and a control thread serves the socket.
 * Under systemd (Type=notify) it sends READY=1 once the ports are started and the socket listens;
 * SIGHUP re-reads the configuration file (service.c), SIGINT / SIGTERM stop it.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_thread.h>
#include <rte_version.h>

#include "config.h"
#include "control.h"
#include "port.h"
#include "service.h"
#include "table.h"
#include "worker.h"

#define RTE_LOGTYPE_TIDE RTE_LOGTYPE_USER1

/* Exit codes: 1 runtime failure, 2 bad command line or configuration. */
#define EXIT_CONFIG 2

static struct director_config cfg;

static void signal_handler(int signum)
{
	(void)signum;
	worker_quit = true;
}

/* SIGHUP (systemctl reload): the control thread re-reads the configuration file. */
static void reload_signal_handler(int signum)
{
	(void)signum;
	service_request_reload();
}

static void usage(FILE *out, const char *prog)
{
	fprintf(out,
		"usage: %s [EAL options] -- --config PATH [--control PATH] [--table PATH]\n"
		"  --config PATH   JSON configuration (see director.example.json)\n"
		"  --control PATH  control socket, overrides \"control_socket\"\n"
		"  --table PATH    forwarding table (GLBD v2 or v3) loaded at start, overrides\n"
		"                  \"table_file\"\n"
		"  --help          this text (EAL's own options: %s --help)\n",
		prog, prog);
}

/*
 * `-- --help` (or -h) among the application arguments: answered before rte_eal_init(), which
 * would otherwise need hugepages, the vdevs' interfaces and a free file prefix just to print it.
 */
static bool wants_help(int argc, char **argv)
{
	bool app = false;

	for (int i = 1; i < argc; i++) {
		if (!app) {
			app = strcmp(argv[i], "--") == 0;
			continue;
		}
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return true;
	}
	return false;
}

/* Parses the application arguments (after "--"). Returns 0 or -EINVAL. */
static int parse_args(int argc, char **argv, const char **config, const char **control,
		      const char **table)
{
	static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
					     {"control", required_argument, NULL, 's'},
					     {"table", required_argument, NULL, 't'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			*config = optarg;
			break;
		case 's':
			*control = optarg;
			break;
		case 't':
			*table = optarg;
			break;
		default:
			return -EINVAL;
		}
	}
	if (optind != argc || !*config)
		return -EINVAL;
	return 0;
}

/*
 * The control thread, on the control cores rather than a data-plane lcore. DPDK 23.11 replaced
 * rte_ctrl_thread_create (pthread-based, removed in 24.11, which Debian 13 ships) with
 * rte_thread_create_control; Debian 12 ships 22.11, which has only the former.
 */
#if RTE_VERSION >= RTE_VERSION_NUM(23, 11, 0, 0)
typedef rte_thread_t control_thread_t;

static uint32_t control_thread_entry(void *arg)
{
	director_control_thread(arg);
	return 0;
}

static int control_thread_start(control_thread_t *tid)
{
	return rte_thread_create_control(tid, "tide-control", control_thread_entry, NULL);
}

static void control_thread_join(control_thread_t tid)
{
	rte_thread_join(tid, NULL);
}
#else
typedef pthread_t control_thread_t;

static int control_thread_start(control_thread_t *tid)
{
	return rte_ctrl_thread_create(tid, "tide-control", NULL, director_control_thread, NULL);
}

static void control_thread_join(control_thread_t tid)
{
	pthread_join(tid, NULL);
}
#endif

/* The table named by the config: absent is fine (load it later), unusable is logged. */
static int load_initial_table(const char *path, int required)
{
	struct table_error err;

	if (!path[0])
		return 0;
	if (table_load(path, NULL, 0, NULL, &err) == 0)
		return 0;
	if (required)
		return -EINVAL;
	RTE_LOG(WARNING, TIDE, "starting without a table; send load_table on the control socket\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *config_path = NULL, *control_path = NULL, *table_path = NULL;
	unsigned int lcores[RTE_MAX_LCORE], n = 0, lcore;
	bool control_on_thread;
	control_thread_t control_tid;
	char err[512];
	int rc, ret;

	if (wants_help(argc, argv)) {
		usage(stdout, "tide-director");
		return 0;
	}
	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "tide-director: EAL init failed: %s\n", rte_strerror(rte_errno));
		return EXIT_CONFIG;
	}
	argc -= ret;
	argv += ret;
	argv[0] = (char *)"tide-director";
	if (parse_args(argc, argv, &config_path, &control_path, &table_path)) {
		usage(stderr, argv[0]);
		rte_eal_cleanup();
		return EXIT_CONFIG;
	}
	if (config_load(config_path, &cfg, err, sizeof(err))) {
		fprintf(stderr, "tide-director: %s\n", err);
		rte_eal_cleanup();
		return EXIT_CONFIG;
	}
	if (config_override(&cfg, control_path, table_path, err, sizeof(err))) {
		fprintf(stderr, "tide-director: %s\n", err);
		rte_eal_cleanup();
		return EXIT_CONFIG;
	}
	service_init(&cfg, config_path, control_path, table_path);

	signal(SIGINT, signal_handler);
	signal(SIGTERM, signal_handler);
	signal(SIGHUP, reload_signal_handler);
	signal(SIGPIPE, SIG_IGN);

	worker_params.mtu = cfg.mtu;
	worker_params.burst = cfg.burst;
	worker_params.idle_sleep_us = cfg.idle_sleep_us;

	/* Workers are the EAL lcores other than main; with none, main forwards itself. */
	RTE_LCORE_FOREACH_WORKER(lcore)
	lcores[n++] = lcore;
	control_on_thread = n == 0;
	if (n == 0)
		lcores[n++] = rte_get_main_lcore();

	rc = worker_rcu_init();
	if (rc) {
		RTE_LOG(ERR, TIDE, "cannot set up RCU: %s\n", strerror(-rc));
		goto fail_eal;
	}
	table_init(&cfg);
	rc = port_init_all(&cfg, lcores, n);
	if (rc)
		goto fail_ports;
	rc = worker_set_gateway(cfg.gateway_mac, cfg.source_ip);
	if (rc)
		goto fail_ports;
	rc = load_initial_table(cfg.table_file, table_path != NULL);
	if (rc)
		goto fail_ports;
	rc = director_control_open(&cfg);
	if (rc)
		goto fail_ports;

	if (control_on_thread) {
		rc = control_thread_start(&control_tid);
		if (rc) {
			/* 22.11 returns a negative errno, 23.11+ a positive one. */
			RTE_LOG(ERR, TIDE, "cannot start the control thread: %s\n",
				strerror(rc < 0 ? -rc : rc));
			goto fail_control;
		}
		/* The ports are started and the socket listens: systemd may start what needs us. */
		service_ready();
		worker_main(&worker_lcores[0]);
		service_stopping();
		control_thread_join(control_tid);
	} else {
		for (unsigned int i = 0; i < n; i++)
			rte_eal_remote_launch(worker_main, &worker_lcores[i],
					      worker_lcores[i].lcore_id);
		service_ready();
		director_control_run();
		service_stopping();
		rte_eal_mp_wait_lcore();
	}
	RTE_LOG(INFO, TIDE, "stopping\n");
	director_control_close();
	port_close_all();
	table_free();
	worker_free();
	rte_eal_cleanup();
	return 0;

fail_control:
	director_control_close();
fail_ports:
	port_close_all();
	table_free();
	worker_free();
fail_eal:
	rte_eal_cleanup();
	return 1;
}
