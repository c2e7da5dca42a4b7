/* SPDX-License-Identifier: MIT */
/*
 * systemd's service notification protocol (sd_notify(3)) without libsystemd: one datagram of
 * newline-separated VAR=value assignments to the AF_UNIX socket named by $NOTIFY_SOCKET (a path,
 * or an abstract name when it starts with '@'). tide-director and tide-redirect run as
 * Type=notify units: READY=1 once they serve, RELOADING=1 / READY=1 around a reload, STOPPING=1
 * when they stop, STATUS= for `systemctl status`. Outside systemd (no $NOTIFY_SOCKET) every call
 * does nothing and returns 0, so the daemons call these unconditionally. Compiled file:
 * tide_sd_notify.c (linked by tide-director, tide-redirect and the unit tests).
 */
#ifndef TIDE_SD_NOTIFY_H
#define TIDE_SD_NOTIFY_H

/* The environment variable systemd sets for Type=notify services. */
#define TIDE_SD_NOTIFY_ENV "NOTIFY_SOCKET"
/* Longest message sent, bytes: STATUS lines are short; systemd reads up to its pipe buffer. */
#define TIDE_SD_NOTIFY_MAX 4096u

/*
 * Sends `state` (e.g. "READY=1\nSTATUS=forwarding") to $NOTIFY_SOCKET. Returns 0 when sent or when
 * $NOTIFY_SOCKET is unset or empty; -EAFNOSUPPORT for a value that is neither a path nor '@'name
 * (systemd's vsock: form is not supported), -ENAMETOOLONG when it does not fit a sockaddr_un,
 * -EMSGSIZE for a message over TIDE_SD_NOTIFY_MAX, or the -errno of socket()/sendto().
 */
int tide_sd_notify(const char *state);

/* The same with a printf format. */
int tide_sd_notifyf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * "RELOADING=1" with "MONOTONIC_USEC=" (CLOCK_MONOTONIC now, microseconds), as the notify-reload
 * protocol wants, plus "STATUS=<status>" when `status` is not NULL. Follow with READY=1.
 */
int tide_sd_notify_reloading(const char *status);

#endif /* TIDE_SD_NOTIFY_H */
