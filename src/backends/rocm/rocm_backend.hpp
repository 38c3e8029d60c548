// SPDX-License-Identifier: Apache-2.0
// The ROCm backend (HIP runtime): every device libamdhip64 reports, opened at first use.
//
// Each call makes its device current on the calling thread (hipSetDevice when it differs).
// Memory is device addresses (offsets are plain arithmetic); streams are non-blocking hipStreams
// (null: the default stream); events are timing-free hipEvents; modules are AMD GPU code objects
// (hsaco, or clang offload bundles of them) checked against the device's gfx processor before
// hipModuleLoadData sees them. "No device" is found once and cached: hipGetDeviceCount costs
// ~20 us each time it fails. Every member is thread-safe.
#ifndef DEVRT_SRC_BACKENDS_ROCM_ROCM_BACKEND_HPP
#define DEVRT_SRC_BACKENDS_ROCM_ROCM_BACKEND_HPP

#include <devrt/backend/backend.hpp>
#include <devrt/config.hpp>

#include "backend_support/gpu_driver.hpp"

namespace devrt::rocm {

struct RocmDriver; // rocm_backend.cpp

// allocate, free, streams, events and device_synchronize (hipDeviceSynchronize: every stream of
// the device) come from GpuDriverOperations.
class RocmBackend : public detail::GpuDriverOperations<RocmDriver> {
public:
  static constexpr std::string_view name = "rocm";
  static constexpr DeviceKind kind = static_cast<DeviceKind>(DEVRT_KIND_ROCM); // declared in meson.build
  static constexpr bool addressable = true;

  // availability(): unavailable with the root cause: no libamdhip64, or no device
  // (hipErrorNoDevice).
  Status availability() noexcept;
  Result<std::int32_t> device_count() noexcept;
  Result<AttributeValue> get_attribute(const BackendDevice& device, Attribute attribute) noexcept;
  // kind "rocm": mtriple amdgcn-amd-amdhsa-hcc, mcpu gfxNNN, max_shared_memory_per_block,
  // max_threads_per_block, thread_warp_size.
  Result<Target> detect_target(const BackendDevice& device) noexcept;

  // copy (GpuDriverOperations): queued on the stream in every direction (hipMemcpy*Async);
  // across GPUs a peer copy.

  // module_load, module_unload, module_function (GpuDriverOperations): hsaco only, no options.
  // HIP cannot report a kernel's parameters, so launches check extents and shared memory but not
  // argument types.
  static constexpr ModuleFormat module_formats[] = {ModuleFormat::hsaco};
  Status launch(const BackendDevice& device, void* function, const LaunchDesc& desc) noexcept;
};

static_assert(Backend<RocmBackend> && BackendEvents<RocmBackend> && BackendTargetDetection<RocmBackend> &&
              BackendModules<RocmBackend> && AddressableMemory<RocmBackend>);

} // namespace devrt::rocm

#endif // DEVRT_SRC_BACKENDS_ROCM_ROCM_BACKEND_HPP
