// SPDX-License-Identifier: Apache-2.0
// The Hexagon backend, as TVM's Hexagon device API: code running on the DSP manages the DSP's
// memory, in DDR and in VTCM (the vector unit's tightly coupled memory), copies between them, and
// launches kernels from kernel tables (HVX kernels included) on the DSP itself. Built only for the
// DSP (cross/hexagon.ini); a host build leaves it out with its reason.
//
// VTCM: on hardware, a DSP program reserves VTCM through the SDK's compute-resource API
// (HAP_compute_res_acquire) and gets an address range. Without the SDK this build stands in a fixed,
// 2 KiB-aligned arena of kVtcmBytes in the image and says so in the device name; the allocator
// over it is the same either way.
#ifndef DEVRT_BACKEND_HEXAGON_HPP
#define DEVRT_BACKEND_HEXAGON_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <devrt/backend/backend.hpp>
#include <devrt/backend/cpu.hpp>
#include <devrt/backend/detail/host_copy.hpp>
#include <devrt/backend/direct.hpp>
#include <devrt/config.hpp>

// The Hexagon SDK's QTimer count (HAP_perf.h): 19.2 MHz, from the DSP's always-on timer.
extern "C" unsigned long long HAP_perf_get_qtimer_count(void);

namespace devrt::hexagon {

// The VTCM this build manages: v66 has 256 KiB.
inline constexpr std::size_t kVtcmBytes = std::size_t{256} << 10;
// VTCM is handed out in granules of this size, aligned to it.
inline constexpr std::size_t kVtcmGranule = 2048;

// The VTCM arena in figures. A plain value.
struct VtcmStats {
  std::size_t capacity_bytes = 0;
  std::size_t used_bytes = 0;
  std::size_t largest_free_bytes = 0;
};

// One device, the DSP the program runs on. Its memory is DSP addresses, so the program reads it
// directly (host_accessible) and every operation has finished when it returns (synchronous).
// Thread-safe.
class HexagonBackend {
public:
  static constexpr std::string_view name = "hexagon";
  static constexpr DeviceKind kind = static_cast<DeviceKind>(DEVRT_KIND_HEXAGON); // declared in meson.build
  static constexpr bool host_accessible = true;
  static constexpr bool synchronous = true;

  Status availability() noexcept { return Status(); }
  Result<std::int32_t> device_count() noexcept { return 1; }
  // max_shared_memory_per_block (the VTCM arena), multi_processor_count (hardware threads),
  // warp_size (HVX vector bytes, 0 without HVX), max_threads_per_block and max_thread_dimensions
  // (kernel-table launch limits), buffer_offset_alignment.
  Result<AttributeValue> get_attribute(const BackendDevice& device, Attribute attribute) noexcept;
  // device_name and compute_version ("v66"), static text fixed when the image is compiled (no
  // std::string in a DSP image); empty for every other attribute.
  static std::string_view attribute_text(Attribute attribute) noexcept;
  // The detected target as static JSON: kind "hexagon", mtriple hexagon, mcpu hexagonv<arch>,
  // mattr +hvxv<arch>,+hvx-length<bytes>b when compiled with HVX, num-cores, vtcm-capacity (TVM's
  // Hexagon target keys).
  static std::string_view target_json() noexcept;

  // DDR: the DSP heap, allocated as the CPU backend allocates host memory.
  Result<void*> allocate(const BackendDevice& device, std::size_t nbytes, std::size_t alignment) noexcept {
    return host_.allocate(device, nbytes, alignment);
  }
  // VTCM: granules of the arena, aligned to kVtcmGranule or `alignment` if larger.
  // out_of_memory when no run of free granules is large enough.
  Result<void*> allocate_vtcm(std::int32_t device, std::size_t nbytes, std::size_t alignment) noexcept;
  // Memory scopes (devrt/device.hpp): global.vtcm, kVtcmBytes; every other is unsupported.
  // scope_allocate(global.vtcm) is allocate_vtcm, so that Buffer::allocate_scoped and Tensor::empty
  // reach VTCM as every backend's scopes are reached.
  Result<ScopeLimits> scope_limits(const BackendDevice& device, MemoryScope scope) noexcept;
  Result<void*> scope_allocate(const BackendDevice& device, MemoryScope scope, std::size_t nbytes,
                               std::size_t alignment) noexcept;
  // Either scope: the address says which.
  Status free(const BackendDevice& device, void* ptr) noexcept;
  Status copy(const CopyDesc& desc) noexcept {
    detail::copy_host(static_cast<std::byte*>(desc.dst) + desc.dst_offset,
                      static_cast<const std::byte*>(desc.src) + desc.src_offset, desc.nbytes);
    return Status();
  }
  // The scope of an address from this backend (global, the DDR heap, for any address outside the
  // VTCM arena).
  static MemoryScope scope_of(const void* ptr) noexcept;
  VtcmStats vtcm_stats() noexcept;

  // Kernel tables (devrt/backend/cpu_kernels.hpp): the DSP runs them as the CPU backend runs them on a
  // host, so a table registered with cpu::register_kernel_table loads on hexagon:0 as host_table.
  // HVX kernels are ordinary entries compiled with -mhvx.
  static constexpr ModuleFormat module_formats[] = {ModuleFormat::host_table};
  static constexpr bool checked_launch_arguments = true;
  Result<void*> module_load(const BackendDevice& device, ModuleFormat format, std::span<const std::byte> data,
                            const char* options, BuildLog& log) noexcept {
    return host_.module_load(device, format, data, options, log);
  }
  Status module_unload(const BackendDevice& device, void* module) noexcept {
    return host_.module_unload(device, module);
  }
  Result<void*> module_function(const BackendDevice& device, void* module, const char* function) noexcept {
    return host_.module_function(device, module, function);
  }
  Status launch(const BackendDevice& device, void* function, const LaunchDesc& desc) noexcept {
    return host_.launch(device, function, desc);
  }

  Result<void*> stream_create(const BackendDevice& device) noexcept { return host_.stream_create(device); }
  Status stream_destroy(const BackendDevice&, void*) noexcept { return Status(); }
  Status stream_synchronize(const BackendDevice&, void*) noexcept { return Status(); }

  Result<void*> event_create(const BackendDevice& device) noexcept { return host_.event_create(device); }
  // Timed events read the DSP's QTimer (the SDK's HAP_perf_get_qtimer_count, 19.2 MHz: 52 ns a
  // tick) at record(); every operation has finished when its call returns. Their handles are
  // allocations (even); untimed events stay the host's tokens (odd).
  Result<void*> event_create_timed(const BackendDevice& device) noexcept;
  Result<std::int64_t> event_elapsed(const BackendDevice& device, void* start, void* end) noexcept;
  Status event_destroy(const BackendDevice& device, void* event) noexcept;
  Status event_record(const BackendDevice& device, void* event, void* stream) noexcept;
  Status event_synchronize(const BackendDevice&, void*) noexcept { return Status(); }
  Result<bool> event_query(const BackendDevice&, void*) noexcept { return true; }
  Status stream_wait_event(const BackendDevice&, void*, void*) noexcept { return Status(); }

private:
  // Stateless: the DSP's own heap, the kernel-table machinery and the stream tokens, which the
  // DSP has as a host CPU has them.
  cpu::CpuBackend host_;
};

static_assert(BackendEventTiming<HexagonBackend>);
static_assert(Backend<HexagonBackend> && BackendEvents<HexagonBackend> && HostAccessibleMemory<HexagonBackend> &&
              BackendModules<HexagonBackend> && StaticTargetJson<HexagonBackend> &&
              StaticAttributeText<HexagonBackend> && BackendScopedMemory<HexagonBackend>);

// An allocation on `device` in `scope` (global: DDR, or global.vtcm), owned by the returned Buffer
// (compile-time path; its span works with every devrt call); other scopes are unsupported. As
// Buffer::allocate_scoped otherwise. Thread-safe.
Result<direct::Buffer<HexagonBackend>> allocate(Device device, std::size_t nbytes, MemoryScope scope,
                                                std::size_t alignment = kDefaultAlignment) noexcept;

} // namespace devrt::hexagon

#endif // DEVRT_BACKEND_HEXAGON_HPP
