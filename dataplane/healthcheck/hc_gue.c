/* SPDX-License-Identifier: MIT */
/*
 * The gue check: does a client packet's path work end to end? It sends what a director sends, a
 * GUE datagram to target:port, whose inner packet is an ICMP echo request from this namespace's
 * source address to the target:
 *
 *   UDP (connected socket; the kernel writes the outer IPv4 and UDP headers)
 *   -> GUE base header: version 0, C 0, hlen 1 (the GLB private data word), proto 4, flags 0
 *   -> GLB private data: type u16 0, next_hop 0, hop_count 0 (no hops: the proxy keeps it)
 *   -> IPv4: src = the UDP socket's local address, dst = target, TTL 64, DF, proto ICMP
 *   -> ICMP echo request: id = this process's icmp_ident, seq = unique per running check,
 *      payload = "tide-hc\0" + this process's nonce (4 bytes) + request id (u32 big-endian)
 *
 * tide-redirect on the proxy decapsulates it (inner ICMP is accepted locally) and the proxy's
 * kernel answers the echo directly, not in GUE. One thread reads a raw ICMP socket (echo replies
 * only, by ICMP_FILTER) and hands each reply whose id, seq, source and payload match to the check
 * waiting for it; the check waits on its condition variable until the reply or its deadline.
 *
 * No reply by the deadline: "timeout after N ms". If the GUE port answered with an ICMP error
 * meanwhile (nothing decapsulates GUE there: the kernel's UDP says port unreachable, when its ICMP
 * rate limit lets it), the reason is added: "timeout after N ms (GUE port: connection refused)".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/icmp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tide_gue.h"
#include "tide_healthcheck.h"

#define HC_IPV4_HLEN 20u
#define HC_ICMP_HLEN 8u
#define HC_INNER_TTL 64u
#define HC_IPPROTO_ICMP 1u
/* "tide-hc\0" (8) + process nonce (4) + request id (4) */
#define HC_ECHO_PAYLOAD 16u
#define HC_PROBE_LEN \
	(TIDE_GUE_BASE_HLEN + TIDE_GLB_PRIV_HLEN + HC_IPV4_HLEN + HC_ICMP_HLEN + HC_ECHO_PAYLOAD)
/* The receiver's read buffer: any IPv4 packet (options, a large echo) fits in 64 KiB. */
#define HC_RAW_RECV_MAX 65536
/* ICMP sequence numbers: one per running check (at most HC_MAX_RUNNING). */
#define HC_SEQ_SLOTS 65536
/*
 * Receive buffer of the raw socket: replies to every running check may arrive in one burst while
 * the receiver thread waits to be scheduled. An echo reply costs ~1 KiB of buffer (skb truesize),
 * so 4 MiB holds HC_MAX_RUNNING (1024) of them; the default (~208 KiB) holds a few hundred.
 */
#define HC_RAW_RCVBUF (4 << 20)

/* One gue check waiting for its echo reply; lives on the check's stack while registered. */
struct gue_wait {
	uint32_t target; /* network order: the reply must come from it */
	uint8_t payload[HC_ECHO_PAYLOAD];
	bool answered;
	int64_t answered_us;
	pthread_cond_t cond; /* CLOCK_MONOTONIC */
};

static pthread_mutex_t gue_mu = PTHREAD_MUTEX_INITIALIZER;
/* Running checks by ICMP sequence number; guarded by gue_mu. */
static struct gue_wait *waiting[HC_SEQ_SLOTS];
static uint16_t next_seq;
static uint16_t icmp_ident;
static uint8_t process_nonce[4];
static int raw_fd = -1;
static int raw_errno;

/* The ones' complement checksum of len bytes, as the field value in memory order. */
static uint16_t csum_of(const uint8_t *p, uint32_t len)
{
	return tide_csum_fold(tide_csum_add(0, p, len));
}

static void build_probe(uint8_t *pkt, uint32_t src, uint32_t dst, uint16_t seq,
			const uint8_t *payload)
{
	uint8_t *ip = pkt + TIDE_GUE_BASE_HLEN + TIDE_GLB_PRIV_HLEN;
	uint8_t *icmp = ip + HC_IPV4_HLEN;
	uint16_t csum;

	memset(pkt, 0, HC_PROBE_LEN);
	pkt[0] = 1; /* version 0, C 0, hlen 1: the GLB private data, no hops */
	pkt[1] = TIDE_GUE_PROTO_IPV4;
	/* pkt[2..3] flags 0; pkt[4..7] GLB private data: type 0, next_hop 0, hop_count 0 */

	ip[0] = 0x45;
	tide_put_be16(ip + 2, (uint16_t)(HC_IPV4_HLEN + HC_ICMP_HLEN + HC_ECHO_PAYLOAD));
	tide_put_be16(ip + 4, seq);
	tide_put_be16(ip + 6, TIDE_IP_DF);
	ip[8] = HC_INNER_TTL;
	ip[9] = HC_IPPROTO_ICMP;
	memcpy(ip + 12, &src, 4);
	memcpy(ip + 16, &dst, 4);
	csum = csum_of(ip, HC_IPV4_HLEN);
	memcpy(ip + 10, &csum, 2);

	icmp[0] = ICMP_ECHO;
	tide_put_be16(icmp + 4, icmp_ident);
	tide_put_be16(icmp + 6, seq);
	memcpy(icmp + HC_ICMP_HLEN, payload, HC_ECHO_PAYLOAD);
	csum = csum_of(icmp, HC_ICMP_HLEN + HC_ECHO_PAYLOAD);
	memcpy(icmp + 2, &csum, 2);
}

/* Hands a received IPv4 packet to the check it answers, if any. */
static void deliver(const uint8_t *pkt, size_t len, int64_t now_us)
{
	size_t ihl;
	const uint8_t *icmp;
	uint32_t src;
	uint16_t seq;
	struct gue_wait *w;

	if (len < HC_IPV4_HLEN || (pkt[0] >> 4) != 4 || pkt[9] != HC_IPPROTO_ICMP)
		return;
	ihl = (size_t)(pkt[0] & 0x0f) * 4;
	if (ihl < HC_IPV4_HLEN || len < ihl + HC_ICMP_HLEN + HC_ECHO_PAYLOAD)
		return;
	icmp = pkt + ihl;
	if (icmp[0] != ICMP_ECHOREPLY || icmp[1] != 0 ||
	    (uint16_t)(icmp[4] << 8 | icmp[5]) != icmp_ident)
		return;
	/* The raw socket sees the packet before icmp_rcv() checks its checksum. */
	if (csum_of(icmp, (uint32_t)(len - ihl)) != 0)
		return;
	seq = (uint16_t)(icmp[6] << 8 | icmp[7]);
	memcpy(&src, pkt + 12, 4);
	pthread_mutex_lock(&gue_mu);
	w = waiting[seq];
	if (w != NULL && !w->answered && w->target == src &&
	    memcmp(icmp + HC_ICMP_HLEN, w->payload, HC_ECHO_PAYLOAD) == 0) {
		w->answered = true;
		w->answered_us = now_us;
		pthread_cond_signal(&w->cond);
	}
	pthread_mutex_unlock(&gue_mu);
}

static void *receive_replies(void *unused)
{
	static uint8_t buf[HC_RAW_RECV_MAX];

	(void)unused;
	for (;;) {
		ssize_t n = recv(raw_fd, buf, sizeof(buf), 0);
		int64_t now = hc_now_us();

		if (n < 0) {
			if (errno == EINTR || errno == ENOBUFS || errno == ENOMEM)
				continue;
			/* Not expected on a raw socket; the checks waiting will time out. */
			fprintf(stderr, "tide-healthcheck: raw ICMP socket: %s\n", strerror(errno));
			sleep(1);
			continue;
		}
		deliver(buf, (size_t)n, now);
	}
	return NULL;
}

int hc_gue_init(void)
{
	struct icmp_filter only_replies = {.data = ~(1U << ICMP_ECHOREPLY)};
	pthread_attr_t attr;
	pthread_t thread;
	int rcvbuf = HC_RAW_RCVBUF;
	uint8_t seed[2];
	int rc;

	icmp_ident = (uint16_t)getpid();
	/* The nonce tells our replies from another tide-healthcheck's with the same pid (another
	 * pid namespace, same network namespace); a failed getrandom only weakens that. */
	if (getrandom(process_nonce, sizeof(process_nonce), 0) != (ssize_t)sizeof(process_nonce) ||
	    getrandom(seed, sizeof(seed), 0) != (ssize_t)sizeof(seed))
		memset(seed, 0, sizeof(seed));
	next_seq = (uint16_t)(seed[0] << 8 | seed[1]);

	raw_fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
	if (raw_fd < 0) {
		raw_errno = errno;
		return -raw_errno;
	}
	if (setsockopt(raw_fd, SOL_RAW, ICMP_FILTER, &only_replies, sizeof(only_replies)) < 0)
		fprintf(stderr, "tide-healthcheck: ICMP_FILTER: %s (reading every ICMP packet)\n",
			strerror(errno));
	/* FORCE: past net.core.rmem_max (root); else as much as rmem_max allows. */
	if (setsockopt(raw_fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		setsockopt(raw_fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&thread, &attr, receive_replies, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		close(raw_fd);
		raw_fd = -1;
		raw_errno = rc;
		return -rc;
	}
	return 0;
}

/* Takes a free sequence number for w (0 and w registered), or -EBUSY. */
static int register_wait(struct gue_wait *w, uint16_t *seq)
{
	int rc = -EBUSY;

	pthread_mutex_lock(&gue_mu);
	for (uint32_t tries = 0; tries < HC_SEQ_SLOTS; tries++) {
		uint16_t s = next_seq++;
		if (waiting[s] == NULL) {
			waiting[s] = w;
			*seq = s;
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&gue_mu);
	return rc;
}

static void unregister_wait(uint16_t seq)
{
	pthread_mutex_lock(&gue_mu);
	waiting[seq] = NULL;
	pthread_mutex_unlock(&gue_mu);
}

/* Waits for the reply until deadline_us; true when it came. */
static bool wait_reply(struct gue_wait *w, int64_t deadline_us)
{
	struct timespec until = {.tv_sec = (time_t)(deadline_us / 1000000),
				 .tv_nsec = (long)(deadline_us % 1000000) * 1000};
	bool answered;

	pthread_mutex_lock(&gue_mu);
	while (!w->answered)
		if (pthread_cond_timedwait(&w->cond, &gue_mu, &until) == ETIMEDOUT)
			break;
	answered = w->answered;
	pthread_mutex_unlock(&gue_mu);
	return answered;
}

void hc_check_gue(const struct hc_request *req, struct hc_result *res)
{
	int64_t start = hc_now_us();
	int64_t deadline = start + (int64_t)req->timeout_ms * 1000;
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(req->port)};
	struct sockaddr_in local;
	socklen_t len = sizeof(local);
	struct gue_wait w = {.target = req->target.s_addr};
	uint8_t pkt[HC_PROBE_LEN];
	pthread_condattr_t attr;
	uint32_t id_be = htonl((uint32_t)req->id);
	uint16_t seq;
	int fd, err = 0;

	if (raw_fd < 0) {
		char text[128];
		hc_errno_text(raw_errno, text, sizeof(text));
		snprintf(res->detail, sizeof(res->detail), "raw ICMP socket: %s", text);
		return;
	}
	to.sin_addr = req->target;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&local, &len) < 0) {
		hc_fail_errno(res, errno, start);
		if (fd >= 0)
			close(fd);
		return;
	}
	memcpy(w.payload, "tide-hc", 8);
	memcpy(w.payload + 8, process_nonce, 4);
	memcpy(w.payload + 12, &id_be, 4);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w.cond, &attr);
	pthread_condattr_destroy(&attr);
	/* Registered before sending: a reply may come back before send() returns. */
	if (register_wait(&w, &seq) < 0) {
		snprintf(res->detail, sizeof(res->detail), "too many gue checks running");
		goto out;
	}
	build_probe(pkt, local.sin_addr.s_addr, req->target.s_addr, seq, w.payload);
	if (send(fd, pkt, sizeof(pkt), 0) < 0) {
		hc_fail_errno(res, errno, start);
		unregister_wait(seq);
		goto out;
	}
	if (wait_reply(&w, deadline)) {
		res->ok = true;
		res->latency_us = w.answered_us - start;
		snprintf(res->detail, sizeof(res->detail), "echo reply");
	} else {
		len = sizeof(err);
		hc_fail_timeout(res, req);
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err != 0) {
			char text[128];
			size_t at = strlen(res->detail);
			hc_errno_text(err, text, sizeof(text));
			snprintf(res->detail + at, sizeof(res->detail) - at, " (GUE port: %s)",
				 text);
		}
	}
	unregister_wait(seq);
out:
	pthread_cond_destroy(&w.cond);
	close(fd);
}
