/* SPDX-License-Identifier: MIT */
#include "control.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

struct control_client {
	int fd;
	bool skipping; /* discarding the rest of a line that was too long */
	bool eof;      /* the client shut down its side; close once the replies are sent */
	size_t in_len;
	char *in; /* CONTROL_LINE_MAX + 1 bytes */
	char *out;
	size_t out_len;
	size_t out_cap;
};

static struct redirect_state *control_st;
static int control_fd = -1;
static char control_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static struct control_client control_clients[CONTROL_MAX_CLIENTS];
static unsigned int control_num_clients;

/* ---- replies ---- */

static json_t *control_ok(json_t *id, json_t *result)
{
	return json_pack("{s:O,s:b,s:o}", "id", id ? id : json_null(), "ok", 1, "result",
			 result ? result : json_object());
}

__attribute__((format(printf, 3, 4))) static json_t *control_err(json_t *id, const char *code,
								 const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return json_pack("{s:O,s:b,s:{s:s,s:s}}", "id", id ? id : json_null(), "ok", 0, "error",
			 "code", code, "message", msg);
}

static void control_time(const struct timespec *ts, char *buf, size_t len)
{
	struct tm tm;
	char base[32];

	gmtime_r(&ts->tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03ldZ", base, ts->tv_nsec / 1000000L);
}

static json_t *control_addrs_json(const struct tide_redirect_config *cfg)
{
	json_t *a = json_array();

	for (__u32 i = 0; i < cfg->num_local && i < TIDE_REDIRECT_MAX_LOCAL; i++) {
		char buf[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &cfg->local_addrs[i], buf, sizeof(buf));
		json_array_append_new(a, json_string(buf));
	}
	return a;
}

/* Rejects any key not in `allowed` (NULL-terminated); "id" and "cmd" are always allowed. */
static json_t *control_check_keys(json_t *id, const char *cmd, json_t *req,
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
			return control_err(id, "bad_request", "unknown field \"%s\" for %s", key,
					   cmd);
	}
	return NULL;
}

/* ---- commands ---- */

static json_t *control_status(json_t *id)
{
	const struct redirect_state *st = control_st;
	struct timespec now;
	char started[48];

	clock_gettime(CLOCK_MONOTONIC, &now);
	control_time(&st->started_real, started, sizeof(started));
	return control_ok(
		id, json_pack("{s:s,s:i,s:s,s:f,s:s,s:i,s:o,s:s,s:I,s:i,s:o}", "version",
			      TIDE_VERSION, "pid", (int)getpid(), "started_at", started, "uptime_s",
			      (double)(now.tv_sec - st->started_mono.tv_sec) +
				      (double)(now.tv_nsec - st->started_mono.tv_nsec) / 1e9,
			      "iface", st->iface, "ifindex", st->ifindex, "netns",
			      st->netns[0] ? json_string(st->netns) : json_null(), "attach",
			      "tc-ingress", "prog_id", (json_int_t)st->prog_id, "port",
			      (int)st->cfg.port, "local_addresses", control_addrs_json(&st->cfg)));
}

static json_t *control_stats(json_t *id)
{
	__u64 v[TR_COUNTER_COUNT];
	json_t *counters;
	int rc = redirect_counters_read(control_st, v);

	if (rc)
		return control_err(id, "internal", "cannot read the stats map: %s", strerror(-rc));
	counters = json_object();
	for (unsigned int i = 0; i < TR_COUNTER_COUNT; i++)
		json_object_set_new(counters, redirect_counter_names[i],
				    json_integer((json_int_t)v[i]));
	return control_ok(id, json_pack("{s:o}", "counters", counters));
}

static json_t *control_config_json(void)
{
	return json_pack("{s:i,s:o}", "port", (int)control_st->cfg.port, "local_addresses",
			 control_addrs_json(&control_st->cfg));
}

/* `config`: optional local_addresses and port; every field is checked before anything changes. */
static json_t *control_config(json_t *id, json_t *req)
{
	static const char *const allowed[] = {"local_addresses", "port", NULL};
	json_t *r, *addrs = json_object_get(req, "local_addresses");
	json_t *port = json_object_get(req, "port");
	struct tide_redirect_config cfg = control_st->cfg;
	int rc;

	r = control_check_keys(id, "config", req, allowed);
	if (r)
		return r;
	if (port) {
		if (!json_is_integer(port) || json_integer_value(port) < 1 ||
		    json_integer_value(port) > 65535)
			return control_err(id, "bad_request",
					   "\"port\" must be an integer 1..65535");
		cfg.port = (__u16)json_integer_value(port);
	}
	if (addrs) {
		size_t i;
		json_t *v;

		if (!json_is_array(addrs) || json_array_size(addrs) == 0 ||
		    json_array_size(addrs) > TIDE_REDIRECT_MAX_LOCAL)
			return control_err(id, "bad_request",
					   "\"local_addresses\" must be an array of 1..%u IPv4 "
					   "addresses",
					   TIDE_REDIRECT_MAX_LOCAL);
		memset(cfg.local_addrs, 0, sizeof(cfg.local_addrs));
		json_array_foreach(addrs, i, v)
		{
			const char *s = json_string_value(v);

			if (!s || inet_pton(AF_INET, s, &cfg.local_addrs[i]) != 1)
				return control_err(
					id, "bad_request",
					"\"local_addresses\"[%zu] must be an IPv4 address", i);
			for (size_t j = 0; j < i; j++)
				if (cfg.local_addrs[j] == cfg.local_addrs[i])
					return control_err(id, "bad_request",
							   "\"local_addresses\"[%zu] repeats %s", i,
							   s);
		}
		cfg.num_local = (__u32)json_array_size(addrs);
	}
	rc = redirect_config_apply(control_st, &cfg);
	if (rc)
		return control_err(id, "internal", "cannot update the config map: %s",
				   strerror(-rc));
	return control_ok(id, control_config_json());
}

/* One request line -> one reply object. */
static json_t *control_handle(const char *line, size_t len)
{
	static const char *const none[] = {NULL};
	json_error_t jerr;
	json_t *req, *id, *reply;
	const char *c;

	req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!req)
		return control_err(NULL, "bad_request", "not JSON: %s (column %d)", jerr.text,
				   jerr.column);
	if (!json_is_object(req)) {
		json_decref(req);
		return control_err(NULL, "bad_request", "the request must be a JSON object");
	}
	id = json_object_get(req, "id");
	if (id && !json_is_string(id) && !json_is_integer(id)) {
		json_decref(req);
		return control_err(NULL, "bad_request", "\"id\" must be a string or an integer");
	}
	c = json_string_value(json_object_get(req, "cmd"));
	if (!c)
		reply = control_err(id, "bad_request", "\"cmd\" must be a string");
	else if (strcmp(c, "status") == 0)
		reply = control_check_keys(id, c, req, none) ?: control_status(id);
	else if (strcmp(c, "stats") == 0)
		reply = control_check_keys(id, c, req, none) ?: control_stats(id);
	else if (strcmp(c, "config") == 0)
		reply = control_config(id, req);
	else
		reply = control_err(id, "unknown_command",
				    "unknown command \"%s\" (status, stats, config)", c);
	json_decref(req);
	return reply;
}

/* ---- connections ---- */

static void control_drop_client(unsigned int i)
{
	struct control_client *cl = &control_clients[i];

	close(cl->fd);
	free(cl->in);
	free(cl->out);
	control_clients[i] = control_clients[--control_num_clients];
	memset(&control_clients[control_num_clients], 0, sizeof(*cl));
}

/* Sends what the socket takes now. Returns 0, or -errno when the client is gone. */
static int control_flush(struct control_client *cl)
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

static int control_reply(struct control_client *cl, json_t *reply)
{
	char *s = reply ? json_dumps(reply, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
	size_t len;

	json_decref(reply);
	if (!s)
		return -ENOMEM;
	len = strlen(s);
	if (cl->out_len + len + 1 > CONTROL_OUT_MAX) {
		free(s);
		return -ENOBUFS;
	}
	if (cl->out_len + len + 1 > cl->out_cap) {
		size_t cap = cl->out_cap ? cl->out_cap : 4096;
		char *p;

		while (cap < cl->out_len + len + 1)
			cap *= 2;
		p = realloc(cl->out, cap);
		if (!p) {
			free(s);
			return -ENOMEM;
		}
		cl->out = p;
		cl->out_cap = cap;
	}
	memcpy(cl->out + cl->out_len, s, len);
	cl->out[cl->out_len + len] = '\n';
	cl->out_len += len + 1;
	free(s);
	return control_flush(cl);
}

/* Handles every complete line in the input buffer. Returns 0 or -errno to drop the client. */
static int control_lines(struct control_client *cl)
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
				rc = control_reply(cl, control_handle(cl->in + start, end - start));
		}
		start = i + 1;
	}
	memmove(cl->in, cl->in + start, cl->in_len - start);
	cl->in_len -= start;
	if (rc == 0 && cl->in_len > CONTROL_LINE_MAX) {
		/* No newline within the limit: answer once, then discard up to the next newline. */
		if (!cl->skipping)
			rc = control_reply(cl, control_err(NULL, "line_too_long",
							   "request line longer than %u bytes",
							   CONTROL_LINE_MAX));
		cl->skipping = true;
		cl->in_len = 0;
	}
	return rc;
}

static int control_read(struct control_client *cl)
{
	for (;;) {
		ssize_t n = recv(cl->fd, cl->in + cl->in_len, CONTROL_LINE_MAX + 1 - cl->in_len,
				 MSG_DONTWAIT);
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
		rc = control_lines(cl);
		if (rc)
			return rc;
	}
}

static void control_accept(void)
{
	struct control_client *cl;
	int fd = accept4(control_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (control_num_clients == CONTROL_MAX_CLIENTS) {
		fprintf(stderr, "tide-redirect: control: %u clients connected, refusing another\n",
			CONTROL_MAX_CLIENTS);
		close(fd);
		return;
	}
	cl = &control_clients[control_num_clients];
	memset(cl, 0, sizeof(*cl));
	cl->fd = fd;
	cl->in = malloc(CONTROL_LINE_MAX + 1);
	if (!cl->in) {
		close(fd);
		return;
	}
	control_num_clients++;
}

int control_open(struct redirect_state *st, const char *path)
{
	struct sockaddr_un addr;
	int fd, rc;

	control_st = st;
	if (strlen(path) >= sizeof(addr.sun_path))
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
		close(fd);
		return rc;
	}
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    chmod(addr.sun_path, 0660) < 0 || listen(fd, 16) < 0) {
		rc = -errno;
		close(fd);
		unlink(addr.sun_path);
		return rc;
	}
	snprintf(control_path, sizeof(control_path), "%s", path);
	control_fd = fd;
	return 0;
}

int control_poll(int timeout_ms)
{
	struct pollfd fds[CONTROL_MAX_CLIENTS + 1];
	unsigned int n = control_num_clients;
	int rc;

	fds[0].fd = control_fd;
	fds[0].events = POLLIN;
	fds[0].revents = 0;
	for (unsigned int i = 0; i < n; i++) {
		fds[i + 1].fd = control_clients[i].fd;
		fds[i + 1].events = (short)((control_clients[i].eof ? 0 : POLLIN) |
					    (control_clients[i].out_len ? POLLOUT : 0));
		fds[i + 1].revents = 0;
	}
	rc = poll(fds, n + 1, timeout_ms);
	if (rc < 0)
		return errno == EINTR ? 0 : -errno; /* EINTR: the stop signal */
	if (rc == 0)
		return 0;
	/* Backwards: dropping client i moves the last one into slot i. */
	for (unsigned int i = n; i-- > 0;) {
		struct control_client *cl = &control_clients[i];
		short ev = fds[i + 1].revents;
		int crc = 0;

		if (!cl->eof && (ev & (POLLIN | POLLHUP | POLLERR)))
			crc = control_read(cl);
		/* socat and scripts half-close after the request: still send the replies. */
		if (crc == -ECONNRESET) {
			cl->eof = true;
			crc = control_flush(cl);
		} else if (crc == 0 && (ev & POLLOUT)) {
			crc = control_flush(cl);
		}
		if (crc || (cl->eof && cl->out_len == 0) || (ev & POLLERR))
			control_drop_client(i);
	}
	if (fds[0].revents & POLLIN)
		control_accept();
	return 0;
}

void control_close(void)
{
	while (control_num_clients)
		control_drop_client(control_num_clients - 1);
	if (control_fd >= 0) {
		close(control_fd);
		control_fd = -1;
		unlink(control_path);
	}
}
