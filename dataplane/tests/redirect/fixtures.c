/* SPDX-License-Identifier: MIT */
/*
 * tide-redirect tests, 1 and 2: every decision and drop reason through BPF_PROG_TEST_RUN in a
 * network namespace of the test's own (real sockets: established, TIME-WAIT, SYN cookies), then
 * the per-packet cost.
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "redirect_maps.h"
#include "redirect_test.h"
#include "tide_redirect.skel.h"

/* Bench: calls (repeat=1 each, see bench()) and repeat for the non-mutating path. */
#define BENCH_CALLS 200000
#define BENCH_REPEAT 1000000

static int prog_fd, stats_fd, vips_fd, flows_fd, fix_ifindex;
static uint8_t fix_mac[6];

/* ---- running the program ---- */

struct result {
	int ret;
	uint8_t out[4096];
	uint32_t out_len;
	uint64_t delta[TR_COUNTER_COUNT];
	uint64_t vip_delta[TR_VIP_COUNTER_COUNT]; /* of the VIP `watch` names */
	long flows_delta;			  /* entries of the flow map */
};

/* The VIP whose counters run() reports (vip_delta); set by watch_vip(). */
static struct tide_redirect_vip_key watch;

/* Watch inner destination addr:port, TCP. */
static void watch_vip(int v6, const char *addr, uint16_t port)
{
	memset(&watch, 0, sizeof(watch));
	inet_pton(v6 ? AF_INET6 : AF_INET, addr, watch.addr);
	watch.port = htons(port);
	watch.proto = IPPROTO_TCP;
	watch.family = v6 ? TR_VIP_FAMILY_IPV6 : TR_VIP_FAMILY_IPV4;
}

/* The watched VIP's counters summed over CPUs; zeros when it has no entry. */
static void vip_counters(uint64_t out[TR_VIP_COUNTER_COUNT])
{
	int ncpu = libbpf_num_possible_cpus();
	struct tide_redirect_vip_counters vals[ncpu > 0 ? ncpu : 1];

	memset(out, 0, sizeof(uint64_t) * TR_VIP_COUNTER_COUNT);
	if (bpf_map_lookup_elem(vips_fd, &watch, vals))
		return;
	for (int c = 0; c < ncpu; c++)
		for (int i = 0; i < TR_VIP_COUNTER_COUNT; i++)
			out[i] += vals[c].packets[i];
}

static int counters(uint64_t out[TR_COUNTER_COUNT])
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t vals[ncpu > 0 ? ncpu : 1];

	for (uint32_t k = 0; k < TR_COUNTER_COUNT; k++) {
		if (bpf_map_lookup_elem(stats_fd, &k, vals))
			return -errno;
		out[k] = 0;
		for (int c = 0; c < ncpu; c++)
			out[k] += vals[c];
	}
	return 0;
}

/* Entries of the flow map (a walk of its keys; the fixtures keep it small). */
static long flow_entries(void)
{
	struct tide_redirect_flow_key k, next;
	long count = 0;

	for (void *prev = NULL; count <= TIDE_REDIRECT_MAX_FLOWS; prev = &k) {
		if (bpf_map_get_next_key(flows_fd, prev, &next))
			break;
		k = next;
		count++;
	}
	return count;
}

static int run(const uint8_t *pkt, size_t len, struct result *r)
{
	struct __sk_buff ctx = {.ifindex = (uint32_t)fix_ifindex};
	uint64_t before[TR_COUNTER_COUNT], after[TR_COUNTER_COUNT];
	uint64_t vbefore[TR_VIP_COUNTER_COUNT], vafter[TR_VIP_COUNTER_COUNT];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = (uint32_t)len,
		    .data_out = r->out, .data_size_out = sizeof(r->out), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 1);
	int rc;

	long flows_before = flow_entries();

	counters(before);
	vip_counters(vbefore);
	rc = bpf_prog_test_run_opts(prog_fd, &o);
	counters(after);
	vip_counters(vafter);
	r->flows_delta = flow_entries() - flows_before;
	for (int k = 0; k < TR_VIP_COUNTER_COUNT; k++)
		r->vip_delta[k] = vafter[k] - vbefore[k];
	r->ret = rc ? -1000 + rc : (int)o.retval;
	r->out_len = o.data_size_out;
	for (int k = 0; k < TR_COUNTER_COUNT; k++)
		r->delta[k] = after[k] - before[k];
	return rc;
}

static const char *const counter_names[TR_COUNTER_COUNT] = {
#define TR_COUNTER_NAME(id, name) [TR_##id] = #name,
	TIDE_REDIRECT_COUNTERS(TR_COUNTER_NAME)
#undef TR_COUNTER_NAME
};

static const char *const vip_counter_names[TR_VIP_COUNTER_COUNT] = {
#define TR_VIP_COUNTER_NAME(id, name) [TR_VIP_##id] = #name,
	TIDE_REDIRECT_VIP_COUNTERS(TR_VIP_COUNTER_NAME)
#undef TR_VIP_COUNTER_NAME
};

#define BIT(c) (1u << (c))

/*
 * Exactly `counter` moved by one (and total, for GUE packets), and the "why" counters in `why`
 * (bits of enum tide_redirect_counter); nothing else. The flow map gains no entry unless the
 * packet took a second chance or a last resort (then at most one: inner TCP only).
 */
static bool only_counters(const struct result *r, int counter, uint32_t why)
{
	long most = counter == TR_ACCEPTED_LAST_RESORT || (why & BIT(TR_ACCEPTED_SECOND_CHANCE));

	if (r->flows_delta < 0 || r->flows_delta > most) {
		printf("  the flow map gained %ld entries, expected at most %ld\n", r->flows_delta,
		       most);
		return false;
	}
	for (int k = 0; k < TR_COUNTER_COUNT; k++) {
		uint64_t want =
			k == counter || (k == TR_TOTAL && counter != TR_NOT_GUE) || (why & BIT(k))
				? 1
				: 0;

		if (r->delta[k] != want) {
			printf("  counter %s moved by %llu, expected %llu\n", counter_names[k],
			       (unsigned long long)r->delta[k], (unsigned long long)want);
			return false;
		}
	}
	return true;
}

static bool only_counter(const struct result *r, int counter)
{
	return only_counters(r, counter, 0);
}

/* The watched VIP's counters in `mask` (bits of enum tide_redirect_vip_counter) moved by one. */
static bool vip_moved(const struct result *r, uint32_t mask)
{
	for (int k = 0; k < TR_VIP_COUNTER_COUNT; k++) {
		uint64_t want = mask & BIT(k) ? 1 : 0;

		if (r->vip_delta[k] != want) {
			printf("  VIP counter %s moved by %llu, expected %llu\n",
			       vip_counter_names[k], (unsigned long long)r->vip_delta[k],
			       (unsigned long long)want);
			return false;
		}
	}
	return true;
}

/*
 * Accepted locally and decapsulated as `counter`, with the "why" counters in `why` and the
 * watched VIP's counters in `vip` moving by one, nothing else.
 */
static void expect_local_why(const char *what, const uint8_t *pkt, size_t len, const uint8_t *inner,
			     size_t inner_len, int counter, uint32_t why, uint32_t vip)
{
	struct result r;
	bool v6 = inner[0] >> 4 == 6;
	bool bytes, counted, vip_ok;

	run(pkt, len, &r);
	bytes = r.out_len == 14 + inner_len && memcmp(r.out + 14, inner, inner_len) == 0 &&
		r.out[12] == (v6 ? 0x86 : 0x08);
	counted = only_counters(&r, counter, why);
	vip_ok = vip_moved(&r, vip);
	check(r.ret == TC_ACT_OK && bytes && counted && vip_ok,
	      "%s -> accepted (%s%s%s), VIP counters 0x%x [ret %d]", what, counter_names[counter],
	      why & BIT(TR_ACCEPTED_SECOND_CHANCE) ? " + accepted_second_chance" : "",
	      why & BIT(TR_ACCEPTED_ALTERNATE_HASH) ? " + accepted_alternate_hash" : "", vip,
	      r.ret);
}

/* "Accepted locally": TC_ACT_OK, the frame is now Ethernet + exactly the inner packet. */
static void expect_local(const char *what, const uint8_t *pkt, size_t len, const uint8_t *inner,
			 size_t inner_len, int counter)
{
	struct result r;
	bool v6 = inner[0] >> 4 == 6;
	bool bytes;

	run(pkt, len, &r);
	bytes = r.out_len == 14 + inner_len && memcmp(r.out, pkt, 12) == 0 &&
		r.out[12] == (v6 ? 0x86 : 0x08) && r.out[13] == (v6 ? 0xdd : 0x00) &&
		memcmp(r.out + 14, inner, inner_len) == 0;
	check(r.ret == TC_ACT_OK && bytes && only_counter(&r, counter),
	      "%s -> accepted locally, decapsulated (%s) [ret %d, %u bytes out]", what,
	      counter_names[counter], r.ret, r.out_len);
}

static void expect_verdict(const char *what, const uint8_t *pkt, size_t len, int ret, int counter)
{
	struct result r;
	bool same = true;

	run(pkt, len, &r);
	if (ret == TC_ACT_OK) /* passed through: untouched */
		same = r.out_len == len && memcmp(r.out, pkt, len) == 0;
	check(r.ret == ret && same && only_counter(&r, counter), "%s -> ret %d (%s) [ret %d]", what,
	      ret, counter_names[counter], r.ret);
}

/*
 * Forwarded: TC_ACT_REDIRECT, outer src := the proxy address it was sent to, dst := the hop,
 * next_hop + 1, valid IPv4 and UDP checksums, MACs from the neighbour table (when `mac_known`),
 * everything from the hop list on unchanged.
 */
static bool watch_forwarded; /* expect_forward checks the watched VIP's forwarded_to_alternate */

static void expect_forward(const char *what, const uint8_t *pkt, size_t len, const char *hop,
			   bool mac_known)
{
	const uint8_t *ip, *udp;
	struct result r;
	uint32_t a;
	bool ok;

	run(pkt, len, &r);
	ip = r.out + 14;
	udp = ip + 20;
	ok = r.ret == TC_ACT_REDIRECT && r.out_len == len;
	if (ok) {
		a = ip4(PROXY);
		ok = ok && memcmp(ip + 12, &a, 4) == 0;
		a = ip4(hop);
		ok = ok && memcmp(ip + 16, &a, 4) == 0;
		ok = ok && udp[8 + 6] == pkt[14 + 20 + 8 + 6] + 1 && udp[8 + 7] == pkt[42 + 7];
		ok = ok && fold(sum16(0, ip, 20)) == 0;
		ok = ok && udp[6] | udp[7]; /* still carries a checksum */
		ok = ok && l4_csum(0, ip + 12, ip + 16, IPPROTO_UDP, udp, len - 34) == 0;
		ok = ok && memcmp(r.out + 50, pkt + 50, len - 50) == 0 &&
		     memcmp(r.out + 42, pkt + 42, 6) == 0;
		if (mac_known)
			ok = ok && memcmp(r.out, ALT_MAC, 6) == 0 &&
			     memcmp(r.out + 6, fix_mac, 6) == 0;
	}
	/* The watched VIP is the flow's only when the caller says so: then it must count it. */
	if (watch_forwarded)
		ok = ok && vip_moved(&r, BIT(TR_VIP_FORWARDED_TO_ALTERNATE));
	check(ok && only_counter(&r, TR_FORWARDED_TO_ALTERNATE),
	      "%s -> forwarded to %s (outer rewritten, next_hop+1, IP/UDP checksums valid) [ret "
	      "%d]",
	      what, hop, r.ret);
}

/* ---- fixture namespace ---- */

static int write_sysctl(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int rc;

	if (!f)
		return -errno;
	rc = fputs(val, f) < 0 ? -EIO : 0;
	return fclose(f) ? -errno : rc;
}

static int setup_fixture_netns(void)
{
	struct ifreq ifr;
	int fd;

	if (unshare(CLONE_NEWNET) < 0) {
		perror("unshare(CLONE_NEWNET)");
		return -errno;
	}
	if (sh("ip link set lo up") || sh("ip addr add " VIP "/32 dev lo") ||
	    sh("ip addr add " CLIENT "/32 dev lo") || sh("ip addr add " VIP6 "/128 dev lo nodad") ||
	    sh("ip addr add " CLIENT6 "/128 dev lo nodad") ||
	    sh("ip link add trv0 type veth peer name trv1") || sh("ip link set trv0 up") ||
	    sh("ip link set trv1 up") || sh("ip addr add " PROXY "/24 dev trv0") ||
	    sh("ip neigh replace " ALT " lladdr 02:00:00:00:00:03 nud permanent dev trv0") ||
	    write_sysctl("/proc/sys/net/ipv4/conf/trv0/forwarding", "1"))
		return -EIO;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	fix_ifindex = (int)if_nametoindex("trv0");
	/* /sys still shows the namespace it was mounted in: ask the socket layer instead. */
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "trv0");
	if (fd < 0 || ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	close(fd);
	memcpy(fix_mac, ifr.ifr_hwaddr.sa_data, 6);
	return 0;
}

static int tcp_listen(int v6, const char *addr, uint16_t port)
{
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(port)};
	int one = 1, fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (v6)
		inet_pton(AF_INET6, addr, &a6.sin6_addr);
	else
		inet_pton(AF_INET, addr, &a4.sin_addr);
	if (bind(fd, v6 ? (struct sockaddr *)&a6 : (struct sockaddr *)&a4,
		 v6 ? sizeof(a6) : sizeof(a4)) < 0 ||
	    listen(fd, 16) < 0) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* A client socket bound to `src`, connected (blocking) to dst:port; its port in *sport. */
static int tcp_connect(int v6, const char *src, const char *dst, uint16_t port, uint16_t *sport)
{
	struct sockaddr_in6 s6 = {.sin6_family = AF_INET6}, d6 = {.sin6_family = AF_INET6};
	struct sockaddr_in s4 = {.sin_family = AF_INET}, d4 = {.sin_family = AF_INET};
	socklen_t len = v6 ? sizeof(s6) : sizeof(s4);
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	d6.sin6_port = d4.sin_port = htons(port);
	if (v6) {
		inet_pton(AF_INET6, src, &s6.sin6_addr);
		inet_pton(AF_INET6, dst, &d6.sin6_addr);
	} else {
		inet_pton(AF_INET, src, &s4.sin_addr);
		inet_pton(AF_INET, dst, &d4.sin_addr);
	}
	if (bind(fd, v6 ? (struct sockaddr *)&s6 : (struct sockaddr *)&s4, len) < 0 ||
	    connect(fd, v6 ? (struct sockaddr *)&d6 : (struct sockaddr *)&d4, len) < 0 ||
	    getsockname(fd, v6 ? (struct sockaddr *)&s6 : (struct sockaddr *)&s4, &len) < 0) {
		close(fd);
		return -errno;
	}
	*sport = ntohs(v6 ? s6.sin6_port : s4.sin_port);
	return fd;
}

/* ---- fixtures ---- */

static const struct gue G = {
	.src = DIRECTOR, .dst = PROXY, .hlen = -1, .proto = -1, .hop_count = 1, .hops = {ALT}};

static void fixtures_format(void)
{
	uint8_t inner[128], pkt[512];
	size_t il, n;
	struct gue g;

	il = tcp_packet(inner, 0, CLIENT, VIP, 40000, 80, 1, 0, F_SYN);

	/* not GUE: passed through untouched, not part of total */
	n = gue_packet(pkt, &G, inner, il);
	pkt[12] = 0x08;
	pkt[13] = 0x06;
	expect_verdict("non-IP frame (ARP ethertype)", pkt, n, TC_ACT_OK, TR_NOT_GUE);
	n = gue_packet(pkt, &G, inner, il);
	put16(pkt + 36, 53);
	expect_verdict("UDP to another port", pkt, n, TC_ACT_OK, TR_NOT_GUE);
	g = G;
	g.dst = "10.99.0.77";
	n = gue_packet(pkt, &g, inner, il);
	expect_verdict("GUE to a non-local address", pkt, n, TC_ACT_OK, TR_NOT_GUE);
	n = tcp_packet(pkt + 14, 0, CLIENT, VIP, 40000, 80, 1, 0, F_SYN);
	memcpy(pkt, "\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02\x08\x00", 14);
	expect_verdict("plain TCP to the VIP", pkt, n + 14, TC_ACT_OK, TR_NOT_GUE);

	/* malformed */
	g = G;
	g.byte0_or = 0x40;
	n = gue_packet(pkt, &g, inner, il);
	expect_verdict("GUE version 1", pkt, n, TC_ACT_SHOT, TR_DROPPED_MALFORMED);
	g = G;
	g.byte0_or = 0x20;
	n = gue_packet(pkt, &g, inner, il);
	expect_verdict("GUE C bit set", pkt, n, TC_ACT_SHOT, TR_DROPPED_MALFORMED);
	g = G;
	g.hlen = 3;
	n = gue_packet(pkt, &g, inner, il);
	expect_verdict("hlen != hop_count + 1", pkt, n, TC_ACT_SHOT, TR_DROPPED_MALFORMED);
	g = G;
	g.proto = 17;
	n = gue_packet(pkt, &g, inner, il);
	expect_verdict("GUE proto 17", pkt, n, TC_ACT_SHOT, TR_DROPPED_MALFORMED);
	g = G;
	g.priv_type = 1;
	n = gue_packet(pkt, &g, inner, il);
	expect_verdict("GLB private type 1", pkt, n, TC_ACT_SHOT, TR_DROPPED_MALFORMED);
	g = G;
	g.proto = 41;
	n = gue_packet(pkt, &g, inner, il);
	expect_verdict("proto 41 with an IPv4 inner packet", pkt, n, TC_ACT_SHOT,
		       TR_DROPPED_MALFORMED);
	inner[20 + 12] = 4 << 4; /* TCP data offset 4 words */
	n = gue_packet(pkt, &G, inner, il);
	expect_verdict("inner TCP data offset < 5", pkt, n, TC_ACT_SHOT, TR_DROPPED_MALFORMED);

	/* truncated */
	n = gue_packet(pkt, &G, inner, il);
	expect_verdict("frame shorter than its IP length", pkt, n - 10, TC_ACT_SHOT,
		       TR_DROPPED_TRUNCATED);
	g = G;
	g.hop_count = 3;
	g.hops[1] = ALT;
	g.hops[2] = ALT;
	n = gue_packet(pkt, &g, inner, 2); /* 3 hops, then 2 bytes of the inner header */
	expect_verdict("inner IPv4 header cut (2 bytes)", pkt, n, TC_ACT_SHOT,
		       TR_DROPPED_TRUNCATED);
	n = gue_packet(pkt, &G, inner, 0);
	put16(pkt + 16, 20 + 8 + 6);
	put16(pkt + 38, 8 + 6); /* UDP payload: 6 bytes of an 8-byte GUE header */
	pkt[24] = pkt[25] = 0;
	put16(pkt + 24, fold(sum16(0, pkt + 14, 20)));
	expect_verdict("GUE header cut", pkt, 14 + 20 + 8 + 6, TC_ACT_SHOT, TR_DROPPED_TRUNCATED);
	il = tcp_packet(inner, 0, CLIENT, VIP, 40000, 80, 1, 0, F_SYN);
	put16(inner + 2, 20 + 12); /* IP length says 12 bytes of TCP */
	inner[10] = inner[11] = 0;
	put16(inner + 10, fold(sum16(0, inner, 20)));
	n = gue_packet(pkt, &G, inner, 32);
	expect_verdict("inner TCP header cut", pkt, n, TC_ACT_SHOT, TR_DROPPED_TRUNCATED);
	il = tcp_packet(inner, 0, CLIENT, VIP, 40000, 80, 1, 0, F_SYN);
	n = gue_packet(pkt, &G, inner, il - 4);
	expect_verdict("inner packet shorter than its IP length", pkt, n, TC_ACT_SHOT,
		       TR_DROPPED_TRUNCATED);
}

static void fixtures_simple(void)
{
	uint8_t inner[256], pkt[512], l4[64] = {0};
	size_t il, n;
	struct gue g;

	/* 2: inner UDP, ICMP echo */
	put16(l4, 5353);
	put16(l4 + 2, 53);
	put16(l4 + 4, 12);
	memcpy(l4 + 8, "ping", 4);
	il = ip_packet(inner, 0, CLIENT, VIP, IPPROTO_UDP, l4, 12, 6);
	n = gue_packet(pkt, &G, inner, il);
	expect_local("inner UDP", pkt, n, inner, il, TR_ACCEPTED_UDP);
	memset(l4, 0, sizeof(l4));
	l4[0] = 8; /* echo request */
	put16(l4 + 4, 0x1234);
	put16(l4 + 6, 1);
	il = ip_packet(inner, 0, "10.98.0.9", VIP, IPPROTO_ICMP, l4, 16, 2);
	n = gue_packet(pkt, &G, inner, il);
	expect_local("inner ICMP echo (health probe)", pkt, n, inner, il, TR_ACCEPTED_ICMP);

	/* 3: SYN stays on the first hop even with an alternate in the list */
	il = tcp_packet(inner, 0, CLIENT, VIP, 40000, 80, 1000, 0, F_SYN);
	n = gue_packet(pkt, &G, inner, il);
	expect_local("inner TCP SYN", pkt, n, inner, il, TR_ACCEPTED_SYN);
	il = tcp_packet(inner, 1, CLIENT6, VIP6, 40000, 80, 1000, 0, F_SYN);
	n = gue_packet(pkt, &G, inner, il);
	expect_local("inner IPv6 TCP SYN", pkt, n, inner, il, TR_ACCEPTED_SYN);

	/* 6: no socket, hop list used up */
	il = tcp_packet(inner, 0, CLIENT, VIP, 40001, 80, 5, 6, F_ACK);
	g = G;
	g.next_hop = 1;
	n = gue_packet(pkt, &g, inner, il);
	expect_local("unknown flow, next_hop == hop_count", pkt, n, inner, il,
		     TR_ACCEPTED_LAST_RESORT);
	g.hop_count = 0;
	g.next_hop = 0;
	n = gue_packet(pkt, &g, inner, il);
	expect_local("unknown flow, no hops", pkt, n, inner, il, TR_ACCEPTED_LAST_RESORT);

	/* 7: forwarding */
	n = gue_packet(pkt, &G, inner, il);
	expect_forward("unknown flow, hops [alt]", pkt, n, ALT, true);
	g = G;
	g.hop_count = 3;
	g.next_hop = 1;
	g.hops[0] = "10.99.0.50";
	g.hops[1] = ALT;
	g.hops[2] = "10.99.0.51";
	n = gue_packet(pkt, &g, inner, il);
	expect_forward("unknown flow, 3 hops, next_hop 1", pkt, n, ALT, true);
	g = G;
	g.hops[0] = ALT_NO_NEIGH;
	n = gue_packet(pkt, &g, inner, il);
	expect_forward("unknown flow, alternate without a neighbour entry (redirect_neigh)", pkt, n,
		       ALT_NO_NEIGH, false);
	g.hops[0] = UNROUTABLE;
	n = gue_packet(pkt, &g, inner, il);
	expect_verdict("unknown flow, alternate without a route", pkt, n, TC_ACT_SHOT,
		       TR_FORWARD_FAILED);
	write_sysctl("/proc/sys/net/ipv4/conf/trv0/forwarding", "0");
	g.hops[0] = ALT;
	n = gue_packet(pkt, &g, inner, il);
	expect_forward("unknown flow, IP forwarding off (redirect_neigh does the route)", pkt, n,
		       ALT, false);
	write_sysctl("/proc/sys/net/ipv4/conf/trv0/forwarding", "1");
	g.hops[0] = PROXY_ALIAS;
	n = gue_packet(pkt, &g, inner, il);
	expect_local("unknown flow, next hop is a local address", pkt, n, inner, il,
		     TR_FORWARDED_TO_SELF);
	il = tcp_packet(inner, 1, CLIENT6, VIP6, 40001, 80, 5, 6, F_ACK);
	n = gue_packet(pkt, &G, inner, il);
	expect_forward("unknown IPv6 flow, hops [alt]", pkt, n, ALT, true);
}

/* ICMP frag-needed (v4) / packet-too-big (v6) quoting a packet VIP:vport -> client:cport. */
static size_t pmtu_packet_to(uint8_t *buf, int v6, uint16_t vport, uint16_t cport)
{
	uint8_t quoted[128], l4[256] = {0};
	size_t ql;

	ql = tcp_packet(quoted, v6, v6 ? VIP6 : VIP, v6 ? CLIENT6 : CLIENT, vport, cport, 7, 8,
			F_ACK);
	l4[0] = v6 ? 2 : 3;
	l4[1] = v6 ? 0 : 4;
	put16(l4 + 6, 1400); /* next-hop MTU (v4: bytes 6-7; v6: 4-7) */
	memcpy(l4 + 8, quoted, ql);
	return ip_packet(buf, v6, v6 ? "fd00:99::1" : "10.97.0.1", v6 ? VIP6 : VIP,
			 v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP, l4, 8 + ql, 2);
}

static size_t pmtu_packet(uint8_t *buf, int v6, uint16_t cport)
{
	return pmtu_packet_to(buf, v6, 80, cport);
}

static void fixtures_sockets(void)
{
	uint8_t inner[256], pkt[512];
	int lfd = -1, cfd = -1, sfd = -1, lfd6 = -1, cfd6 = -1, sfd6 = -1;
	int tw_l = -1, tw_c = -1, tw_s = -1;
	uint16_t cport = 0, cport6 = 0, twport = 0;
	size_t il, n;

	lfd = tcp_listen(0, VIP, 80);
	lfd6 = tcp_listen(1, VIP6, 80);
	cfd = tcp_connect(0, CLIENT, VIP, 80, &cport);
	cfd6 = tcp_connect(1, CLIENT6, VIP6, 80, &cport6);
	sfd = lfd >= 0 ? accept(lfd, NULL, NULL) : -1;
	sfd6 = lfd6 >= 0 ? accept(lfd6, NULL, NULL) : -1;
	check(lfd >= 0 && cfd >= 0 && sfd >= 0 && lfd6 >= 0 && cfd6 >= 0 && sfd6 >= 0,
	      "sockets: established flows %s:%u -> VIP:80 (IPv4 and IPv6)", CLIENT, cport);

	/* 4: established */
	il = tcp_packet(inner, 0, CLIENT, VIP, cport, 80, 100, 200, F_ACK);
	n = gue_packet(pkt, &G, inner, il);
	expect_local("ACK of an established flow", pkt, n, inner, il, TR_ACCEPTED_ESTABLISHED);
	il = tcp_packet(inner, 0, CLIENT, VIP, cport, 80, 100, 200, F_ACK | F_FIN);
	n = gue_packet(pkt, &G, inner, il);
	expect_local("FIN of an established flow", pkt, n, inner, il, TR_ACCEPTED_ESTABLISHED);
	il = tcp_packet(inner, 1, CLIENT6, VIP6, cport6, 80, 100, 200, F_ACK);
	n = gue_packet(pkt, &G, inner, il);
	expect_local("ACK of an established IPv6 flow", pkt, n, inner, il, TR_ACCEPTED_ESTABLISHED);

	/* 4 (ICMP): the quoted flow, reversed */
	il = pmtu_packet(inner, 0, cport);
	n = gue_packet(pkt, &G, inner, il);
	expect_local("ICMP frag-needed for a local flow", pkt, n, inner, il, TR_ACCEPTED_PMTU);
	il = pmtu_packet(inner, 1, cport6);
	n = gue_packet(pkt, &G, inner, il);
	expect_local("ICMPv6 packet-too-big for a local flow", pkt, n, inner, il, TR_ACCEPTED_PMTU);
	il = pmtu_packet(inner, 0, 41999);
	n = gue_packet(pkt, &G, inner, il);
	expect_forward("ICMP frag-needed for a flow that is not local", pkt, n, ALT, true);
	il = pmtu_packet(inner, 1, 41999);
	n = gue_packet(pkt, &G, inner, il);
	expect_forward("ICMPv6 packet-too-big for a flow that is not local", pkt, n, ALT, true);

	/* 4: TIME-WAIT on the proxy side (the server closes first) */
	tw_l = tcp_listen(0, VIP, 81);
	tw_c = tcp_connect(0, CLIENT, VIP, 81, &twport);
	tw_s = tw_l >= 0 ? accept(tw_l, NULL, NULL) : -1;
	if (tw_s >= 0 && tw_c >= 0) {
		close(tw_s);
		tw_s = -1;
		usleep(20000);
		close(tw_c);
		tw_c = -1;
		usleep(50000);
	}
	il = tcp_packet(inner, 0, CLIENT, VIP, twport, 81, 100, 200, F_ACK);
	n = gue_packet(pkt, &G, inner, il);
	expect_local("ACK of a TIME-WAIT flow", pkt, n, inner, il, TR_ACCEPTED_ESTABLISHED);

	if (tw_l >= 0)
		close(tw_l);
	if (sfd >= 0)
		close(sfd);
	if (cfd >= 0)
		close(cfd);
	if (sfd6 >= 0)
		close(sfd6);
	if (cfd6 >= 0)
		close(cfd6);
	if (lfd >= 0)
		close(lfd);
	if (lfd6 >= 0)
		close(lfd6);
}

/*
 * 5: SYN cookies. With tcp_syncookies=2 the listener answers every SYN with a cookie and keeps
 * no request socket; the SYN goes out through a raw socket, the SYN-ACK is read from another.
 */
static void fixtures_syncookie(void)
{
	struct sockaddr_in dst = {.sin_family = AF_INET};
	uint8_t syn[64], buf[2048], inner[128], pkt[512];
	uint32_t cookie = 0, vip = ip4(VIP), client = ip4(CLIENT);
	struct timeval tv = {.tv_sec = 2};
	int lfd, tx, rx, got = 0;
	size_t sl, il, n;

	if (write_sysctl("/proc/sys/net/ipv4/tcp_syncookies", "2")) {
		check(false, "set net.ipv4.tcp_syncookies=2");
		return;
	}
	lfd = tcp_listen(0, VIP, 8080);
	tx = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	rx = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_TCP);
	if (lfd < 0 || tx < 0 || rx < 0) {
		check(false, "syncookie sockets");
		goto out;
	}
	setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	sl = tcp_packet(syn, 0, CLIENT, VIP, 42000, 8080, 0x11111111, 0, F_SYN);
	dst.sin_addr.s_addr = vip;
	if (sendto(tx, syn, sl, 0, (struct sockaddr *)&dst, sizeof(dst)) < 0) {
		check(false, "send the SYN: %s", strerror(errno));
		goto out;
	}
	for (int i = 0; i < 50 && !got; i++) {
		ssize_t r = recv(rx, buf, sizeof(buf), 0);
		const uint8_t *th;

		if (r < 40)
			break;
		th = buf + (buf[0] & 0xf) * 4;
		if (memcmp(buf + 12, &vip, 4) == 0 && memcmp(buf + 16, &client, 4) == 0 &&
		    th[0] == 8080 >> 8 && th[1] == (8080 & 0xff) &&
		    (th[13] & (F_SYN | F_ACK)) == (F_SYN | F_ACK)) {
			cookie = (uint32_t)th[4] << 24 | (uint32_t)th[5] << 16 |
				 (uint32_t)th[6] << 8 | th[7];
			got = 1;
		}
	}
	check(got, "SYN-ACK with a cookie received (cookie 0x%08x)", cookie);
	if (!got)
		goto out;
	il = tcp_packet(inner, 0, CLIENT, VIP, 42000, 8080, 0x11111112, cookie + 1, F_ACK);
	n = gue_packet(pkt, &G, inner, il);
	expect_local("ACK with a valid SYN cookie", pkt, n, inner, il, TR_ACCEPTED_SYN_COOKIE);
	il = tcp_packet(inner, 0, CLIENT, VIP, 42000, 8080, 0x11111112, cookie + 12346, F_ACK);
	n = gue_packet(pkt, &G, inner, il);
	expect_forward("ACK with an invalid SYN cookie", pkt, n, ALT, true);
out:
	write_sysctl("/proc/sys/net/ipv4/tcp_syncookies", "1");
	if (lfd >= 0)
		close(lfd);
	if (tx >= 0)
		close(tx);
	if (rx >= 0)
		close(rx);
}

/*
 * The "why" counters and the VIP map with real sockets: a packet of a local flow that arrived as
 * a hop (next_hop > 0) counts accepted_second_chance, and accepted_alternate_hash when it came
 * through the alternate pair (hop_count 3, next_hop >= 2); the same packet as the first hop (a
 * primary hit) counts neither. Each also counts for its VIP (address, port, TCP), and only there.
 */
static void fixtures_second_chance(void)
{
	uint8_t inner[256], pkt[512];
	int lfd, cfd, sfd, lfd6, cfd6, sfd6;
	uint16_t cport = 0, cport6 = 0;
	struct result r;
	struct gue g;
	size_t il, n;

	lfd = tcp_listen(0, VIP, 82);
	lfd6 = tcp_listen(1, VIP6, 82);
	cfd = tcp_connect(0, CLIENT, VIP, 82, &cport);
	cfd6 = tcp_connect(1, CLIENT6, VIP6, 82, &cport6);
	sfd = lfd >= 0 ? accept(lfd, NULL, NULL) : -1;
	sfd6 = lfd6 >= 0 ? accept(lfd6, NULL, NULL) : -1;
	check(lfd >= 0 && cfd >= 0 && sfd >= 0 && lfd6 >= 0 && cfd6 >= 0 && sfd6 >= 0,
	      "second chance: established flows to VIP:82 (IPv4 and IPv6)");
	watch_vip(0, VIP, 82);

	il = tcp_packet(inner, 0, CLIENT, VIP, cport, 82, 100, 200, F_ACK);
	n = gue_packet(pkt, &G, inner, il);
	expect_local_why("primary hit: established flow, next_hop 0", pkt, n, inner, il,
			 TR_ACCEPTED_ESTABLISHED, 0, BIT(TR_VIP_ACCEPTED_ESTABLISHED));
	g = G;
	g.next_hop = 1;
	n = gue_packet(pkt, &g, inner, il);
	expect_local_why("established flow arriving as hop 1 (secondary)", pkt, n, inner, il,
			 TR_ACCEPTED_ESTABLISHED, BIT(TR_ACCEPTED_SECOND_CHANCE),
			 BIT(TR_VIP_ACCEPTED_ESTABLISHED) | BIT(TR_VIP_ACCEPTED_SECOND_CHANCE));
	g = G;
	g.hop_count = 3;
	g.hops[1] = "10.99.0.50";
	g.hops[2] = "10.99.0.51";
	g.next_hop = 1;
	n = gue_packet(pkt, &g, inner, il);
	expect_local_why("migration: established flow at the secondary (3 hops, next_hop 1)", pkt,
			 n, inner, il, TR_ACCEPTED_ESTABLISHED, BIT(TR_ACCEPTED_SECOND_CHANCE),
			 BIT(TR_VIP_ACCEPTED_ESTABLISHED) | BIT(TR_VIP_ACCEPTED_SECOND_CHANCE));
	g.next_hop = 2;
	n = gue_packet(pkt, &g, inner, il);
	expect_local_why(
		"migration: established flow at the alternate primary (3 hops, next_hop 2)", pkt, n,
		inner, il, TR_ACCEPTED_ESTABLISHED,
		BIT(TR_ACCEPTED_SECOND_CHANCE) | BIT(TR_ACCEPTED_ALTERNATE_HASH),
		BIT(TR_VIP_ACCEPTED_ESTABLISHED) | BIT(TR_VIP_ACCEPTED_SECOND_CHANCE) |
			BIT(TR_VIP_ACCEPTED_ALTERNATE_HASH));
	g.next_hop = 3;
	n = gue_packet(pkt, &g, inner, il);
	expect_local_why(
		"migration: established flow at the alternate secondary (3 hops, next_hop 3)", pkt,
		n, inner, il, TR_ACCEPTED_ESTABLISHED,
		BIT(TR_ACCEPTED_SECOND_CHANCE) | BIT(TR_ACCEPTED_ALTERNATE_HASH),
		BIT(TR_VIP_ACCEPTED_ESTABLISHED) | BIT(TR_VIP_ACCEPTED_SECOND_CHANCE) |
			BIT(TR_VIP_ACCEPTED_ALTERNATE_HASH));

	/* Not owned here: no second chance taken by this proxy, whatever hop it came as. */
	il = tcp_packet(inner, 0, CLIENT, VIP, 44001, 82, 5, 6, F_ACK);
	g = G;
	g.next_hop = 1;
	n = gue_packet(pkt, &g, inner, il);
	expect_local_why("unknown flow arriving as the last hop (last resort)", pkt, n, inner, il,
			 TR_ACCEPTED_LAST_RESORT, 0, BIT(TR_VIP_ACCEPTED_LAST_RESORT));
	watch_forwarded = true;
	n = gue_packet(pkt, &G, inner, il);
	expect_forward("unknown flow to VIP:82, hops [alt] (counted for its VIP)", pkt, n, ALT,
		       true);
	watch_forwarded = false;
	il = tcp_packet(inner, 0, CLIENT, VIP, 44002, 82, 1, 0, F_SYN);
	n = gue_packet(pkt, &G, inner, il);
	expect_local_why("SYN to VIP:82", pkt, n, inner, il, TR_ACCEPTED_SYN, 0,
			 BIT(TR_VIP_ACCEPTED_SYN));

	/* Another VIP's packets leave this one's counters alone. */
	il = tcp_packet(inner, 0, CLIENT, VIP, 44003, 83, 1, 0, F_SYN);
	n = gue_packet(pkt, &G, inner, il);
	run(pkt, n, &r);
	check(r.ret == TC_ACT_OK && vip_moved(&r, 0),
	      "SYN to VIP:83 -> VIP:82's counters unchanged");

	/* ICMP frag-needed about the local flow, as hop 1: the flow it quotes is VIP:82's. */
	il = pmtu_packet_to(inner, 0, 82, cport);
	g = G;
	g.next_hop = 1;
	n = gue_packet(pkt, &g, inner, il);
	expect_local_why("ICMP frag-needed for a local flow, as hop 1", pkt, n, inner, il,
			 TR_ACCEPTED_PMTU, BIT(TR_ACCEPTED_SECOND_CHANCE),
			 BIT(TR_VIP_ACCEPTED_SECOND_CHANCE));

	watch_vip(1, VIP6, 82);
	il = tcp_packet(inner, 1, CLIENT6, VIP6, cport6, 82, 100, 200, F_ACK);
	g = G;
	g.next_hop = 1;
	n = gue_packet(pkt, &g, inner, il);
	expect_local_why("established IPv6 flow arriving as hop 1", pkt, n, inner, il,
			 TR_ACCEPTED_ESTABLISHED, BIT(TR_ACCEPTED_SECOND_CHANCE),
			 BIT(TR_VIP_ACCEPTED_ESTABLISHED) | BIT(TR_VIP_ACCEPTED_SECOND_CHANCE));
	watch_vip(0, VIP, 80);

	if (sfd >= 0)
		close(sfd);
	if (cfd >= 0)
		close(cfd);
	if (sfd6 >= 0)
		close(sfd6);
	if (cfd6 >= 0)
		close(cfd6);
	if (lfd >= 0)
		close(lfd);
	if (lfd6 >= 0)
		close(lfd6);
}

/* ---- the flow map ---- */

/* The flow map's key for client:cport -> vip:vport over TCP. */
static struct tide_redirect_flow_key flow_key(int v6, const char *client, uint16_t cport,
					      const char *vip, uint16_t vport)
{
	struct tide_redirect_flow_key k;

	memset(&k, 0, sizeof(k));
	inet_pton(v6 ? AF_INET6 : AF_INET, client, k.client_addr);
	inet_pton(v6 ? AF_INET6 : AF_INET, vip, k.vip.addr);
	k.client_port = htons(cport);
	k.vip.port = htons(vport);
	k.vip.proto = IPPROTO_TCP;
	k.vip.family = v6 ? TR_VIP_FAMILY_IPV6 : TR_VIP_FAMILY_IPV4;
	return k;
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/*
 * Runs `pkt` and checks the flow map: it gained `entries` entries, and the entry of `k` has the
 * packet counts `sc`, `ah`, `lr` (second_chance, alternate_hash, last_resort; all -1: no entry),
 * each kind's last_ns set exactly when it has packets, within the run, and first_ns no later.
 */
static void expect_flow(const char *what, const uint8_t *pkt, size_t len,
			const struct tide_redirect_flow_key *k, long entries, long sc, long ah,
			long lr)
{
	const long want[TR_FLOW_KIND_COUNT] = {[TR_FLOW_SECOND_CHANCE] = sc,
					       [TR_FLOW_ALTERNATE_HASH] = ah,
					       [TR_FLOW_LAST_RESORT] = lr};
	struct tide_redirect_flow f;
	uint64_t t0 = mono_ns(), t1;
	bool ok, found;
	struct result r;

	run(pkt, len, &r);
	t1 = mono_ns();
	found = bpf_map_lookup_elem(flows_fd, k, &f) == 0;
	ok = r.ret == TC_ACT_OK && r.flows_delta == entries && found == (sc >= 0);
	for (int i = 0; ok && found && i < TR_FLOW_KIND_COUNT; i++) {
		const struct tide_redirect_flow_kind_seen *s = &f.kinds[i];

		ok = (long)s->packets == want[i] && (s->packets == 0) == (s->last_ns == 0) &&
		     f.first_ns != 0 && f.first_ns <= t1 &&
		     (s->last_ns == 0 || s->last_ns >= f.first_ns);
	}
	/* The kinds this packet added were stamped during the run. */
	for (int i = 0; ok && found && i < TR_FLOW_KIND_COUNT; i++)
		if (f.kinds[i].packets && r.flows_delta == 1)
			ok = f.kinds[i].last_ns >= t0 && f.kinds[i].last_ns <= t1;
	if (found)
		printf("  flow: first_ns %llu, packets %llu/%llu/%llu\n",
		       (unsigned long long)f.first_ns,
		       (unsigned long long)f.kinds[TR_FLOW_SECOND_CHANCE].packets,
		       (unsigned long long)f.kinds[TR_FLOW_ALTERNATE_HASH].packets,
		       (unsigned long long)f.kinds[TR_FLOW_LAST_RESORT].packets);
	check(ok,
	      "flows: %s -> %ld new entr%s, packets second_chance %ld, alternate_hash %ld, "
	      "last_resort %ld [ret %d, %ld new]",
	      what, entries, entries == 1 ? "y" : "ies", sc, ah, lr, r.ret, r.flows_delta);
}

/*
 * The flow map with real sockets (VIP:84): a packet that took a second chance, the alternate hash
 * or a last resort creates one entry for its flow, the next one of the same flow adds to it; a
 * primary hit, a SYN (even as a hop) and a forwarded packet create none. Then the daemon's reader
 * (redirect_flows_read) on what the program wrote, and on a full map.
 */
static void fixtures_flows(struct tide_redirect_bpf *skel)
{
	uint8_t inner[256], pkt[512];
	int lfd, cfd, sfd, lfd6, cfd6, sfd6;
	uint16_t cport = 0, cport6 = 0;
	struct tide_redirect_flow_key k, k6, klr, kfwd, ksyn;
	struct gue g, alt;
	size_t il, n;
	uint64_t t_before, t_last;

	lfd = tcp_listen(0, VIP, 84);
	lfd6 = tcp_listen(1, VIP6, 84);
	cfd = tcp_connect(0, CLIENT, VIP, 84, &cport);
	cfd6 = tcp_connect(1, CLIENT6, VIP6, 84, &cport6);
	sfd = lfd >= 0 ? accept(lfd, NULL, NULL) : -1;
	sfd6 = lfd6 >= 0 ? accept(lfd6, NULL, NULL) : -1;
	check(lfd >= 0 && cfd >= 0 && sfd >= 0 && lfd6 >= 0 && cfd6 >= 0 && sfd6 >= 0,
	      "flows: established flows to VIP:84 (IPv4 and IPv6)");
	k = flow_key(0, CLIENT, cport, VIP, 84);
	k6 = flow_key(1, CLIENT6, cport6, VIP6, 84);
	klr = flow_key(0, CLIENT, 44011, VIP, 84);
	kfwd = flow_key(0, CLIENT, 44012, VIP, 84);
	ksyn = flow_key(0, CLIENT, 44010, VIP, 84);
	alt = G;
	alt.hop_count = 3;
	alt.hops[1] = "10.99.0.50";
	alt.hops[2] = "10.99.0.51";
	alt.next_hop = 2;

	t_before = mono_ns();
	il = tcp_packet(inner, 0, CLIENT, VIP, cport, 84, 100, 200, F_ACK);
	n = gue_packet(pkt, &G, inner, il);
	expect_flow("primary hit of an established flow", pkt, n, &k, 0, -1, -1, -1);
	il = tcp_packet(inner, 0, CLIENT, VIP, 44010, 84, 1, 0, F_SYN);
	g = G;
	g.next_hop = 1;
	n = gue_packet(pkt, &g, inner, il);
	expect_flow("SYN arriving as hop 1", pkt, n, &ksyn, 0, -1, -1, -1);
	il = tcp_packet(inner, 0, CLIENT, VIP, 44012, 84, 5, 6, F_ACK);
	n = gue_packet(pkt, &G, inner, il);
	run(pkt, n, &(struct result){0});
	check(bpf_map_lookup_elem(flows_fd, &kfwd, &(struct tide_redirect_flow){0}) != 0,
	      "flows: a forwarded packet (unknown flow, hops [alt]) -> no entry");

	il = tcp_packet(inner, 0, CLIENT, VIP, cport, 84, 100, 200, F_ACK);
	n = gue_packet(pkt, &g, inner, il);
	expect_flow("established flow arriving as hop 1 (second chance)", pkt, n, &k, 1, 1, 0, 0);
	expect_flow("its second packet as hop 1", pkt, n, &k, 0, 2, 0, 0);
	n = gue_packet(pkt, &alt, inner, il);
	expect_flow("its packet through the alternate pair (3 hops, next_hop 2)", pkt, n, &k, 0, 3,
		    1, 0);
	il = pmtu_packet_to(inner, 0, 84, cport);
	n = gue_packet(pkt, &g, inner, il);
	expect_flow("ICMP frag-needed quoting it, as hop 1 (counts for the quoted flow)", pkt, n,
		    &k, 0, 4, 1, 0);

	il = tcp_packet(inner, 1, CLIENT6, VIP6, cport6, 84, 100, 200, F_ACK);
	n = gue_packet(pkt, &alt, inner, il);
	expect_flow("established IPv6 flow's first packet through the alternate pair", pkt, n, &k6,
		    1, 1, 1, 0);

	il = tcp_packet(inner, 0, CLIENT, VIP, 44011, 84, 5, 6, F_ACK);
	n = gue_packet(pkt, &g, inner, il);
	expect_flow("unknown flow as the last hop (last resort)", pkt, n, &klr, 1, 0, 0, 1);
	t_last = mono_ns();

	/* What the daemon reads: these three flows, with what the program wrote. */
	{
		struct redirect_state st = {.skel = skel};
		struct redirect_flow *flows = NULL;
		size_t count = 0, seen = 0;
		bool same = true;
		int rc = redirect_flows_read(&st, &flows, &count);

		for (size_t i = 0; i < count; i++) {
			struct tide_redirect_flow v;

			if (memcmp(&flows[i].key, &k, sizeof(k)) &&
			    memcmp(&flows[i].key, &k6, sizeof(k6)) &&
			    memcmp(&flows[i].key, &klr, sizeof(klr)))
				continue;
			seen++;
			same = same && bpf_map_lookup_elem(flows_fd, &flows[i].key, &v) == 0 &&
			       memcmp(&v, &flows[i].value, sizeof(v)) == 0 &&
			       flows[i].value.first_ns >= t_before &&
			       flows[i].value.first_ns <= t_last;
		}
		check(rc == 0 && seen == 3 && same && (long)count == flow_entries(),
		      "flows: redirect_flows_read returns every entry (%zu) and these three as the "
		      "program wrote them [rc %d]",
		      count, rc);
		free(flows);
	}

	if (sfd >= 0)
		close(sfd);
	if (cfd >= 0)
		close(cfd);
	if (sfd6 >= 0)
		close(sfd6);
	if (cfd6 >= 0)
		close(cfd6);
	if (lfd >= 0)
		close(lfd);
	if (lfd6 >= 0)
		close(lfd6);
}

/*
 * A full flow map: more distinct flows than it holds, written from here; the reader returns at
 * most TIDE_REDIRECT_MAX_FLOWS, nearly all of them (the LRU keeps a few free per CPU), in a
 * time printed, never asserted. Last: it evicts what the fixtures wrote.
 */
static void fixtures_flows_full(struct tide_redirect_bpf *skel)
{
	struct redirect_state st = {.skel = skel};
	struct tide_redirect_flow v = {.first_ns = 1, .kinds = {{.packets = 1, .last_ns = 1}}};
	struct redirect_flow *flows = NULL;
	size_t count = 0;
	uint64_t t0;
	int rc;

	for (uint32_t i = 0; i < TIDE_REDIRECT_MAX_FLOWS + 512; i++) {
		struct tide_redirect_flow_key k = flow_key(0, CLIENT, 0, VIP, 9);

		memcpy(k.client_addr, &i, 4);
		k.client_port = (uint16_t)i;
		bpf_map_update_elem(flows_fd, &k, &v, BPF_ANY);
	}
	t0 = mono_ns();
	rc = redirect_flows_read(&st, &flows, &count);
	printf("bench: flows read, full map             %7.2f ms for %zu entries\n",
	       (double)(mono_ns() - t0) / 1e6, count);
	check(rc == 0 && count <= TIDE_REDIRECT_MAX_FLOWS &&
		      count >= TIDE_REDIRECT_MAX_FLOWS * 9 / 10,
	      "flows: a full map reads as at most %d entries (%zu) [rc %d]",
	      TIDE_REDIRECT_MAX_FLOWS, count, rc);
	free(flows);
}

/* ---- per-packet cost ---- */

/*
 * A program that decapsulates or rewrites changes the test skb in place, and repeat=N reuses it,
 * so those paths are timed with repeat=1 calls (the kernel's duration is the program run only,
 * not the syscall) averaged over BENCH_CALLS; the pass-through path, which changes nothing, uses
 * repeat=BENCH_REPEAT.
 */
static double bench_calls(const uint8_t *pkt, size_t len, unsigned int calls, unsigned int repeat)
{
	struct __sk_buff ctx = {.ifindex = (uint32_t)fix_ifindex};
	static uint8_t out[4096];
	unsigned long long total = 0;

	for (unsigned int i = 0; i < calls; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = (uint32_t)len,
			    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .repeat = repeat);

		if (bpf_prog_test_run_opts(prog_fd, &o))
			return -1;
		total += o.duration;
	}
	return (double)total / calls;
}

static void bench(void)
{
	uint8_t inner[128], pkt[512], plain[128];
	uint16_t cport = 0;
	int lfd = tcp_listen(0, VIP, 90), cfd, sfd;
	size_t il, n, pl;
	struct gue g;

	cfd = tcp_connect(0, CLIENT, VIP, 90, &cport);
	sfd = lfd >= 0 ? accept(lfd, NULL, NULL) : -1;
	if (cfd < 0 || sfd < 0) {
		printf("bench: skipped (no socket)\n");
		goto out;
	}
	memcpy(plain, "\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02\x08\x00", 14);
	pl = 14 + tcp_packet(plain + 14, 0, CLIENT, VIP, cport, 90, 1, 1, F_ACK);
	printf("bench: not GUE (pass-through)           %7.1f ns/packet (repeat=%u)\n",
	       bench_calls(plain, pl, 1, BENCH_REPEAT), BENCH_REPEAT);
	printf("bench: not GUE (pass-through)           %7.1f ns/packet (repeat=1 x %u)\n",
	       bench_calls(plain, pl, BENCH_CALLS, 1), BENCH_CALLS);
	il = tcp_packet(inner, 0, CLIENT, VIP, cport, 90, 1, 1, F_ACK);
	n = gue_packet(pkt, &G, inner, il);
	printf("bench: established flow (lookup+decap)  %7.1f ns/packet (repeat=1 x %u)\n",
	       bench_calls(pkt, n, BENCH_CALLS, 1), BENCH_CALLS);
	g = G;
	g.next_hop = 1;
	n = gue_packet(pkt, &g, inner, il);
	printf("bench: second chance (hop 1, recorded)  %7.1f ns/packet (repeat=1 x %u)\n",
	       bench_calls(pkt, n, BENCH_CALLS, 1), BENCH_CALLS);
	il = tcp_packet(inner, 0, CLIENT, VIP, 43999, 90, 1, 1, F_ACK);
	n = gue_packet(pkt, &G, inner, il);
	printf("bench: forwarded (lookup miss+rewrite)  %7.1f ns/packet (repeat=1 x %u)\n",
	       bench_calls(pkt, n, BENCH_CALLS, 1), BENCH_CALLS);
	n = gue_packet(pkt, &g, inner, il);
	printf("bench: last resort (recorded)           %7.1f ns/packet (repeat=1 x %u)\n",
	       bench_calls(pkt, n, BENCH_CALLS, 1), BENCH_CALLS);
out:
	if (sfd >= 0)
		close(sfd);
	if (cfd >= 0)
		close(cfd);
	if (lfd >= 0)
		close(lfd);
}

void fixtures(void)
{
	struct tide_redirect_config cfg = {.port = GUE_PORT, .num_local = 2};
	struct tide_redirect_bpf *skel;
	int zero = 0;

	if (setup_fixture_netns()) {
		check(false, "fixture network namespace");
		return;
	}
	skel = tide_redirect_bpf__open_and_load();
	check(skel != NULL, "BPF program loads (verifier)");
	if (!skel)
		return;
	prog_fd = bpf_program__fd(skel->progs.tide_redirect);
	stats_fd = bpf_map__fd(skel->maps.tide_redirect_stats);
	vips_fd = bpf_map__fd(skel->maps.tide_redirect_vips);
	flows_fd = bpf_map__fd(skel->maps.tide_redirect_flows);
	watch_vip(0, VIP, 80);
	cfg.local_addrs[0] = ip4(PROXY);
	cfg.local_addrs[1] = ip4(PROXY_ALIAS);
	bpf_map_update_elem(bpf_map__fd(skel->maps.tide_redirect_config), &zero, &cfg, BPF_ANY);

	fixtures_format();
	fixtures_simple();
	fixtures_sockets();
	fixtures_syncookie();
	fixtures_second_chance();
	fixtures_flows(skel);
	bench();
	fixtures_flows_full(skel);
	tide_redirect_bpf__destroy(skel);
}
