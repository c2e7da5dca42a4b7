/* SPDX-License-Identifier: MIT */
/*
 * tide-redirect tests (root, kernel >= 6.3):
 *   1. packet fixtures through BPF_PROG_TEST_RUN for every decision and drop reason, in a fresh
 *      network namespace (unshare) holding real sockets: established, TIME-WAIT, a listener with
 *      SYN cookies; each checks the verdict, the output bytes and the counters;
 *   2. per-packet cost (informational, never asserted);
 *   3. end to end: two named namespaces joined by a veth; a TUN device on the client side wraps
 *      the client's packets in GUE (like the director); tide-redirect runs on the proxy side;
 *      IPv4 and IPv6 handshakes with a listener on the VIP must complete, the replies going
 *      straight back.
 * Prints "N passed, N failed" last. Everything it creates is removed, on failure too.
 *
 * This file: main and the check/sh helpers. Packet builders: packets.c; the fixtures and the cost
 * figures: fixtures.c; the end-to-end test: e2e.c; what they share: redirect_test.h.
 */
#include <arpa/inet.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "redirect_test.h"

static int passed, failed;

void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("%s: ", ok ? "ok" : "FAIL");
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	if (ok)
		passed++;
	else
		failed++;
}

int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc != 0)
		fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
	return rc;
}

uint32_t ip4(const char *s)
{
	uint32_t a;

	inet_pton(AF_INET, s, &a);
	return a;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

int main(int argc, char **argv)
{
	const char *daemon = NULL;
	int orig_ns;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], "--daemon") == 0)
			daemon = argv[i + 1];
	if (geteuid() != 0) {
		printf("FAIL: the redirect tests need root (network namespaces, BPF)\n");
		printf("0 passed, 1 failed\n");
		return 1;
	}
	libbpf_set_print(libbpf_quiet);
	orig_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

	/* 1 + 2: fixtures and cost in a namespace of our own (gone when we leave it). */
	fixtures();

	if (orig_ns >= 0 && setns(orig_ns, CLONE_NEWNET) == 0) {
		if (daemon)
			e2e(daemon);
		else
			printf("e2e: skipped (no --daemon PATH)\n");
	} else {
		check(false, "return to the original network namespace");
	}
	if (orig_ns >= 0)
		close(orig_ns);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
