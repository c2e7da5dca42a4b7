/* SPDX-License-Identifier: MIT */
/*
 * tide_sd_notify.c against a datagram socket bound where $NOTIFY_SOCKET says, as systemd binds
 * its own: a path socket and an abstract one ('@'), the exact bytes of each message, nothing sent
 * without $NOTIFY_SOCKET, and the errors for values systemd never sets.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "service_tests.h"
#include "tide_sd_notify.h"

/* A bound datagram socket for `name` (a path, or '@' + abstract name); -1 on failure. */
static int bind_notify_socket(const char *name)
{
	struct sockaddr_un addr;
	socklen_t len;
	struct timeval tv = {1, 0}; /* a message that never comes fails the test in 1 s */
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	memcpy(addr.sun_path, name, strlen(name));
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name));
	if (name[0] == '@')
		addr.sun_path[0] = '\0';
	else
		len++;
	if (bind(fd, (struct sockaddr *)&addr, len) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The next datagram as a string ("" when none came). */
static const char *receive(int fd)
{
	static char buf[TIDE_SD_NOTIFY_MAX + 1];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* Nothing waiting on the socket. */
static int nothing_waiting(int fd)
{
	char c;

	return recv(fd, &c, 1, MSG_DONTWAIT) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

static void check_one_socket(const char *name)
{
	struct timespec before, after;
	unsigned long long usec = 0, lo, hi;
	const char *got;
	int fd = bind_notify_socket(name), rc;

	CHECK(fd >= 0, "cannot bind %s: %s", name, strerror(errno));
	if (fd < 0)
		return;
	setenv(TIDE_SD_NOTIFY_ENV, name, 1);

	rc = tide_sd_notify("READY=1\nSTATUS=forwarding on 1 port(s)");
	CHECK(rc == 0, "%s: tide_sd_notify returned %d", name, rc);
	got = receive(fd);
	CHECK(strcmp(got, "READY=1\nSTATUS=forwarding on 1 port(s)") == 0, "%s: got \"%s\"", name,
	      got);

	rc = tide_sd_notifyf("STATUS=%s %u", "generation", 7u);
	CHECK(rc == 0, "%s: tide_sd_notifyf returned %d", name, rc);
	got = receive(fd);
	CHECK(strcmp(got, "STATUS=generation 7") == 0, "%s: got \"%s\"", name, got);

	/* MONOTONIC_USEC is CLOCK_MONOTONIC at the call, in microseconds. */
	clock_gettime(CLOCK_MONOTONIC, &before);
	rc = tide_sd_notify_reloading("reloading");
	clock_gettime(CLOCK_MONOTONIC, &after);
	CHECK(rc == 0, "%s: tide_sd_notify_reloading returned %d", name, rc);
	got = receive(fd);
	lo = (unsigned long long)before.tv_sec * 1000000ull +
	     (unsigned long long)before.tv_nsec / 1000;
	hi = (unsigned long long)after.tv_sec * 1000000ull +
	     (unsigned long long)after.tv_nsec / 1000;
	CHECK(sscanf(got, "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading", &usec) == 1 &&
		      strstr(got, "\nSTATUS=reloading") && usec >= lo && usec <= hi,
	      "%s: got \"%s\", want MONOTONIC_USEC in %llu..%llu", name, got, lo, hi);
	rc = tide_sd_notify_reloading(NULL);
	got = receive(fd);
	CHECK(rc == 0 && strncmp(got, "RELOADING=1\nMONOTONIC_USEC=", 27) == 0 &&
		      !strstr(got, "STATUS"),
	      "%s: without a status: %d \"%s\"", name, rc, got);

	/* Outside systemd nothing is sent, and that is not an error. */
	unsetenv(TIDE_SD_NOTIFY_ENV);
	CHECK(tide_sd_notify("READY=1") == 0, "unset NOTIFY_SOCKET must return 0");
	setenv(TIDE_SD_NOTIFY_ENV, "", 1);
	CHECK(tide_sd_notify("READY=1") == 0, "empty NOTIFY_SOCKET must return 0");
	CHECK(nothing_waiting(fd), "%s: something was sent without NOTIFY_SOCKET", name);
	unsetenv(TIDE_SD_NOTIFY_ENV);
	close(fd);
	if (name[0] == '/')
		unlink(name);
}

void test_sd_notify(void)
{
	char dir[] = "/tmp/tide-sd-notify-XXXXXX", path[64], abstract[64], long_name[200];
	char big[TIDE_SD_NOTIFY_MAX + 2];

	check_current = "sd_notify";
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/notify", dir);
	snprintf(abstract, sizeof(abstract), "@tide-sd-notify-test-%d", (int)getpid());
	check_one_socket(path);
	check_one_socket(abstract);

	/* Values systemd never sets, and a message over the limit. */
	setenv(TIDE_SD_NOTIFY_ENV, "vsock:2:1234", 1);
	CHECK(tide_sd_notify("READY=1") == -EAFNOSUPPORT, "vsock: must be -EAFNOSUPPORT");
	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[0] = '/';
	long_name[sizeof(long_name) - 1] = '\0';
	setenv(TIDE_SD_NOTIFY_ENV, long_name, 1);
	CHECK(tide_sd_notify("READY=1") == -ENAMETOOLONG, "a 199-byte path must be -ENAMETOOLONG");
	setenv(TIDE_SD_NOTIFY_ENV, path, 1);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK(tide_sd_notify(big) == -EMSGSIZE, "a message over the limit must be -EMSGSIZE");
	/* Nobody listening: the socket file is gone, sendto's error comes back. */
	CHECK(tide_sd_notify("READY=1") == -ENOENT, "no listener must be -ENOENT");
	unsetenv(TIDE_SD_NOTIFY_ENV);
	rmdir(dir);
}
