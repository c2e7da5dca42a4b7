/* SPDX-License-Identifier: MIT */
/* Unit tests of the header-only packet core kept in their own files, called from test_main.c. */
#ifndef TIDE_TEST_CORE_TESTS_H
#define TIDE_TEST_CORE_TESTS_H

/* The per-table hashing plan against the generic flow hash (test_hash_plan.c). */
void test_hash_plan(void);

#endif /* TIDE_TEST_CORE_TESTS_H */
