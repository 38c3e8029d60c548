// SPDX-License-Identifier: Apache-2.0
// The CPU backend's type, public so that code which knows its backend when it is compiled can use
// it through the compile-time path (devrt/backend/direct.hpp): devrt::direct::Buffer<devrt::cpu::CpuBackend>.
// The run-time path reaches the same type through the registry.
#ifndef DEVRT_BACKEND_CPU_HPP
#define DEVRT_BACKEND_CPU_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <devrt/backend/backend.hpp>
#include <devrt/backend/detail/host_copy.hpp>
#include <devrt/config.hpp>

namespace devrt::cpu {

// Limits of a CPU launch. A block is a loop inside the kernel (see devrt/backend/cpu_kernel.h), so these
// bound what one kernel call iterates over, mirroring the common GPU limits.
inline constexpr std::int64_t kMaxThreadsPerBlock = 1024;
inline constexpr Dim3 kMaxBlockDim{1024, 1024, 64};
inline constexpr std::size_t kMaxSharedMemoryPerBlock = std::size_t{1} << 20;

// The CPU backend's module operations (cpu_module.cpp), reached through g_module_ops so that a
// bare-metal program links them only when it registers a kernel table: there, g_module_ops is null
// until register_kernel_table sets it. Hosted builds always have them (shared-object modules).
struct ModuleOps {
  Result<void*> (*load)(ModuleFormat format, std::span<const std::byte> data, BuildLog& log) noexcept;
  Status (*unload)(void* module) noexcept;
  Result<void*> (*function)(void* module, const char* name) noexcept;
  Status (*launch)(void* function, const LaunchDesc& desc) noexcept;
};
extern const ModuleOps* g_module_ops;

// Stateless: every member is thread-safe. Streams and events are tokens, since every operation
// has finished when it returns.
class CpuBackend {
public:
  static constexpr std::string_view name = "cpu";
  static constexpr DeviceKind kind = static_cast<DeviceKind>(DEVRT_KIND_CPU); // declared in meson.build
  static constexpr bool host_accessible = true;
  static constexpr bool synchronous = true;

  Status availability() noexcept { return Status(); }
  Result<std::int32_t> device_count() noexcept { return 1; }
  Result<AttributeValue> get_attribute(const BackendDevice& device, Attribute attribute) noexcept;
#if !DEVRT_BARE_METAL
  // kind "llvm": keys, mtriple, mcpu, mattr, model, num-cores, simd-32bit-lanes. Bare-metal
  // builds leave target detection out: firmware describes its target when it is compiled.
  Result<Target> detect_target(const BackendDevice& device) noexcept;
#endif

  Result<void*> allocate(const BackendDevice& device, std::size_t nbytes, std::size_t alignment) noexcept;
  Status free(const BackendDevice& device, void* ptr) noexcept;
  Status copy(const CopyDesc& desc) noexcept {
    detail::copy_host(static_cast<std::byte*>(desc.dst) + desc.dst_offset,
                      static_cast<const std::byte*>(desc.src) + desc.src_offset, desc.nbytes);
    return Status();
  }

  // Modules: host_table (a table registered with register_kernel_table) and, on Linux,
  // shared_object (dlopen of the bytes through a memfd). Launches run every block in turn on the
  // calling thread and have finished when launch() returns (streams are synchronous here).
  static constexpr ModuleFormat module_formats[] = {ModuleFormat::host_table, ModuleFormat::shared_object};
  static constexpr bool checked_launch_arguments = true;
  Result<void*> module_load(const BackendDevice& device, ModuleFormat format, std::span<const std::byte> data,
                            const char* options, BuildLog& log) noexcept;
  Status module_unload(const BackendDevice&, void* module) noexcept { return g_module_ops->unload(module); }
  Result<void*> module_function(const BackendDevice&, void* module, const char* name) noexcept {
    return g_module_ops->function(module, name);
  }
  Status launch(const BackendDevice&, void* function, const LaunchDesc& desc) noexcept {
    return g_module_ops->launch(function, desc);
  }

  Result<void*> stream_create(const BackendDevice& device) noexcept;
  Status stream_destroy(const BackendDevice&, void*) noexcept { return Status(); }
  Status stream_synchronize(const BackendDevice&, void*) noexcept { return Status(); }

  Result<void*> event_create(const BackendDevice& device) noexcept;
#if DEVRT_BARE_METAL
  Status event_destroy(const BackendDevice&, void*) noexcept { return Status(); }
  Status event_record(const BackendDevice&, void*, void*) noexcept { return Status(); }
#else
  // Timed events read the host's monotonic clock at record(): every operation has finished when
  // its call returns, so that is the time the stream reaches the event. Their handles are
  // allocations (even); untimed events stay tokens (odd). Bare-metal builds have no clock.
  Result<void*> event_create_timed(const BackendDevice& device) noexcept;
  Result<std::int64_t> event_elapsed(const BackendDevice& device, void* start, void* end) noexcept;
  Status event_destroy(const BackendDevice& device, void* event) noexcept;
  Status event_record(const BackendDevice& device, void* event, void* stream) noexcept;
#endif
  Status event_synchronize(const BackendDevice&, void*) noexcept { return Status(); }
  Result<bool> event_query(const BackendDevice&, void*) noexcept { return true; }
  Status stream_wait_event(const BackendDevice&, void*, void*) noexcept { return Status(); }
};

static_assert(Backend<CpuBackend> && BackendEvents<CpuBackend> && HostAccessibleMemory<CpuBackend> &&
              BackendModules<CpuBackend>);
static_assert(BackendTargetDetection<CpuBackend> == !DEVRT_BARE_METAL);
static_assert(BackendEventTiming<CpuBackend> == !DEVRT_BARE_METAL);

} // namespace devrt::cpu

#endif // DEVRT_BACKEND_CPU_HPP
