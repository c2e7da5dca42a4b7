/* SPDX-License-Identifier: MIT */
/* Unit tests of the services' process side, called from test_main.c: no DPDK, no packets. */
#ifndef TIDE_TEST_SERVICE_TESTS_H
#define TIDE_TEST_SERVICE_TESTS_H

/* common/tide_sd_notify.c against a datagram socket standing in for systemd (test_sd_notify.c). */
void test_sd_notify(void);

/* director/reload_plan.c: what a SIGHUP applies, defers and refuses (test_reload_plan.c). */
void test_reload_plan(void);

#endif /* TIDE_TEST_SERVICE_TESTS_H */
