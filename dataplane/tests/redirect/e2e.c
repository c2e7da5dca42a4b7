/* SPDX-License-Identifier: MIT */
/*
 * tide-redirect tests, 3: end to end. Two named namespaces joined by a veth; a TUN device on the
 * client side wraps the client's packets in GUE (like the director); the real tide-redirect
 * runs on the proxy side, as under systemd (a datagram socket stands in for $NOTIFY_SOCKET: the
 * test talks to it only after READY=1); IPv4 and IPv6 handshakes and data both ways, the flows
 * that took a second chance or a last resort (`flows`), then a clean stop with STOPPING=1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control.h"
#include "redirect_test.h"
#include "tide_daemon.h"

struct e2e {
	char ns_a[32], ns_b[32], sock[108];
	int orig_ns, tun, udp;
	pid_t daemon;
};

/* One request to the daemon's control socket; returns the parsed reply or NULL. */
static json_t *control_call(const char *path, const char *line)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	static char buf[1 << 20]; /* a full flows reply is under 200 KB */
	size_t len = 0;
	json_t *j = NULL;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    write(fd, line, strlen(line)) < 0)
		goto out;
	shutdown(fd, SHUT_WR);
	for (;;) {
		ssize_t r = read(fd, buf + len, sizeof(buf) - 1 - len);

		if (r <= 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	j = json_loads(buf, JSON_DISABLE_EOF_CHECK, NULL);
out:
	if (fd >= 0)
		close(fd);
	return j;
}

/* The start of tide-redirect's READY=1 notification for interface tb. */
#define READY_TB "READY=1\nSTATUS=attached to tb tc ingress"

static pid_t spawn_daemon(const char *daemon, const struct e2e *e, const char *iface,
			  const char *sock)
{
	pid_t pid = fork();

	if (pid == 0) {
		execl(daemon, daemon, "--iface", iface, "--netns", e->ns_b, "--socket", sock,
		      (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* A bound datagram socket at `path` for the daemon's notifications (10 s receive timeout). */
static int notify_open(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct timeval tv = {10, 0};
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	unlink(path);
	if (fd >= 0 && (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The next notification ("" after the timeout). */
static const char *notify_next(int fd)
{
	static char buf[4097];
	ssize_t n = fd >= 0 ? recv(fd, buf, sizeof(buf) - 1, 0) : -1;

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* Wraps every packet the client's TUN device emits in GUE towards the proxy, for `ms`. */
static void e2e_pump(struct e2e *e, int ms, int (*done)(void *), void *arg)
{
	uint8_t buf[2048 + 12];
	uint32_t hop = ip4("10.200.0.9"); /* an alternate that does not exist: never needed */

	for (int t = 0; t < ms / 20 && !done(arg); t++) {
		struct pollfd p = {.fd = e->tun, .events = POLLIN};

		if (poll(&p, 1, 20) <= 0)
			continue;
		for (;;) {
			ssize_t n = read(e->tun, buf + 12, sizeof(buf) - 12);

			if (n <= 0)
				break;
			buf[0] = 2; /* hlen: 1 + 1 hop */
			buf[1] = buf[12] >> 4 == 6 ? 41 : 4;
			memset(buf + 2, 0, 6);
			buf[7] = 1; /* hop_count */
			memcpy(buf + 8, &hop, 4);
			if (send(e->udp, buf, (size_t)n + 12, 0) < 0)
				break;
		}
	}
}

static int never_done(void *arg)
{
	(void)arg;
	return 0;
}

struct handshake {
	int client, listener, server;
};

static int handshake_done(void *arg)
{
	struct handshake *h = arg;
	struct pollfd p = {.fd = h->client, .events = POLLOUT};
	int err = -1;
	socklen_t len = sizeof(err);

	if (h->server < 0)
		h->server = accept4(h->listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (h->server < 0 || poll(&p, 1, 0) != 1)
		return 0;
	getsockopt(h->client, SOL_SOCKET, SO_ERROR, &err, &len);
	return err == 0;
}

static void e2e_handshake(struct e2e *e, int v6)
{
	struct sockaddr_in6 d6 = {.sin6_family = AF_INET6, .sin6_port = htons(80)};
	struct sockaddr_in d4 = {.sin_family = AF_INET, .sin_port = htons(80)};
	struct handshake h = {.client = -1, .listener = -1, .server = -1};
	char msg[8] = "";
	bool ok = false;

	tide_netns_enter(e->ns_b);
	h.listener = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (v6)
		inet_pton(AF_INET6, VIP6, &d6.sin6_addr);
	else
		inet_pton(AF_INET, VIP, &d4.sin_addr);
	if (h.listener < 0 ||
	    bind(h.listener, v6 ? (struct sockaddr *)&d6 : (struct sockaddr *)&d4,
		 v6 ? sizeof(d6) : sizeof(d4)) < 0 ||
	    listen(h.listener, 4) < 0)
		goto out;
	tide_netns_enter(e->ns_a);
	h.client = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h.client < 0)
		goto out;
	connect(h.client, v6 ? (struct sockaddr *)&d6 : (struct sockaddr *)&d4,
		v6 ? sizeof(d6) : sizeof(d4));
	e2e_pump(e, 3000, handshake_done, &h);
	ok = handshake_done(&h);
	if (ok) {
		/* Data both ways: client -> GUE -> proxy; reply straight back. */
		ok = send(h.client, "hi", 2, 0) == 2;
		for (int i = 0; i < 50 && ok; i++) {
			e2e_pump(e, 20, never_done, NULL);
			if (recv(h.server, msg, sizeof(msg), 0) == 2)
				break;
		}
		ok = ok && memcmp(msg, "hi", 2) == 0 && send(h.server, "yo", 2, 0) == 2;
		for (int i = 0; i < 50 && ok; i++) {
			if (recv(h.client, msg, sizeof(msg), 0) == 2)
				break;
			usleep(20000);
		}
		ok = ok && memcmp(msg, "yo", 2) == 0;
	}
out:
	check(h.listener >= 0 && h.client >= 0 && handshake_done(&h) && ok,
	      "e2e: IPv%d client -> GUE -> proxy: SYN reaches the VIP listener, handshake "
	      "completes, data both ways (replies direct)",
	      v6 ? 6 : 4);
	if (h.server >= 0)
		close(h.server);
	if (h.client >= 0)
		close(h.client);
	if (h.listener >= 0)
		close(h.listener);
	setns(e->orig_ns, CLONE_NEWNET);
}

/* `vips` (the stats reply's) has address:80/tcp with a SYN and an established packet counted. */
static bool e2e_vip_counted(json_t *vips, const char *address)
{
	size_t i;
	json_t *v;

	json_array_foreach(vips, i, v)
	{
		json_t *c = json_object_get(v, "counters");

		if (strcmp(json_string_value(json_object_get(v, "address")) ?: "", address) == 0 &&
		    json_integer_value(json_object_get(v, "port")) == 80 &&
		    strcmp(json_string_value(json_object_get(v, "proto")) ?: "", "tcp") == 0)
			return json_integer_value(json_object_get(c, "accepted_syn")) >= 1 &&
			       json_integer_value(json_object_get(c, "accepted_established")) >=
				       1 &&
			       json_integer_value(json_object_get(c, "accepted_second_chance")) ==
				       0;
	}
	return false;
}

/* Sends `inner` wrapped in GUE as the director would, with `next_hop` of `hop_count` hops. */
static bool e2e_send_gue(const struct e2e *e, uint8_t next_hop, uint8_t hop_count,
			 const uint8_t *inner, size_t len)
{
	uint8_t buf[512];
	uint32_t hop = ip4("10.200.0.9"); /* never used: these packets stop at this proxy */
	size_t h = 8 + 4u * hop_count;

	buf[0] = (uint8_t)(1 + hop_count);
	buf[1] = inner[0] >> 4 == 6 ? 41 : 4;
	memset(buf + 2, 0, 4);
	buf[6] = next_hop;
	buf[7] = hop_count;
	for (int i = 0; i < hop_count; i++)
		memcpy(buf + 8 + 4 * i, &hop, 4);
	memcpy(buf + h, inner, len);
	return send(e->udp, buf, h + len, 0) == (ssize_t)(h + len);
}

/* The flow of `flows` (a reply's list) from client_port `cport` to VIP:port, or NULL. */
static json_t *e2e_flow(json_t *flows, uint16_t cport, uint16_t port)
{
	size_t i;
	json_t *f;

	json_array_foreach(flows, i, f)
	{
		if (json_integer_value(json_object_get(f, "client_port")) == cport &&
		    json_integer_value(json_object_get(f, "port")) == port &&
		    strcmp(json_string_value(json_object_get(f, "client_address")) ?: "", CLIENT) ==
			    0 &&
		    strcmp(json_string_value(json_object_get(f, "address")) ?: "", VIP) == 0 &&
		    strcmp(json_string_value(json_object_get(f, "proto")) ?: "", "tcp") == 0)
			return f;
	}
	return NULL;
}

/* A kind of a flow has `packets` and was last seen between `min_ms` and `max_ms` ago. */
static bool e2e_kind(json_t *flow, const char *kind, json_int_t packets, json_int_t min_ms,
		     json_int_t max_ms)
{
	json_t *k = json_object_get(flow, kind);
	json_int_t ago = json_integer_value(json_object_get(k, "last_seen_ms_ago"));

	return json_is_object(k) && json_integer_value(json_object_get(k, "packets")) == packets &&
	       json_is_integer(json_object_get(k, "last_seen_ms_ago")) && ago >= min_ms &&
	       ago <= max_ms;
}

/* The reply to `line` is an error with `code`. */
static bool e2e_error(const struct e2e *e, const char *line, const char *code)
{
	json_t *r = control_call(e->sock, line);
	bool ok = r && json_is_false(json_object_get(r, "ok")) &&
		  strcmp(json_string_value(json_object_get(json_object_get(r, "error"), "code"))
				 ?: "",
			 code) == 0;

	json_decref(r);
	return ok;
}

#define E2E_FLOWS_PORT 8080
#define E2E_FLOWS_GAP_MS 1500 /* between the established flow's hops and the last resort */
#define E2E_FLOWS_MANY 600    /* last resorts of distinct flows, over a reply's cap */

/*
 * `flows` against the daemon: an established IPv4 flow (handshake through the wrapper) then gets
 * packets as hop 1 and through the alternate pair; 1.5 s later one more as hop 1, and an unknown
 * flow gets a last resort. The reply lists both, newest first, with their kinds and ages;
 * since_ms 700 keeps both, the established flow's alternate hash still reported with its own age
 * (1.5 s: older than the window, which is how a reader tells an earlier connection's kind from
 * this one's); a bad since_ms is bad_request.
 */
static void e2e_flows(struct e2e *e)
{
	struct sockaddr_in d4 = {.sin_family = AF_INET, .sin_port = htons(E2E_FLOWS_PORT)};
	struct handshake h = {.client = -1, .listener = -1, .server = -1};
	struct sockaddr_in me;
	socklen_t mlen = sizeof(me);
	uint8_t inner[128];
	uint16_t cport = 0;
	json_t *r = NULL, *res, *flows, *a, *b;
	size_t il;
	bool ok;

	inet_pton(AF_INET, VIP, &d4.sin_addr);
	tide_netns_enter(e->ns_b);
	h.listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	ok = h.listener >= 0 && bind(h.listener, (struct sockaddr *)&d4, sizeof(d4)) == 0 &&
	     listen(h.listener, 4) == 0;
	tide_netns_enter(e->ns_a);
	h.client = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	setns(e->orig_ns, CLONE_NEWNET);
	if (ok && h.client >= 0) {
		connect(h.client, (struct sockaddr *)&d4, sizeof(d4));
		e2e_pump(e, 3000, handshake_done, &h);
	}
	ok = ok && handshake_done(&h) && getsockname(h.client, (struct sockaddr *)&me, &mlen) == 0;
	cport = ntohs(me.sin_port);
	check(ok, "e2e flows: established flow %s:%u -> %s:%d", CLIENT, cport, VIP, E2E_FLOWS_PORT);
	if (!ok)
		goto out;

	il = tcp_packet(inner, 0, CLIENT, VIP, cport, E2E_FLOWS_PORT, 1, 1, F_ACK);
	ok = e2e_send_gue(e, 1, 1, inner, il) && e2e_send_gue(e, 1, 1, inner, il) &&
	     e2e_send_gue(e, 2, 3, inner, il);
	usleep(E2E_FLOWS_GAP_MS * 1000);
	ok = ok && e2e_send_gue(e, 1, 1, inner, il);
	usleep(20000);
	il = tcp_packet(inner, 0, CLIENT, VIP, 45000, E2E_FLOWS_PORT, 1, 1, F_ACK);
	ok = ok && e2e_send_gue(e, 1, 1, inner, il);
	usleep(100000); /* the veth and the program are asynchronous to send() */
	check(ok, "e2e flows: sent 2 packets as hop 1 and 1 through the alternate pair, 1.5 s "
		  "later one more as hop 1 and a last resort of another flow");

	r = control_call(e->sock, "{\"id\":5,\"cmd\":\"flows\"}\n");
	if (r) {
		char *text = json_dumps(r, JSON_COMPACT);

		printf("  %s\n", text ?: "");
		free(text);
	}
	res = json_object_get(r, "result");
	flows = json_object_get(res, "flows");
	a = e2e_flow(flows, cport, E2E_FLOWS_PORT);
	b = e2e_flow(flows, 45000, E2E_FLOWS_PORT);
	check(r && json_is_true(json_object_get(r, "ok")) &&
		      json_integer_value(json_object_get(r, "id")) == 5 &&
		      json_integer_value(json_object_get(res, "capacity")) ==
			      TIDE_REDIRECT_MAX_FLOWS &&
		      json_integer_value(json_object_get(res, "matched")) == 2 &&
		      json_array_size(flows) == 2 && a && b && json_array_get(flows, 0) == b,
	      "e2e flows: lists the two flows, the last resort first (matched %lld, capacity "
	      "%lld)",
	      (long long)json_integer_value(json_object_get(res, "matched")),
	      (long long)json_integer_value(json_object_get(res, "capacity")));
	check(a && e2e_kind(a, "second_chance", 4, 0, E2E_FLOWS_GAP_MS - 1) &&
		      e2e_kind(a, "alternate_hash", 1, E2E_FLOWS_GAP_MS, 10000) &&
		      json_is_null(json_object_get(a, "last_resort")) &&
		      json_integer_value(json_object_get(a, "first_seen_ms_ago")) >=
			      E2E_FLOWS_GAP_MS,
	      "e2e flows: the established flow took 4 second chances (the last one under 1.5 s "
	      "ago), 1 through the alternate hash 1.5 s ago or more, no last resort");
	check(b && e2e_kind(b, "last_resort", 1, 0, E2E_FLOWS_GAP_MS - 1) &&
		      json_is_null(json_object_get(b, "second_chance")) &&
		      json_is_null(json_object_get(b, "alternate_hash")) &&
		      json_integer_value(json_object_get(b, "first_seen_ms_ago")) <
			      E2E_FLOWS_GAP_MS,
	      "e2e flows: the unknown flow took a last resort less than 1500 ms ago, nothing "
	      "else");
	json_decref(r);

	r = control_call(e->sock, "{\"cmd\":\"flows\",\"since_ms\":700}\n");
	res = json_object_get(r, "result");
	flows = json_object_get(res, "flows");
	a = e2e_flow(flows, cport, E2E_FLOWS_PORT);
	check(json_integer_value(json_object_get(res, "matched")) == 2 &&
		      json_array_size(flows) == 2 && e2e_flow(flows, 45000, E2E_FLOWS_PORT) && a &&
		      e2e_kind(a, "second_chance", 4, 0, 699) &&
		      e2e_kind(a, "alternate_hash", 1, E2E_FLOWS_GAP_MS, 10000),
	      "e2e flows: since_ms 700 keeps both flows, the alternate hash still there with its "
	      "own age of 1.5 s or more (matched %lld)",
	      (long long)json_integer_value(json_object_get(res, "matched")));
	json_decref(r);
	usleep(800000);
	r = control_call(e->sock, "{\"cmd\":\"flows\",\"since_ms\":700}\n");
	check(json_integer_value(json_object_get(json_object_get(r, "result"), "matched")) == 0 &&
		      json_array_size(json_object_get(json_object_get(r, "result"), "flows")) == 0,
	      "e2e flows: 0.8 s later, since_ms 700 matches none");
	json_decref(r);
	r = control_call(e->sock, "{\"cmd\":\"flows\",\"since_ms\":600000}\n");
	check(json_integer_value(json_object_get(json_object_get(r, "result"), "matched")) == 2,
	      "e2e flows: since_ms 600000 (the largest) matches both again");
	json_decref(r);
	r = NULL;
	check(e2e_error(e, "{\"cmd\":\"flows\",\"since_ms\":0}\n", "bad_request") &&
		      e2e_error(e, "{\"cmd\":\"flows\",\"since_ms\":600001}\n", "bad_request") &&
		      e2e_error(e, "{\"cmd\":\"flows\",\"since_ms\":\"x\"}\n", "bad_request") &&
		      e2e_error(e, "{\"cmd\":\"flows\",\"since_ms\":1.5}\n", "bad_request") &&
		      e2e_error(e, "{\"cmd\":\"flows\",\"since_ms\":null}\n", "bad_request") &&
		      e2e_error(e, "{\"cmd\":\"flows\",\"limit\":5}\n", "bad_request"),
	      "e2e flows: since_ms 0, 600001, \"x\", 1.5, null and an unknown field are "
	      "bad_request");

	/* More flows than a reply lists: the newest REDIRECT_MAX_FLOWS_REPLY, and all in matched. */
	ok = true;
	for (int i = 0; i < E2E_FLOWS_MANY && ok; i++) {
		il = tcp_packet(inner, 0, CLIENT, VIP, (uint16_t)(46000 + i), E2E_FLOWS_PORT, 1, 1,
				F_ACK);
		ok = e2e_send_gue(e, 1, 1, inner, il);
		if (i % 50 == 49)
			usleep(2000); /* keep under the veth's backlog */
	}
	usleep(200000);
	r = control_call(e->sock, "{\"cmd\":\"flows\"}\n");
	res = json_object_get(r, "result");
	flows = json_object_get(res, "flows");
	{
		json_int_t matched = json_integer_value(json_object_get(res, "matched")), prev = 0;
		bool ordered = true;
		size_t i;

		json_array_foreach(flows, i, a)
		{
			json_int_t ago = json_integer_value(json_object_get(
				json_object_get(a, "last_resort"), "last_seen_ms_ago"));

			ordered = ordered && ago >= prev;
			prev = ago;
		}
		check(ok && json_array_size(flows) == REDIRECT_MAX_FLOWS_REPLY &&
			      matched > REDIRECT_MAX_FLOWS_REPLY && matched <= E2E_FLOWS_MANY + 2 &&
			      ordered,
		      "e2e flows: %d more last resorts: the reply lists %zu, newest first, matched "
		      "%lld",
		      E2E_FLOWS_MANY, json_array_size(flows), (long long)matched);
	}
	json_decref(r);
	r = NULL;
out:
	if (h.server >= 0)
		close(h.server);
	if (h.client >= 0)
		close(h.client);
	if (h.listener >= 0)
		close(h.listener);
}

static void e2e_setup_cmds(const struct e2e *e, bool *ok)
{
	const char *a = e->ns_a, *b = e->ns_b;

	*ok = !sh("ip netns add %s", a) && !sh("ip netns add %s", b) &&
	      !sh("ip -n %s link add ta type veth peer name tb netns %s", a, b) &&
	      !sh("ip -n %s link set lo up && ip -n %s link set lo up", a, b) &&
	      !sh("ip -n %s addr add 10.200.0.1/24 dev ta && ip -n %s link set ta up", a, a) &&
	      !sh("ip -n %s addr add fd00:200::1/64 dev ta nodad", a) &&
	      !sh("ip -n %s addr add 10.200.0.2/24 dev tb && ip -n %s link set tb up", b, b) &&
	      !sh("ip -n %s addr add fd00:200::2/64 dev tb nodad", b) &&
	      !sh("ip -n %s addr add " VIP "/32 dev lo && ip -n %s addr add " VIP6
		  "/128 dev lo nodad",
		  b, b) &&
	      !sh("ip -n %s route add 10.202.0.0/24 via 10.200.0.1", b) &&
	      !sh("ip -n %s route add fd00:202::/64 via fd00:200::1", b) &&
	      !sh("ip netns exec %s sysctl -qw net.ipv4.conf.all.rp_filter=0 "
		  "net.ipv4.conf.default.rp_filter=0 net.ipv4.conf.ta.rp_filter=0",
		  a) &&
	      !sh("ip netns exec %s sysctl -qw net.ipv4.conf.all.rp_filter=0 "
		  "net.ipv4.conf.tb.rp_filter=0",
		  b);
}

void e2e(const char *daemon)
{
	struct e2e e = {.tun = -1, .udp = -1, .daemon = -1};
	char notify_path[108];
	const char *msg;
	int notify = -1;
	struct sockaddr_in peer = {.sin_family = AF_INET, .sin_port = htons(GUE_PORT)};
	struct ifreq ifr;
	json_t *st;
	char qdisc[512] = "";
	pid_t second;
	bool ok;
	int pmtu = IP_PMTUDISC_DO, status = 0;
	FILE *p;

	snprintf(e.ns_a, sizeof(e.ns_a), "trt-a-%d", (int)getpid());
	snprintf(e.ns_b, sizeof(e.ns_b), "trt-b-%d", (int)getpid());
	snprintf(e.sock, sizeof(e.sock), "/tmp/tide-redirect-test-%d.sock", (int)getpid());
	e.orig_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	e2e_setup_cmds(&e, &ok);
	check(ok, "e2e: namespaces %s (client) and %s (proxy) joined by a veth", e.ns_a, e.ns_b);
	if (!ok)
		goto out;

	/* Client side: a TUN device carries the client's packets to the GUE wrapper. */
	tide_netns_enter(e.ns_a);
	e.tun = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "tt0");
	ok = e.tun >= 0 && ioctl(e.tun, TUNSETIFF, &ifr) == 0;
	e.udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	inet_pton(AF_INET, "10.200.0.2", &peer.sin_addr);
	ok = ok && e.udp >= 0 &&
	     setsockopt(e.udp, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)) == 0 &&
	     connect(e.udp, (struct sockaddr *)&peer, sizeof(peer)) == 0;
	setns(e.orig_ns, CLONE_NEWNET);
	ok = ok && !sh("ip -n %s link set tt0 up", e.ns_a) &&
	     !sh("ip -n %s addr add " CLIENT "/32 dev tt0", e.ns_a) &&
	     !sh("ip -n %s addr add " CLIENT6 "/128 dev tt0 nodad", e.ns_a) &&
	     !sh("ip -n %s route add " VIP "/32 dev tt0 src " CLIENT, e.ns_a) &&
	     !sh("ip -n %s route add " VIP6 "/128 dev tt0 src " CLIENT6, e.ns_a);
	check(ok, "e2e: client TUN tt0 and GUE socket -> 10.200.0.2:%d", GUE_PORT);
	if (!ok)
		goto out;

	/* Started as systemd would: the control socket must answer as soon as READY=1 arrives. */
	snprintf(notify_path, sizeof(notify_path), "/tmp/tide-redirect-test-%d.notify",
		 (int)getpid());
	notify = notify_open(notify_path);
	setenv("NOTIFY_SOCKET", notify_path, 1);
	e.daemon = spawn_daemon(daemon, &e, "tb", e.sock);
	unsetenv("NOTIFY_SOCKET");
	msg = notify_next(notify);
	check(strncmp(msg, READY_TB, strlen(READY_TB)) == 0,
	      "e2e: tide-redirect sends READY=1 with its STATUS (got \"%s\")", msg);
	st = control_call(e.sock, "{\"id\":1,\"cmd\":\"status\"}\n");
	ok = st && json_is_true(json_object_get(st, "ok")) &&
	     json_integer_value(json_object_get(json_object_get(st, "result"), "prog_id")) > 0;
	check(ok, "e2e: tide-redirect attached in %s, status answers right after READY=1", e.ns_b);
	json_decref(st);
	if (!ok)
		goto out;

	second = spawn_daemon(daemon, &e, "tb", "/tmp/tide-redirect-test-second.sock");
	waitpid(second, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 1,
	      "e2e: a second tide-redirect on the same hook refuses to start");
	/* What a unit passes when its configuration leaves the interface unset: exit 2, no restart. */
	second = spawn_daemon(daemon, &e, "", "/tmp/tide-redirect-test-second.sock");
	waitpid(second, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 2,
	      "e2e: an empty --iface is a configuration error (exit 2)");

	e2e_handshake(&e, 0);
	e2e_handshake(&e, 1);

	st = control_call(e.sock, "{\"cmd\":\"stats\"}\n");
	{
		json_t *c = json_object_get(json_object_get(st, "result"), "counters");
		json_int_t syn = json_integer_value(json_object_get(c, "accepted_syn"));
		json_int_t est = json_integer_value(json_object_get(c, "accepted_established"));

		check(syn >= 2 && est >= 2,
		      "e2e: daemon stats count the SYNs (%lld) and established packets (%lld)",
		      (long long)syn, (long long)est);
		/* No hop was taken: the GUE wrapper sends every packet to its first hop. */
		check(json_integer_value(json_object_get(c, "accepted_second_chance")) == 0 &&
			      json_is_integer(json_object_get(c, "accepted_alternate_hash")),
		      "e2e: daemon stats carry the why counters (accepted_second_chance 0)");
		check(e2e_vip_counted(json_object_get(json_object_get(st, "result"), "vips"),
				      VIP) &&
			      e2e_vip_counted(
				      json_object_get(json_object_get(st, "result"), "vips"), VIP6),
		      "e2e: daemon stats list the VIPs %s:80 and [%s]:80 (tcp) with their SYN and "
		      "established packets",
		      VIP, VIP6);
	}
	json_decref(st);

	e2e_flows(&e);

out:
	if (e.daemon > 0) {
		kill(e.daemon, SIGTERM);
		waitpid(e.daemon, &status, 0);
		check(WIFEXITED(status) && WEXITSTATUS(status) == 0 && access(e.sock, F_OK) != 0,
		      "e2e: tide-redirect stops on SIGTERM and removes its socket");
		snprintf(qdisc, sizeof(qdisc), "tc -n %s qdisc show dev tb 2>&1", e.ns_b);
		p = popen(qdisc, "r");
		qdisc[0] = '\0';
		if (p) {
			size_t r = fread(qdisc, 1, sizeof(qdisc) - 1, p);

			qdisc[r] = '\0';
			pclose(p);
		}
		check(strstr(qdisc, "clsact") == NULL, "e2e: the clsact qdisc it created is gone");
		msg = notify_next(notify);
		check(strncmp(msg, "STOPPING=1", 10) == 0,
		      "e2e: STOPPING=1 on SIGTERM (got \"%s\")", msg);
	}
	if (notify >= 0) {
		close(notify);
		unlink(notify_path);
	}
	if (e.tun >= 0)
		close(e.tun);
	if (e.udp >= 0)
		close(e.udp);
	sh("ip netns del %s 2>/dev/null; ip netns del %s 2>/dev/null; true", e.ns_a, e.ns_b);
	if (e.orig_ns >= 0)
		close(e.orig_ns);
}
