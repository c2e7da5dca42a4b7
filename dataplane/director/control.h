/* SPDX-License-Identifier: MIT */
/*
 * The control socket: a UNIX stream server speaking newline-delimited JSON (control protocol
 * v1: status, load_table, stats, explain, set_gateway). One poll() loop serves every client in
 * a non-worker thread; it never runs on a worker lcore.
 */
#ifndef TIDE_DIRECTOR_CONTROL_H
#define TIDE_DIRECTOR_CONTROL_H

#include "config.h"

/* Framing, limits and malformed-line replies: ../control/tide_control.h (shared with tide-redirect). */
/* How often the loop checks the stop flag, milliseconds. */
#define CONTROL_POLL_MS 100

/* Creates the socket (unlinks a stale one, binds, chmod 0660, listens). Returns 0 or -errno. */
int director_control_open(const struct director_config *cfg);

/* Serves clients, and runs a reload SIGHUP asked for, until worker_quit is set. 0 or -errno. */
int director_control_run(void);

/* pthread entry point wrapping director_control_run(). */
void *director_control_thread(void *arg);

/* Closes every connection and removes the socket file. */
void director_control_close(void);

#endif /* TIDE_DIRECTOR_CONTROL_H */
