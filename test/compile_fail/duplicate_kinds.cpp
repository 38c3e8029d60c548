// SPDX-License-Identifier: Apache-2.0
// The compiled-in backends' device kinds must be distinct: the generated list of built-in
// backends static_asserts it as below. Here null's kind appears twice (a copy that kept it).
#include <devrt/backend/backend.hpp>
#include <devrt/config.hpp>

#ifdef DEVRT_EXPECT_OK
static_assert(devrt::detail::device_kinds_distinct({DEVRT_KIND_CPU, DEVRT_KIND_OPENCL, DEVRT_KIND_NULL}),
              "two compiled-in backends share a device kind");
#else
static_assert(devrt::detail::device_kinds_distinct({DEVRT_KIND_CPU, DEVRT_KIND_NULL, DEVRT_KIND_NULL}),
              "two compiled-in backends share a device kind");
#endif
