// SPDX-License-Identifier: Apache-2.0
// Start-up: the process-wide registry, filled with the built-in backends on first use (or by the
// first DEVRT_REGISTER_BACKEND), then the plugins' autoload.
#include <devrt/backend/backend.hpp>
#include <devrt/backend/registry.hpp>
#include <devrt/config.hpp>
#include <devrt/log.hpp>

#include <atomic>

#include "core/plugins/plugin_loader.hpp"
#include "core/registry/builtin_backends.hpp"
#include <devrt/backend/detail/host_copy.hpp>

#if DEVRT_WITH_CPU
extern "C" const devrt_backend_table devrt_backend_table_cpu;
#endif

namespace devrt {
namespace {

constinit Registry g_registry;

} // namespace

namespace {
// The backends built into libdevrt, in their configured order. Once; thread-safe.
void add_builtin_backends() noexcept;
} // namespace

namespace detail {
// Registers the built-in backends without Registry::add's run-time checks: their tables come from
// make_backend_table (checked against the Backend concept at compile time) and Meson generates
// their list with distinct names and kinds. Keeps firmware from linking the plugin-grade
// validation it never needs.
struct RegistryAccess {
  static void add_builtin(Registry& registry, const devrt_backend_table* table) noexcept {
    LockGuard lock(registry.add_mutex_);
    std::size_t count = registry.count_.load(std::memory_order_relaxed);
    if (count == Registry::kCapacity ||
        registry.by_kind_[table->device_kind].load(std::memory_order_relaxed) != nullptr) {
      DEVRT_LOG(error, "built-in backend '", table->name,
                "' not registered: its kind is taken or the registry is full");
      return;
    }
    registry.entries_[count].store(table, std::memory_order_release);
    registry.by_kind_[table->device_kind].store(table, std::memory_order_release);
    registry.count_.store(count + 1, std::memory_order_release);
  }
};
} // namespace detail

namespace detail {
constinit std::atomic<bool> g_host_copy_direct{false};
} // namespace detail

namespace {
DEVRT_STARTUP_CODE bool add_builtin_tables() noexcept {
  for (std::size_t i = 0; i < detail::kBuiltinBackendCount; ++i) {
    detail::RegistryAccess::add_builtin(g_registry, detail::kBuiltinBackendTables[i]);
  }
  return true;
}

void add_builtin_backends() noexcept {
  static const bool added = add_builtin_tables();
  static_cast<void>(added);
}

DEVRT_STARTUP_CODE bool make_global_registry_ready() noexcept {
  add_builtin_backends();
#if DEVRT_WITH_CPU
  if (g_registry.find(DeviceKind::cpu).table() == &devrt_backend_table_cpu) {
    detail::g_host_copy_direct.store(true, std::memory_order_relaxed);
  }
#endif
  // Plugins: on first use of the registry, never during static initialisation.
  detail::autoload_plugins(g_registry);
  return true;
}
} // namespace

Registry& Registry::global() noexcept {
  static const bool ready = make_global_registry_ready();
  static_cast<void>(ready);
  return g_registry;
}

namespace detail {
BackendRegistrar::BackendRegistrar(const devrt_backend_table* table) noexcept {
  // Straight into the storage, after the built-in ones: Registry::global() would also autoload
  // plugins, which must not happen at static-initialisation time.
  add_builtin_backends();
  Status status = g_registry.add(table);
  if (!status.ok()) DEVRT_LOG(error, "DEVRT_REGISTER_BACKEND: ", status.message());
}
} // namespace detail

} // namespace devrt
