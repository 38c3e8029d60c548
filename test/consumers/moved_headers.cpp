// SPDX-License-Identifier: Apache-2.0
// Every path the backend layer's headers had in 0.1.0, included by its old name, with one name
// from each used: the forwarding headers must keep such a program building, silently. Compiled
// by compile_fail/run.sh with -Werror: with DEVRT_EXPECT_OK it must compile; without it,
// DEVRT_WARN_MOVED_HEADERS is defined and each old include must be named with its new path.
#if !defined(DEVRT_EXPECT_OK)
#define DEVRT_WARN_MOVED_HEADERS
#endif

#include <devrt/attribute_value.hpp>
#include <devrt/backend.hpp>
#include <devrt/backend_abi.h>
#include <devrt/backends/cpu.hpp>
#if __has_include(<devrt/backend/hexagon.hpp>) // installed by Hexagon builds only
#include <devrt/backends/hexagon.hpp>
#endif
#include <devrt/cpu_kernel.h>
#include <devrt/cpu_kernels.hpp>
#include <devrt/detail/host_copy.hpp>
#include <devrt/detail/memory_checks.hpp>
#include <devrt/detail/module_checks.hpp>
#include <devrt/detail/mutex.hpp>
#include <devrt/direct.hpp>
#include <devrt/module_image.hpp>
#include <devrt/registry.hpp>
#include <devrt/workspace_pool.hpp>

static_assert(devrt::Backend<devrt::cpu::CpuBackend>);
static_assert(DEVRT_BACKEND_ABI_VERSION >= 3u);
#if __has_include(<devrt/backend/hexagon.hpp>)
static_assert(devrt::hexagon::kVtcmBytes > 0);
#endif
static_assert(devrt::detail::kMinStreamingCopy > 0);

int moved_headers_still_name(devrt_cpu_kernel_entry entry) {
  devrt::AttributeValue value;
  devrt::detail::Mutex mutex;
  devrt::ModuleImageInfo info;
  devrt::WorkspacePool* pool = nullptr;
  auto* registry = &devrt::Registry::global;
  auto* register_table = &devrt::cpu::register_kernel_table;
  auto* check = &devrt::detail::check_module_format;
  devrt::direct::Buffer<devrt::cpu::CpuBackend>* buffer = nullptr;
  bool aligned = devrt::detail::alignment_ok(64);
  (void)value, (void)mutex, (void)info, (void)pool, (void)registry, (void)register_table, (void)check, (void)buffer;
  return entry.name != nullptr && aligned ? 0 : 1;
}
