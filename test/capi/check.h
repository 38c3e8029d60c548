/* SPDX-License-Identifier: Apache-2.0 */
/* The C tests' one assertion: counts checks and failures, prints the failing line and the last
 * error, and carries on. Each test's main() returns check_report(). */
#ifndef DEVRT_TEST_CAPI_CHECK_H
#define DEVRT_TEST_CAPI_CHECK_H

#include <devrt/devrt.h>

#include <stdio.h>

static int failures = 0;
static int checks = 0;

#define CHECK(cond)                                                                                                    \
  do {                                                                                                                 \
    ++checks;                                                                                                          \
    if (!(cond)) {                                                                                                     \
      ++failures;                                                                                                      \
      fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n", __FILE__, __LINE__, #cond, devrt_last_error());     \
    }                                                                                                                  \
  } while (0)
#define CHECK_OK(call) CHECK((call) == DEVRT_STATUS_OK)

static int check_report(void) {
  printf("%d checks, %d failed\n", checks, failures);
  return failures == 0 ? 0 : 1;
}

#endif /* DEVRT_TEST_CAPI_CHECK_H */
