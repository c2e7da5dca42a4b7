/* SPDX-License-Identifier: MIT */
/*
 * tide-healthcheck: the proxy health checks of a director host, for the agent, which spawns it once
 * (with --netns, in the director's namespace) and talks JSON lines on stdin/stdout. The wire format
 * is packages/contracts/src/healthcheck-wire.ts:
 *
 *   out, first:  {"ready":true,"version":"0.1.0","netns":"dir1"}
 *   in:          {"id":7,"kind":"http","target":"10.100.11.2","port":80,"path":"/health",
 *                 "expectStatus":200,"timeoutMs":1000}
 *   out:         {"id":7,"ok":true,"latencyUs":812,"detail":"HTTP 200"}
 *
 * Checks run concurrently and answer in the order they finish. A thread per check rather than an
 * epoll loop: each check is a short sequential exchange (connect, send, read one line; or send one
 * datagram and wait for one reply) that reads best as straight-line code with poll() deadlines,
 * the agent runs tens to hundreds at a time, and a thread with a small stack costs little at that
 * count. At most HC_MAX_RUNNING run at once; past that, reading stdin waits for one to finish.
 *
 * A line that is not a valid request gets {"id":<its id or 0>,"ok":false,"latencyUs":null,
 * "detail":"<why>"} and the process goes on. Each result is written whole under out_mu and
 * flushed. EOF on stdin: the running checks finish (each within its timeoutMs), then exit 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tide_daemon.h"
#include "tide_healthcheck.h"

/* The release version, from the root package.json: dataplane/Makefile passes it. */
#ifndef TIDE_VERSION
#error "TIDE_VERSION is not set: build with make -C dataplane"
#endif

/* Stack of a check thread: the largest frame is http's (~1.5 KiB of buffers); ASan needs more. */
#define HC_THREAD_STACK (256 * 1024)

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t run_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t run_cond = PTHREAD_COND_INITIALIZER;
static unsigned running; /* guarded by run_mu */

void hc_errno_text(int err, char *buf, size_t len)
{
	char tmp[128];
	const char *s = strerror_r(err, tmp, sizeof(tmp)); /* GNU: may return a static string */

	snprintf(buf, len, "%s", s);
	if (buf[0] >= 'A' && buf[0] <= 'Z')
		buf[0] = (char)(buf[0] - 'A' + 'a');
}

void hc_fail_errno(struct hc_result *res, int err, int64_t start_us)
{
	res->ok = false;
	/* A refusal or reset is the target's answer; a local error or a silence is not. */
	res->latency_us = err == ECONNREFUSED || err == ECONNRESET ? hc_now_us() - start_us : -1;
	hc_errno_text(err, res->detail, sizeof(res->detail));
}

void hc_fail_timeout(struct hc_result *res, const struct hc_request *req)
{
	res->ok = false;
	res->latency_us = -1;
	snprintf(res->detail, sizeof(res->detail), "timeout after %d ms", req->timeout_ms);
}

/* Writes one result line; the agent gone (EPIPE) ends the process. */
static void emit_result(const struct hc_result *r)
{
	char detail[HC_DETAIL_MAX + 1];
	json_t *obj;
	char *text;
	size_t i;

	/* Printable ASCII only: a JSON parser's message may quote the bytes it choked on. */
	for (i = 0; r->detail[i] != '\0' && i < HC_DETAIL_MAX; i++)
		detail[i] = r->detail[i] >= 0x20 && r->detail[i] < 0x7f ? r->detail[i] : '?';
	detail[i] = '\0';
	obj = json_pack("{s:I,s:b,s:o,s:s}", "id", (json_int_t)r->id, "ok", r->ok, "latencyUs",
			r->latency_us >= 0 ? json_integer((json_int_t)r->latency_us) : json_null(),
			"detail", detail);
	text = obj != NULL ? json_dumps(obj, JSON_COMPACT) : NULL;
	json_decref(obj);
	if (text == NULL) {
		fprintf(stderr, "tide-healthcheck: cannot encode the result of %lld\n",
			(long long)r->id);
		exit(1);
	}
	pthread_mutex_lock(&out_mu);
	if (fputs(text, stdout) == EOF || fputc('\n', stdout) == EOF || fflush(stdout) == EOF)
		exit(0); /* the agent went away */
	pthread_mutex_unlock(&out_mu);
	free(text);
}

static void *run_check(void *arg)
{
	struct hc_request *req = arg;
	struct hc_result res = {.id = req->id, .ok = false, .latency_us = -1};

	switch (req->kind) {
	case HC_KIND_GUE:
		hc_check_gue(req, &res);
		break;
	case HC_KIND_TCP:
		hc_check_tcp(req, &res);
		break;
	case HC_KIND_HTTP:
		hc_check_http(req, &res);
		break;
	}
	emit_result(&res);
	free(req);
	pthread_mutex_lock(&run_mu);
	running--;
	pthread_cond_broadcast(&run_cond);
	pthread_mutex_unlock(&run_mu);
	return NULL;
}

static void start_check(const struct hc_request *parsed, const pthread_attr_t *attr)
{
	struct hc_result res = {.id = parsed->id, .ok = false, .latency_us = -1};
	struct hc_request *req = malloc(sizeof(*req));
	pthread_t thread;
	int rc;

	if (req == NULL) {
		snprintf(res.detail, sizeof(res.detail), "cannot start the check: out of memory");
		emit_result(&res);
		return;
	}
	*req = *parsed;
	pthread_mutex_lock(&run_mu);
	while (running >= HC_MAX_RUNNING)
		pthread_cond_wait(&run_cond, &run_mu);
	running++;
	pthread_mutex_unlock(&run_mu);
	rc = pthread_create(&thread, attr, run_check, req);
	if (rc != 0) {
		char text[128];
		pthread_mutex_lock(&run_mu);
		running--;
		pthread_mutex_unlock(&run_mu);
		free(req);
		hc_errno_text(rc, text, sizeof(text));
		snprintf(res.detail, sizeof(res.detail), "cannot start the check: %s", text);
		emit_result(&res);
	}
}

static void handle_line(const char *line, size_t len, bool too_long, const pthread_attr_t *attr)
{
	struct hc_request req;
	struct hc_result res = {.id = 0, .ok = false, .latency_us = -1};

	if (too_long) {
		snprintf(res.detail, sizeof(res.detail),
			 "invalid request: line longer than %d bytes", HC_MAX_LINE_BYTES);
		emit_result(&res);
		return;
	}
	if (hc_parse_request(line, len, &req, res.detail, sizeof(res.detail)) < 0) {
		res.id = req.id;
		emit_result(&res);
		return;
	}
	start_check(&req, attr);
}

/* Enters /run/netns/<name> for good, before any socket or thread exists. */
static int enter_netns(const char *name)
{
	int rc = tide_netns_enter(name);

	if (rc == -EINVAL)
		fprintf(stderr, "tide-healthcheck: --netns: not a namespace name: %s\n", name);
	else if (rc < 0)
		fprintf(stderr, "tide-healthcheck: cannot enter %s/%s: %s\n", TIDE_NETNS_DIR, name,
			strerror(-rc));
	return rc < 0 ? -1 : 0;
}

static void usage(FILE *to)
{
	fprintf(to,
		"usage: tide-healthcheck [--netns NAME]\n"
		"  Proxy health checks (gue, tcp, http): JSON requests on stdin, one per line;\n"
		"  JSON results on stdout (packages/contracts/src/healthcheck-wire.ts).\n"
		"  --netns NAME  run in the network namespace /run/netns/NAME\n"
		"  --version     print the version and exit\n"
		"  --help        print this and exit\n");
}

int main(int argc, char **argv)
{
	static char line[HC_MAX_LINE_BYTES];
	const char *netns = NULL;
	pthread_attr_t attr;
	json_t *ready;
	size_t len = 0;
	bool too_long = false;
	int c, rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--version") == 0) {
			printf("tide-healthcheck %s\n", TIDE_VERSION);
			return 0;
		} else if (strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "--netns") == 0 && i + 1 < argc) {
			netns = argv[++i];
		} else {
			usage(stderr);
			return 1;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	/* Jansson's only global state; set once before any thread builds an object. */
	json_object_seed(0);
	if (netns != NULL && enter_netns(netns) < 0)
		return 1;
	rc = hc_gue_init();
	if (rc < 0)
		fprintf(stderr, "tide-healthcheck: raw ICMP socket: %s (gue checks will fail)\n",
			strerror(-rc));
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, HC_THREAD_STACK);

	ready = json_pack("{s:b,s:s,s:o}", "ready", 1, "version", TIDE_VERSION, "netns",
			  netns != NULL ? json_string(netns) : json_null());
	if (ready == NULL || json_dumpf(ready, stdout, JSON_COMPACT) < 0 ||
	    fputc('\n', stdout) == EOF || fflush(stdout) == EOF)
		return 1;
	json_decref(ready);

	/* Bytes past HC_MAX_LINE_BYTES are dropped up to the newline; the line is answered as too
	 * long. Only this thread reads stdin. */
	while ((c = getc_unlocked(stdin)) != EOF) {
		if (c == '\n') {
			handle_line(line, len, too_long, &attr);
			len = 0;
			too_long = false;
		} else if (len < sizeof(line)) {
			line[len++] = (char)c;
		} else {
			too_long = true;
		}
	}
	if (len > 0 || too_long)
		handle_line(line, len, too_long, &attr); /* a last line without its newline */

	pthread_mutex_lock(&run_mu);
	while (running > 0)
		pthread_cond_wait(&run_cond, &run_mu);
	pthread_mutex_unlock(&run_mu);
	pthread_attr_destroy(&attr);
	return 0;
}
