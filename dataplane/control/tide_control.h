/* SPDX-License-Identifier: MIT */
/*
 * The control socket server shared by tide-director and tide-redirect: a UNIX stream socket
 * speaking newline-delimited JSON. One request object per line ({"id"?, "cmd", ...}), one reply
 * per line, in order; errors never close the connection. The framing, limits, error replies for
 * malformed lines and client bookkeeping live here; each daemon supplies its commands through a
 * handler. Single-threaded: call tide_control_poll() from one thread (never a worker lcore).
 */
#ifndef TIDE_CONTROL_H
#define TIDE_CONTROL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/un.h>
#include <time.h>

/* Longest request line, bytes (without the newline). */
#define TIDE_CONTROL_LINE_MAX 65536u
#define TIDE_CONTROL_MAX_CLIENTS 64u
/* A client whose unread replies exceed this is disconnected, bytes. */
#define TIDE_CONTROL_OUT_MAX (64u << 20)

/*
 * Handles one well-formed request (`req` is an object, `cmd` its string "cmd", `id` its "id" or
 * NULL). Returns a new reply object (tide_control_ok / tide_control_err), or NULL when `cmd` is
 * not a command of this daemon (the server answers unknown_command).
 */
typedef json_t *(*tide_control_handler)(void *ctx, json_t *id, const char *cmd, json_t *req);

struct tide_control_client {
	int fd;
	bool skipping; /* discarding the rest of a line that was too long */
	bool eof;      /* the client shut down its side; close once the replies are sent */
	size_t in_len;
	char *in; /* TIDE_CONTROL_LINE_MAX + 1 bytes */
	char *out;
	size_t out_len;
	size_t out_cap;
};

struct tide_control_server {
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	const char *name;     /* log prefix, e.g. "tide-redirect" */
	const char *commands; /* for unknown_command replies, e.g. "status, stats, config" */
	tide_control_handler handler;
	void *ctx;
	unsigned int num_clients;
	struct tide_control_client clients[TIDE_CONTROL_MAX_CLIENTS];
};

/*
 * Creates the socket at `path` (removes a stale one, binds, chmod 0660, listens). Returns 0 or
 * -errno (-ENAMETOOLONG for a path that does not fit a sockaddr_un).
 */
int tide_control_open(struct tide_control_server *s, const char *path, const char *name,
		      const char *commands, tide_control_handler handler, void *ctx);

/* One poll() round of at most `timeout_ms`: accepts, reads, answers, writes. 0 or -errno. */
int tide_control_poll(struct tide_control_server *s, int timeout_ms);

/* Closes every connection and removes the socket file. Safe to call twice. */
void tide_control_close(struct tide_control_server *s);

/* {"id": id, "ok": true, "result": result}; steals `result` (NULL: an empty object). */
json_t *tide_control_ok(json_t *id, json_t *result);

/* {"id": id, "ok": false, "error": {"code", "message", "detail"?}}; steals `detail`. */
__attribute__((format(printf, 4, 5))) json_t *
tide_control_err(json_t *id, const char *code, json_t *detail, const char *fmt, ...);

/* A wall-clock time as the replies carry it: "2026-01-02T03:04:05.678Z" (UTC, milliseconds). */
json_t *tide_control_time(const struct timespec *ts);

/* A bad_request reply for any key not in `allowed` (NULL-terminated; "id" and "cmd" always
 * allowed), or NULL when every key is allowed. */
json_t *tide_control_check_keys(json_t *id, const char *cmd, json_t *req,
				const char *const *allowed);

#endif /* TIDE_CONTROL_H */
