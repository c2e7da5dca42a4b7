/* SPDX-License-Identifier: MIT */
/*
 * tide-redirect daemon: state shared by the lifecycle (tide_redirect.c), the map accessors
 * (redirect_maps.c) and the control socket (control.c, which gets it as its server context). One
 * process serves one interface in one network namespace.
 */
#ifndef TIDE_REDIRECT_H
#define TIDE_REDIRECT_H

#include <net/if.h>
#include <stdbool.h>
#include <time.h>

#include "tide_redirect_structs.h"

/* The release version, from the root package.json: dataplane/Makefile passes it. */
#ifndef TIDE_VERSION
#error "TIDE_VERSION is not set: build with make -C dataplane"
#endif

/* Longest netns name accepted (a file name under /var/run/netns), bytes. */
#define REDIRECT_NETNS_MAX 256

struct tide_redirect_bpf;

struct redirect_state {
	struct tide_redirect_bpf *skel;
	char iface[IF_NAMESIZE];
	int ifindex;
	char netns[REDIRECT_NETNS_MAX]; /* empty: the namespace the daemon started in */
	unsigned int prog_id;
	struct tide_redirect_config cfg; /* what the config map holds */
	struct timespec started_real, started_mono;
};

#endif /* TIDE_REDIRECT_H */
