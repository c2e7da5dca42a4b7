/* SPDX-License-Identifier: MIT */
#include "tide_daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

void tide_log(const char *who, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", who);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int tide_netns_enter(const char *name)
{
	char path[sizeof(TIDE_NETNS_DIR "/") + NAME_MAX];
	int fd, rc = 0;

	if (name[0] == '\0' || strlen(name) > NAME_MAX || strchr(name, '/') != NULL ||
	    strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EINVAL;
	snprintf(path, sizeof(path), TIDE_NETNS_DIR "/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (setns(fd, CLONE_NEWNET) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

int tide_bpffs_mount(const char *dir, bool *mounted, bool *made_dir)
{
	struct statfs sfs;

	*mounted = false;
	*made_dir = mkdir(dir, 0700) == 0;
	if (!*made_dir && errno != EEXIST)
		return -errno;
	if (statfs(dir, &sfs) < 0)
		return -errno;
	if (sfs.f_type == BPF_FS_MAGIC)
		return 0;
	if (mount("bpf", dir, "bpf", 0, "mode=0700") < 0)
		return -errno;
	*mounted = true;
	return 0;
}
