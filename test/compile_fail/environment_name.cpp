// SPDX-License-Identifier: Apache-2.0
// A reader of support/environment.hpp takes only a name the table lists with the reader's kind:
// here a variable nobody listed, and one listed as a number read as a boolean.
#include "support/environment.hpp"

#ifdef DEVRT_EXPECT_OK
std::uint64_t limit() { return devrt::detail::read_number_env("DEVRT_BUFFER_CACHE_LIMIT", 0); }
bool cache() { return devrt::detail::read_boolean_env("DEVRT_BUFFER_CACHE", true); }
#else
std::uint64_t limit() { return devrt::detail::read_number_env("DEVRT_BUFFER_CACHE_LIMITS", 0); }
bool cache() { return devrt::detail::read_boolean_env("DEVRT_BUFFER_CACHE_LIMIT", true); }
#endif
