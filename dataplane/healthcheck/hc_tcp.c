/* SPDX-License-Identifier: MIT */
/*
 * The tcp and http checks. Each runs on its own thread with blocking-style code over a
 * non-blocking socket: every wait is a poll() bounded by what is left of the check's timeoutMs,
 * so the whole exchange (connect, request, status line) fits in it.
 *
 *   tcp:   connect, close. "connected" / "connection refused" / "timeout after N ms" / errno text.
 *   http:  connect, "GET <path> HTTP/1.0" with Host: <target>, read up to the first line end
 *          (at most HC_STATUS_LINE_MAX bytes), close. ok when the status is expectStatus:
 *          "HTTP 200", "HTTP 503 (expected 200)".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tide_healthcheck.h"

/* Bytes read while looking for the end of the status line ("HTTP/1.1 200 OK\r\n" is 17). */
#define HC_STATUS_LINE_MAX 512
/* Longest request: the fixed text (~80 bytes) + path (256) + target (15). */
#define HC_HTTP_REQUEST_MAX 512

/* Waits for events on fd until deadline_us: 0 ready, -ETIMEDOUT, or -errno. */
static int wait_for(int fd, short events, int64_t deadline_us)
{
	struct pollfd p = {.fd = fd, .events = events};

	for (;;) {
		int ms = hc_ms_left(deadline_us);
		int n;

		if (ms == 0)
			return -ETIMEDOUT;
		n = poll(&p, 1, ms);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/* Non-blocking TCP connect to the target, bounded by deadline_us: the fd, or -errno. */
static int connect_by(const struct hc_request *req, int64_t deadline_us)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(req->port)};
	socklen_t len = sizeof(int);
	int fd, err = 0, rc;

	sa.sin_addr = req->target;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return fd;
	if (errno != EINPROGRESS) {
		err = errno;
		close(fd);
		return -err;
	}
	rc = wait_for(fd, POLLOUT, deadline_us);
	if (rc == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		rc = -errno;
	else if (rc == 0 && err != 0)
		rc = -err;
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

static void fail(struct hc_result *res, const struct hc_request *req, int neg_errno,
		 int64_t start_us)
{
	if (neg_errno == -ETIMEDOUT)
		hc_fail_timeout(res, req);
	else
		hc_fail_errno(res, -neg_errno, start_us);
}

void hc_check_tcp(const struct hc_request *req, struct hc_result *res)
{
	int64_t start = hc_now_us();
	int fd = connect_by(req, start + (int64_t)req->timeout_ms * 1000);

	if (fd < 0) {
		fail(res, req, fd, start);
		return;
	}
	res->ok = true;
	res->latency_us = hc_now_us() - start;
	snprintf(res->detail, sizeof(res->detail), "connected");
	close(fd);
}

/* "HTTP/d.d ddd" followed by a space, CR, LF or the end: the status, or -1. */
static int parse_status_line(const char *s, size_t n)
{
	if (n < 12 || memcmp(s, "HTTP/", 5) != 0 || s[5] < '0' || s[5] > '9' || s[6] != '.' ||
	    s[7] < '0' || s[7] > '9' || s[8] != ' ')
		return -1;
	for (int i = 9; i < 12; i++)
		if (s[i] < '0' || s[i] > '9')
			return -1;
	if (n > 12 && s[12] != ' ' && s[12] != '\r' && s[12] != '\n')
		return -1;
	return (s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0');
}

static int send_all(int fd, const char *p, size_t len, int64_t deadline_us)
{
	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0) {
			int rc;
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -errno;
			rc = wait_for(fd, POLLOUT, deadline_us);
			if (rc < 0)
				return rc;
			continue;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads until the first LF, HC_STATUS_LINE_MAX bytes or EOF: bytes read, or -errno. */
static ssize_t read_status_line(int fd, char *buf, int64_t deadline_us)
{
	size_t len = 0;

	while (len < HC_STATUS_LINE_MAX && memchr(buf, '\n', len) == NULL) {
		ssize_t n = recv(fd, buf + len, HC_STATUS_LINE_MAX - len, 0);
		if (n == 0)
			break;
		if (n < 0) {
			int rc;
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -errno;
			rc = wait_for(fd, POLLIN, deadline_us);
			if (rc < 0)
				return rc;
			continue;
		}
		len += (size_t)n;
	}
	return (ssize_t)len;
}

void hc_check_http(const struct hc_request *req, struct hc_result *res)
{
	int64_t start = hc_now_us();
	int64_t deadline = start + (int64_t)req->timeout_ms * 1000;
	char request[HC_HTTP_REQUEST_MAX];
	char line[HC_STATUS_LINE_MAX];
	int fd = connect_by(req, deadline);
	int len, rc, status;
	ssize_t got;

	if (fd < 0) {
		fail(res, req, fd, start);
		return;
	}
	len = snprintf(request, sizeof(request),
		       "GET %s HTTP/1.0\r\nHost: %s\r\nUser-Agent: tide-healthcheck\r\n"
		       "Connection: close\r\n\r\n",
		       req->path, req->target_text);
	rc = send_all(fd, request, (size_t)len, deadline);
	if (rc < 0) {
		close(fd);
		fail(res, req, rc, start);
		return;
	}
	got = read_status_line(fd, line, deadline);
	close(fd);
	if (got < 0) {
		fail(res, req, (int)got, start);
		return;
	}
	res->latency_us = hc_now_us() - start;
	if (got == 0) {
		snprintf(res->detail, sizeof(res->detail),
			 "connection closed before the status line");
		return;
	}
	status = parse_status_line(line, (size_t)got);
	if (status < 0) {
		snprintf(res->detail, sizeof(res->detail), "not an HTTP status line");
		return;
	}
	res->ok = status == req->expect_status;
	if (res->ok)
		snprintf(res->detail, sizeof(res->detail), "HTTP %d", status);
	else
		snprintf(res->detail, sizeof(res->detail), "HTTP %d (expected %d)", status,
			 req->expect_status);
}
