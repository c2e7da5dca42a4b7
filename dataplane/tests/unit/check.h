/* SPDX-License-Identifier: MIT */
/* A minimal test harness: CHECK records a failure and goes on; main prints "N passed, N failed". */
#ifndef TIDE_TEST_CHECK_H
#define TIDE_TEST_CHECK_H

#include <stdio.h>

extern int check_failures;
extern const char *check_current;

#define CHECK(cond, ...)                                                                    \
	do {                                                                                \
		if (!(cond)) {                                                              \
			check_failures++;                                                   \
			fprintf(stderr, "  FAIL %s (%s:%d): %s: ", check_current, __FILE__, \
				__LINE__, #cond);                                           \
			fprintf(stderr, __VA_ARGS__);                                       \
			fputc('\n', stderr);                                                \
		}                                                                           \
	} while (0)

#endif
