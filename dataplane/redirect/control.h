/* SPDX-License-Identifier: MIT */
/*
 * The control socket of tide-redirect: a UNIX stream server speaking newline-delimited JSON with
 * tide-director's conventions (request {"id"?, "cmd", ...}; reply {"id", "ok", "result"|"error"};
 * error codes bad_request, unknown_command, line_too_long, internal). Commands: status, stats,
 * config, flows. Served from the daemon's main loop; no thread.
 */
#ifndef TIDE_REDIRECT_CONTROL_H
#define TIDE_REDIRECT_CONTROL_H

#include "tide_redirect.h"

/* Framing, limits and malformed-line replies: ../control/tide_control.h (shared with the director). */

/*
 * `flows` (packages/contracts/src/redirect-control.ts mirrors each): most flows one reply lists
 * (about 330 bytes of JSON each, so under 200 KB), and since_ms's default and largest value, ms.
 * Ten minutes covers a table change and its report; older entries stay in the map until evicted.
 */
#define REDIRECT_MAX_FLOWS_REPLY 512
#define REDIRECT_FLOWS_DEFAULT_SINCE_MS 10000
#define REDIRECT_FLOWS_MAX_SINCE_MS 600000

/* Creates the socket at `path` (unlinks a stale one, binds, chmod 0660, listens). 0 or -errno. */
int redirect_control_open(struct redirect_state *st, const char *path);

/* Waits up to `timeout_ms` for socket events and serves them. Returns 0 or -errno. */
int redirect_control_poll(int timeout_ms);

/* Closes every connection and removes the socket file. */
void redirect_control_close(void);

#endif /* TIDE_REDIRECT_CONTROL_H */
