/* SPDX-License-Identifier: MIT */
#include "tide_control.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

json_t *tide_control_ok(json_t *id, json_t *result)
{
	return json_pack("{s:O,s:b,s:o}", "id", id ? id : json_null(), "ok", 1, "result",
			 result ? result : json_object());
}

json_t *tide_control_err(json_t *id, const char *code, json_t *detail, const char *fmt, ...)
{
	char msg[600];
	json_t *err;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	err = json_pack("{s:s,s:s}", "code", code, "message", msg);
	if (detail)
		json_object_set_new(err, "detail", detail);
	return json_pack("{s:O,s:b,s:o}", "id", id ? id : json_null(), "ok", 0, "error", err);
}

json_t *tide_control_check_keys(json_t *id, const char *cmd, json_t *req,
				const char *const *allowed)
{
	const char *key;
	json_t *v;

	json_object_foreach(req, key, v)
	{
		int ok = strcmp(key, "id") == 0 || strcmp(key, "cmd") == 0;

		for (const char *const *a = allowed; !ok && *a; a++)
			ok = strcmp(key, *a) == 0;
		if (!ok)
			return tide_control_err(id, "bad_request", NULL,
						"unknown field \"%s\" for %s", key, cmd);
	}
	return NULL;
}

/* One request line -> one reply object. */
static json_t *control_handle(struct tide_control_server *s, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *req, *id, *reply;
	const char *cmd;

	req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!req)
		return tide_control_err(NULL, "bad_request", NULL, "not JSON: %s (column %d)",
					jerr.text, jerr.column);
	if (!json_is_object(req)) {
		json_decref(req);
		return tide_control_err(NULL, "bad_request", NULL,
					"the request must be a JSON object");
	}
	id = json_object_get(req, "id");
	if (id && !json_is_string(id) && !json_is_integer(id)) {
		json_decref(req);
		return tide_control_err(NULL, "bad_request", NULL,
					"\"id\" must be a string or an integer");
	}
	cmd = json_string_value(json_object_get(req, "cmd"));
	if (!cmd)
		reply = tide_control_err(id, "bad_request", NULL, "\"cmd\" must be a string");
	else if (!(reply = s->handler(s->ctx, id, cmd, req)))
		reply = tide_control_err(id, "unknown_command", NULL, "unknown command \"%s\" (%s)",
					 cmd, s->commands);
	json_decref(req);
	return reply;
}

static void control_drop_client(struct tide_control_server *s, unsigned int i)
{
	struct tide_control_client *cl = &s->clients[i];

	close(cl->fd);
	free(cl->in);
	free(cl->out);
	s->clients[i] = s->clients[--s->num_clients];
	memset(&s->clients[s->num_clients], 0, sizeof(*cl));
}

/* Sends what the socket takes now. Returns 0, or -errno when the client is gone. */
static int control_flush(struct tide_control_client *cl)
{
	while (cl->out_len) {
		ssize_t n = send(cl->fd, cl->out, cl->out_len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -errno;
		}
		memmove(cl->out, cl->out + n, cl->out_len - (size_t)n);
		cl->out_len -= (size_t)n;
	}
	return 0;
}

/* Queues one reply line (takes `reply`) and sends what it can. 0 or -errno to drop the client. */
static int control_reply(struct tide_control_client *cl, json_t *reply)
{
	char *text = reply ? json_dumps(reply, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
	size_t len;

	json_decref(reply);
	if (!text)
		return -ENOMEM;
	len = strlen(text);
	if (cl->out_len + len + 1 > TIDE_CONTROL_OUT_MAX) {
		free(text);
		return -ENOBUFS; /* the client does not read its replies */
	}
	if (cl->out_len + len + 1 > cl->out_cap) {
		size_t cap = cl->out_cap ? cl->out_cap : 4096;
		char *p;

		while (cap < cl->out_len + len + 1)
			cap *= 2;
		p = realloc(cl->out, cap);
		if (!p) {
			free(text);
			return -ENOMEM;
		}
		cl->out = p;
		cl->out_cap = cap;
	}
	memcpy(cl->out + cl->out_len, text, len);
	cl->out[cl->out_len + len] = '\n';
	cl->out_len += len + 1;
	free(text);
	return control_flush(cl);
}

/* Handles every complete line in the input buffer. Returns 0 or -errno to drop the client. */
static int control_lines(struct tide_control_server *s, struct tide_control_client *cl)
{
	size_t start = 0;
	int rc = 0;

	for (size_t i = 0; i < cl->in_len && rc == 0; i++) {
		size_t end = i;

		if (cl->in[i] != '\n')
			continue;
		if (cl->skipping) {
			cl->skipping = false;
		} else {
			if (end > start && cl->in[end - 1] == '\r')
				end--;
			/* Blank lines (an interactive user pressing enter) are not requests. */
			if (strspn(cl->in + start, " \t\r") < end - start)
				rc = control_reply(cl,
						   control_handle(s, cl->in + start, end - start));
		}
		start = i + 1;
	}
	memmove(cl->in, cl->in + start, cl->in_len - start);
	cl->in_len -= start;
	if (rc == 0 && cl->in_len > TIDE_CONTROL_LINE_MAX) {
		/* No newline within the limit: answer once, then discard up to the next newline. */
		if (!cl->skipping)
			rc = control_reply(cl, tide_control_err(NULL, "line_too_long", NULL,
								"request line longer than %u bytes",
								TIDE_CONTROL_LINE_MAX));
		cl->skipping = true;
		cl->in_len = 0;
	}
	return rc;
}

static int control_read(struct tide_control_server *s, struct tide_control_client *cl)
{
	for (;;) {
		ssize_t n = recv(cl->fd, cl->in + cl->in_len,
				 TIDE_CONTROL_LINE_MAX + 1 - cl->in_len, MSG_DONTWAIT);
		int rc;

		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -errno;
		}
		cl->in_len += (size_t)n;
		rc = control_lines(s, cl);
		if (rc)
			return rc;
	}
}

static void control_accept(struct tide_control_server *s)
{
	struct tide_control_client *cl;
	int fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (s->num_clients == TIDE_CONTROL_MAX_CLIENTS) {
		fprintf(stderr, "%s: control: %u clients connected, refusing another\n", s->name,
			TIDE_CONTROL_MAX_CLIENTS);
		close(fd);
		return;
	}
	cl = &s->clients[s->num_clients];
	memset(cl, 0, sizeof(*cl));
	cl->fd = fd;
	cl->in = malloc(TIDE_CONTROL_LINE_MAX + 1);
	if (!cl->in) {
		close(fd);
		return;
	}
	s->num_clients++;
}

int tide_control_open(struct tide_control_server *s, const char *path, const char *name,
		      const char *commands, tide_control_handler handler, void *ctx)
{
	struct sockaddr_un addr;
	int fd, rc;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->name = name;
	s->commands = commands;
	s->handler = handler;
	s->ctx = ctx;
	if (!path[0] || strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A socket file left by a previous run that died would make bind() fail. */
	if (unlink(addr.sun_path) < 0 && errno != ENOENT) {
		rc = -errno;
		fprintf(stderr, "%s: control: cannot remove stale %s: %s\n", name, path,
			strerror(-rc));
		close(fd);
		return rc;
	}
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    chmod(addr.sun_path, 0660) < 0 || listen(fd, 16) < 0) {
		rc = -errno;
		fprintf(stderr, "%s: control: cannot listen on %s: %s\n", name, path,
			strerror(-rc));
		close(fd);
		unlink(addr.sun_path);
		return rc;
	}
	s->fd = fd;
	snprintf(s->path, sizeof(s->path), "%s", path);
	return 0;
}

int tide_control_poll(struct tide_control_server *s, int timeout_ms)
{
	struct pollfd fds[TIDE_CONTROL_MAX_CLIENTS + 1];
	unsigned int n = s->num_clients;
	int rc;

	fds[0].fd = s->fd;
	fds[0].events = POLLIN;
	fds[0].revents = 0;
	for (unsigned int i = 0; i < n; i++) {
		fds[i + 1].fd = s->clients[i].fd;
		fds[i + 1].events = (short)((s->clients[i].eof ? 0 : POLLIN) |
					    (s->clients[i].out_len ? POLLOUT : 0));
		fds[i + 1].revents = 0;
	}
	rc = poll(fds, n + 1, timeout_ms);
	if (rc < 0)
		return errno == EINTR ? 0 : -errno; /* EINTR: a stop signal */
	if (rc == 0)
		return 0;
	/* Backwards: dropping client i moves the last one into slot i. */
	for (unsigned int i = n; i-- > 0;) {
		struct tide_control_client *cl = &s->clients[i];
		short ev = fds[i + 1].revents;
		int crc = 0;

		if (!cl->eof && (ev & (POLLIN | POLLHUP | POLLERR)))
			crc = control_read(s, cl);
		/* socat and scripts half-close after the request: still send the replies. */
		if (crc == -ECONNRESET) {
			cl->eof = true;
			crc = control_flush(cl);
		} else if (crc == 0 && (ev & POLLOUT)) {
			crc = control_flush(cl);
		}
		if (crc || (cl->eof && cl->out_len == 0) || (ev & POLLERR))
			control_drop_client(s, i);
	}
	if (fds[0].revents & POLLIN)
		control_accept(s);
	return 0;
}

void tide_control_close(struct tide_control_server *s)
{
	while (s->num_clients)
		control_drop_client(s, s->num_clients - 1);
	if (s->fd >= 0) {
		close(s->fd);
		s->fd = -1;
		unlink(s->path);
	}
}

json_t *tide_control_time(const struct timespec *ts)
{
	struct tm tm;
	char base[32], buf[48];

	gmtime_r(&ts->tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, sizeof(buf), "%s.%03ldZ", base, ts->tv_nsec / 1000000L);
	return json_string(buf);
}
