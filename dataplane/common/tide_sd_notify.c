/* SPDX-License-Identifier: MIT */
#include "tide_sd_notify.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int tide_sd_notify(const char *state)
{
	const char *name = getenv(TIDE_SD_NOTIFY_ENV);
	struct sockaddr_un addr;
	socklen_t addr_len;
	size_t name_len, len = strlen(state);
	ssize_t sent;
	int fd, rc = 0;

	if (!name || !name[0])
		return 0;
	if (name[0] != '/' && name[0] != '@')
		return -EAFNOSUPPORT;
	name_len = strlen(name);
	if (name_len >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	if (len > TIDE_SD_NOTIFY_MAX)
		return -EMSGSIZE;
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	memcpy(addr.sun_path, name, name_len);
	/* An abstract name is the bytes after a leading NUL, with no terminator counted. */
	if (name[0] == '@')
		addr.sun_path[0] = '\0';
	addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + name_len +
			       (name[0] == '/' ? 1 : 0));

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	do
		sent = sendto(fd, state, len, MSG_NOSIGNAL, (struct sockaddr *)&addr, addr_len);
	while (sent < 0 && errno == EINTR);
	if (sent < 0)
		rc = -errno;
	else if ((size_t)sent != len)
		rc = -EMSGSIZE;
	close(fd);
	return rc;
}

int tide_sd_notifyf(const char *fmt, ...)
{
	char buf[TIDE_SD_NOTIFY_MAX + 1];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n > TIDE_SD_NOTIFY_MAX)
		return -EMSGSIZE;
	return tide_sd_notify(buf);
}

int tide_sd_notify_reloading(const char *status)
{
	struct timespec now;
	unsigned long long usec;

	clock_gettime(CLOCK_MONOTONIC, &now);
	usec = (unsigned long long)now.tv_sec * 1000000ull +
	       (unsigned long long)now.tv_nsec / 1000u;
	if (status)
		return tide_sd_notifyf("RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=%s", usec, status);
	return tide_sd_notifyf("RELOADING=1\nMONOTONIC_USEC=%llu", usec);
}
