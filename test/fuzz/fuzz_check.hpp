// SPDX-License-Identifier: Apache-2.0
// What a fuzz target does when an invariant breaks: say which on stderr, then crash for libFuzzer.
#ifndef DEVRT_TEST_FUZZ_FUZZ_CHECK_HPP
#define DEVRT_TEST_FUZZ_FUZZ_CHECK_HPP

#include <cstdio>

[[noreturn]] inline void broken(const char* invariant) {
  std::fprintf(stderr, "invariant broken: %s\n", invariant);
  __builtin_trap();
}

#endif // DEVRT_TEST_FUZZ_FUZZ_CHECK_HPP
