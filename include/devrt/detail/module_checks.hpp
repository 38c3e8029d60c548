// SPDX-License-Identifier: Apache-2.0
// Moved to <devrt/backend/detail/module_checks.hpp>: this forwarding header keeps old includes building for the release
// after 0.1.0 and goes in the one after that (docs/changelog.md). Define DEVRT_WARN_MOVED_HEADERS to have each old
// include named.
#ifdef DEVRT_WARN_MOVED_HEADERS
#pragma GCC warning "<devrt/detail/module_checks.hpp> moved to <devrt/backend/detail/module_checks.hpp>"
#endif
#include <devrt/backend/detail/module_checks.hpp>
