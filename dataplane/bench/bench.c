/* SPDX-License-Identifier: MIT */
/*
 * Per-packet cost of the director's packet path (classify + hash + GUE encapsulation), on one
 * core, against an rx -> tx loop that moves the same packets with no processing, in the same run.
 *
 * Both loops take bursts of 32 packet buffers from an "rx ring", restore each packet's headers
 * (the previous pass encapsulated it in place) and put it on a "tx ring"; the pipeline loop also
 * calls tide_pipeline() and adjusts the buffer like the worker adjusts an mbuf. The difference
 * is what the director adds per packet. Traffic: 64 proxies, 65,536 client addresses.
 *
 *   build/bench [--packets N] [--only baseline|pipeline] [--mix ipv4-tcp|mix]
 *               [--fields BITS] [--alt-fields BITS]
 * Without --only it prints ns/packet (thread CPU time, best of 5 passes) for both loops and both
 * mixes. With --only it runs one loop once, for instruction counts under callgrind (see `make
 * bench`, which also runs a reference commit's bench beside this one: bench/ab_bench.py).
 * --fields / --alt-fields set the table's hash fields (TIDE_HASH_* bits, e.g. 0xf for all four,
 * 0x1 for src_addr, the default; alt fields add the migration's second hash and hops), to
 * compare the hashing plan's paths.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tests/support/table_builder.h"
#include "tide_pipeline.h"

#define BENCH_HEADROOM 128u
#define BENCH_BUF 256u
#define BENCH_POOL 8192u /* packets in flight: 2 MB, like a NIC ring's worth of mbufs */
#define BENCH_BURST 32u

struct bench_pkt {
	uint16_t data_off;
	uint16_t data_len;
	uint16_t orig_len;
	uint8_t orig_hdr[14 + 40 + 8 +
			 28]; /* the headers a pass may overwrite, restored per pass */
	uint8_t buf[BENCH_BUF] __attribute__((aligned(64)));
};

static struct bench_pkt *pool;
static struct bench_pkt *tx_ring[BENCH_POOL];
static struct tide_fwd_set *set;
/* A v2 table: hashed on the director's default fields, src_addr unless --fields (the table
 * carries none). */
static struct tide_hash_config hash_cfg = {TIDE_HASH_SRC_ADDR, 0};
static struct tide_encap_params encap = {{2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 0xfe}, 0};
static volatile uint64_t sink;

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Writes one frame of the mix at p->buf + headroom. */
static void make_packet(struct bench_pkt *p, uint32_t i, int mix)
{
	uint8_t *f = p->buf + BENCH_HEADROOM, *ip = f + 14;
	uint32_t r = i * 2654435761u; /* spreads the kinds over the pool */
	unsigned int kind = mix ? (r >> 24) % 100 : 0;
	uint32_t client = htonl(0xc6330000u | (i & 0xffff)); /* 198.51.x.y: 65,536 clients */
	uint32_t vip = htonl(0xcb00710au);		     /* 203.0.113.10 */
	uint16_t len;

	memset(f, 0, 14 + 80);
	f[5] = 1;
	f[11] = 2;
	if (kind >= 80 && kind < 90) { /* 10% IPv6 TCP */
		f[12] = 0x86;
		f[13] = 0xdd;
		ip[0] = 0x60;
		put16(ip + 4, 20);
		ip[6] = 6;
		ip[7] = 64;
		ip[8] = 0x20;
		ip[9] = 0x01;
		ip[10] = 0x0d;
		ip[11] = 0xb8;
		memcpy(ip + 20, &client, 4);
		ip[24] = 0x20;
		ip[25] = 0x01;
		ip[26] = 0x0d;
		ip[27] = 0xb8;
		ip[39] = 0x10;
		put16(ip + 40, (uint16_t)(1024 + i));
		put16(ip + 42, 443);
		ip[40 + 12] = 0x50;
		ip[40 + 13] = 0x10;
		len = 14 + 40 + 20;
	} else {
		f[12] = 0x08;
		ip[0] = 0x45;
		ip[8] = 64;
		memcpy(ip + 12, &client, 4);
		memcpy(ip + 16, &vip, 4);
		if (kind >= 90 && kind < 95) { /* 5% UDP */
			ip[9] = 17;
			put16(ip + 20, (uint16_t)(1024 + i));
			put16(ip + 22, 53);
			put16(ip + 24, 8 + 32);
			len = 14 + 20 + 8 + 32;
		} else if (kind >= 95 && kind < 98) { /* 3% ICMP frag-needed about a flow */
			uint8_t *emb = ip + 28;

			ip[9] = 1;
			ip[20] = 3;
			ip[21] = 4;
			emb[0] = 0x45;
			emb[9] = 6;
			memcpy(emb + 12, &vip, 4);
			memcpy(emb + 16, &client, 4);
			put16(emb + 20, 443);
			put16(emb + 22, (uint16_t)(1024 + i));
			len = 14 + 20 + 8 + 28;
		} else if (kind >= 98) { /* 2% echo */
			ip[9] = 1;
			ip[20] = 8;
			len = 14 + 20 + 8 + 32;
		} else { /* IPv4 TCP ACK with 0..1400 bytes of payload (first 60 bytes in the buffer) */
			ip[9] = 6;
			put16(ip + 20, (uint16_t)(1024 + i));
			put16(ip + 22, 443);
			ip[32] = 0x50;
			ip[33] = 0x10;
			len = 14 + 20 + 20 + 60;
		}
		put16(ip + 2, (uint16_t)(len - 14));
	}
	p->data_off = BENCH_HEADROOM;
	p->data_len = len;
	p->orig_len = len;
	memcpy(p->orig_hdr, f, sizeof(p->orig_hdr));
}

/* What both loops do per packet: restore the headers a previous pass overwrote. */
static inline void restore(struct bench_pkt *p)
{
	p->data_off = BENCH_HEADROOM;
	p->data_len = p->orig_len;
	memcpy(p->buf + BENCH_HEADROOM, p->orig_hdr, 16);
}

__attribute__((noinline)) static uint64_t run_baseline(uint64_t n)
{
	uint64_t moved = 0;

	for (uint64_t done = 0; done < n; done += BENCH_BURST) {
		uint32_t base = (uint32_t)(done % BENCH_POOL);

		for (uint32_t i = 0; i < BENCH_BURST; i++) {
			struct bench_pkt *p = &pool[base + i];

			restore(p);
			moved += p->buf[p->data_off +
					12]; /* reads the packet, as a forwarder must */
			tx_ring[base + i] = p;
		}
	}
	return moved;
}

/* Like the director's worker: classify the whole burst (prefetching rows), then encapsulate. */
__attribute__((noinline)) static uint64_t run_pipeline(uint64_t n)
{
	uint64_t forwarded = 0;

	for (uint64_t done = 0; done < n; done += BENCH_BURST) {
		uint32_t base = (uint32_t)(done % BENCH_POOL);
		struct tide_flow f[BENCH_BURST];
		struct tide_decision d[BENCH_BURST];
		enum tide_verdict v[BENCH_BURST];

		for (uint32_t i = 0; i < BENCH_BURST; i++) {
			struct bench_pkt *p = &pool[base + i];

			restore(p);
			v[i] = tide_pipeline_classify(set, p->buf + p->data_off, p->data_len, &f[i],
						      &d[i]);
		}
		for (uint32_t i = 0; i < BENCH_BURST; i++) {
			struct bench_pkt *p = &pool[base + i];
			uint32_t prepend, out_len;

			if (v[i] == TIDE_FORWARD &&
			    tide_pipeline_finish(set, &encap, 1500, p->buf + p->data_off,
						 p->data_off, &f[i], &d[i], &prepend,
						 &out_len) == TIDE_FORWARD) {
				p->data_off = (uint16_t)(p->data_off - prepend);
				p->data_len = (uint16_t)out_len;
				forwarded++;
			}
			tx_ring[base + i] = p;
		}
	}
	return forwarded;
}

/*
 * This thread's CPU time: on a busy machine the time the bench was not running is not the
 * director's cost (wall time counted it; on an idle machine the two are the same). `make bench`
 * builds its reference commit's bench.c with this clock too.
 */
static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void build(void)
{
	static struct tb_table t = {.num_proxies = 64, .num_binds = 5};
	struct tide_glbd_error err;
	size_t len;
	uint8_t *file;

	for (uint32_t i = 0; i < 64; i++)
		t.proxies[i] = htonl(0x0a140000u + i + 1);
	memset(t.hash_key, 0x5a, 16);
	memset(t.seed, 0xa5, 16);
	t.binds[0] = (struct tb_bind){"203.0.113.10", 32, TIDE_PROTO_TCP, 443, 443};
	t.binds[1] = (struct tb_bind){"203.0.113.10", 32, TIDE_PROTO_UDP, 53, 53};
	t.binds[2] = (struct tb_bind){"2001:db8::10", 128, TIDE_PROTO_TCP, 443, 443};
	t.binds[3] = (struct tb_bind){"203.0.113.64", 26, TIDE_PROTO_TCP, 8000, 8099};
	t.binds[4] = (struct tb_bind){"198.18.0.0", 15, TIDE_PROTO_TCP, 80, 80};
	file = tb_write_file(&t, 1, &len);
	if (!file || tide_fwd_set_build(file, len, &hash_cfg, &set, &err) != 0) {
		fprintf(stderr, "bench: table: %s\n", file ? err.message : "out of memory");
		exit(1);
	}
	free(file);
	encap.source_ip = htonl(0xc000020au);
}

static void fill(int mix)
{
	for (uint32_t i = 0; i < BENCH_POOL; i++)
		make_packet(&pool[i], i, mix);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"packets", required_argument, NULL, 'n'},
					     {"only", required_argument, NULL, 'o'},
					     {"mix", required_argument, NULL, 'm'},
					     {"fields", required_argument, NULL, 'f'},
					     {"alt-fields", required_argument, NULL, 'a'},
					     {NULL, 0, NULL, 0}};
	uint64_t n = 20u * 1000 * 1000;
	const char *only = NULL;
	int mix = -1, c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'n')
			n = strtoull(optarg, NULL, 10);
		else if (c == 'o')
			only = optarg;
		else if (c == 'm')
			mix = strcmp(optarg, "mix") == 0;
		else if (c == 'f')
			hash_cfg.fields = (uint8_t)strtoul(optarg, NULL, 0);
		else if (c == 'a')
			hash_cfg.alt_fields = (uint8_t)strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	if (hash_cfg.fields == 0 || hash_cfg.fields > TIDE_HASH_ALL ||
	    hash_cfg.alt_fields > TIDE_HASH_ALL) {
		fprintf(stderr, "bench: hash fields are TIDE_HASH_* bits, 0x1..0xf\n");
		return 2;
	}
	n -= n % BENCH_BURST;
	pool = aligned_alloc(64, sizeof(*pool) * BENCH_POOL);
	if (!pool)
		return 1;
	build();
	if (only) {
		fill(mix == 1);
		sink = strcmp(only, "baseline") == 0 ? run_baseline(n) : run_pipeline(n);
		printf("%s: %llu packets\n", only, (unsigned long long)n);
		return 0;
	}
	printf("tide-director packet path, one core, 64 proxies, hash fields 0x%x (alt 0x%x), "
	       "%llu packets per measurement\n",
	       hash_cfg.fields, hash_cfg.alt_fields, (unsigned long long)n);
	printf("%-9s %12s %12s %12s %9s\n", "mix", "rx->tx ns", "director ns", "added ns",
	       "forwarded");
	for (int m = 0; m < 2; m++) {
		double best_base = 1e18, best_pipe = 1e18;
		uint64_t fwd = 0;

		if (mix != -1 && mix != m)
			continue;
		fill(m);
		run_pipeline(BENCH_POOL * 4); /* warm caches and the table */
		for (int rep = 0; rep < 5; rep++) {
			double t0 = now_ns(), t1, t2;

			sink = run_baseline(n);
			t1 = now_ns();
			fwd = run_pipeline(n);
			t2 = now_ns();
			if (t1 - t0 < best_base)
				best_base = t1 - t0;
			if (t2 - t1 < best_pipe)
				best_pipe = t2 - t1;
		}
		printf("%-9s %12.2f %12.2f %12.2f %8.1f%%\n", m ? "mix" : "ipv4-tcp",
		       best_base / (double)n, best_pipe / (double)n,
		       (best_pipe - best_base) / (double)n, 100.0 * (double)fwd / (double)n);
	}
	tide_fwd_set_free(set);
	free(pool);
	return 0;
}
