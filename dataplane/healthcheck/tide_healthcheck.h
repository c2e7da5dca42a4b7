/* SPDX-License-Identifier: MIT */
/*
 * tide-healthcheck: what the parts share. A request parsed from one JSON line, the result of one
 * check, the limits, and the monotonic clock every deadline and latency is measured on.
 *
 *   hc_request.c        JSON line -> struct hc_request (the contract's validation, in C)
 *   hc_gue.c            the GUE check: GUE-wrapped ICMP echo out, the raw-socket receiver
 *   hc_tcp.c            the tcp and http checks (non-blocking connect, bounded status-line read)
 *   tide_healthcheck.c  options, --netns, the stdin loop, a thread per check, result lines
 *
 * Wire format: packages/contracts/src/healthcheck-wire.ts.
 */
#ifndef TIDE_HEALTHCHECK_H
#define TIDE_HEALTHCHECK_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Longest request line, newline excluded (HEALTHCHECK_MAX_LINE_BYTES). */
#define HC_MAX_LINE_BYTES 4096
/* Longest detail (HealthcheckResult.detail .max(300)). */
#define HC_DETAIL_MAX 300
/* Longest http path: "/" + 255 printable characters (HealthcheckRequest.path). */
#define HC_PATH_MAX 256
/* Request id range (HealthcheckRequest.id); 0 in a result = the id could not be read. */
#define HC_ID_MAX 2147483647LL
/* timeoutMs range (HealthcheckRequest.timeoutMs). */
#define HC_TIMEOUT_MIN_MS 10
#define HC_TIMEOUT_MAX_MS 60000
/* Checks running at once; reading stdin pauses at this count (backpressure on the agent). */
#define HC_MAX_RUNNING 1024
/* http defaults when the request leaves them out (the contract makes both optional). */
#define HC_HTTP_DEFAULT_PATH "/"
#define HC_HTTP_DEFAULT_STATUS 200

enum hc_kind {
	HC_KIND_GUE,
	HC_KIND_TCP,
	HC_KIND_HTTP,
};

struct hc_request {
	int64_t id; /* 1..HC_ID_MAX, or 0 while unreadable */
	enum hc_kind kind;
	struct in_addr target;
	char target_text[INET_ADDRSTRLEN]; /* as the request spelled it (the Host header) */
	uint16_t port;			   /* host order */
	char path[HC_PATH_MAX + 1];	   /* http */
	int expect_status;		   /* http */
	int timeout_ms;
};

struct hc_result {
	int64_t id;
	bool ok;
	int64_t latency_us; /* -1: no answer (JSON null) */
	char detail[HC_DETAIL_MAX + 1];
};

/* Microseconds on CLOCK_MONOTONIC: check start, deadlines, answers. */
static inline int64_t hc_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Milliseconds left until deadline_us for poll(), rounded up (0 when it has passed). */
static inline int hc_ms_left(int64_t deadline_us)
{
	int64_t left = deadline_us - hc_now_us();

	return left <= 0 ? 0 : (int)((left + 999) / 1000);
}

/*
 * Parses one request line (len bytes, not NUL-terminated). 0 and *req filled, or -1 with the
 * reason in why; req->id is the request's id whenever it could be read, else 0.
 */
int hc_parse_request(const char *line, size_t len, struct hc_request *req, char *why,
		     size_t whylen);

/* "connection refused", "no route to host": strerror with a lower-case first letter. */
void hc_errno_text(int err, char *buf, size_t len);
/* The result of a check that failed with errno err; latency only when the peer answered. */
void hc_fail_errno(struct hc_result *res, int err, int64_t start_us);
void hc_fail_timeout(struct hc_result *res, const struct hc_request *req);

/*
 * Opens the raw ICMP socket in the current namespace and starts the thread that hands echo
 * replies to waiting gue checks. 0, or -errno (gue checks then fail with the reason; tcp and http
 * still work).
 */
int hc_gue_init(void);
void hc_check_gue(const struct hc_request *req, struct hc_result *res);
void hc_check_tcp(const struct hc_request *req, struct hc_result *res);
void hc_check_http(const struct hc_request *req, struct hc_result *res);

#endif /* TIDE_HEALTHCHECK_H */
