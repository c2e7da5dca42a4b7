/* SPDX-License-Identifier: MIT */
/*
 * Process helpers the daemons share (tide-redirect, tide-probes, tide-healthcheck, and
 * tide-redirect's test): a stderr log line, entering a named network namespace, mounting bpffs.
 * The one compiled file of common/ (tide_daemon.c); each daemon's .mk links it. Nothing here is
 * on a packet path.
 */
#ifndef TIDE_DAEMON_H
#define TIDE_DAEMON_H

#include <stdbool.h>

/* Where `ip netns add NAME` puts its namespaces. */
#define TIDE_NETNS_DIR "/run/netns"

/* Writes "WHO: message\n" to stderr. */
void tide_log(const char *who, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Joins TIDE_NETNS_DIR/NAME for the calling thread, as `ip netns exec` does. Returns 0, -EINVAL
 * when `name` cannot be a file in that directory (empty, ".", "..", a '/', over 255 bytes), or
 * the -errno of open()/setns().
 */
int tide_netns_enter(const char *name);

/*
 * Mounts bpffs on `dir` (created if missing) unless it is one already; says what it did so the
 * cleanup path undoes exactly that. Returns 0 or -errno.
 */
int tide_bpffs_mount(const char *dir, bool *mounted, bool *made_dir);

#endif /* TIDE_DAEMON_H */
