// SPDX-License-Identifier: Apache-2.0
// The CUDA backend (driver API): every device libcuda.so.1 reports, opened at first use; and the
// `cuda_host` kind, page-locked host memory the devices copy from and to asynchronously.
//
// Each device runs in its primary context, retained on the device's first use and made current
// on the calling thread by every call that needs it (so devrt coexists with code using the CUDA
// runtime). Memory is CUdeviceptr (device addresses: offsets are plain arithmetic); streams are
// non-blocking CUstreams (null: the legacy default stream); events are timing-free CUevents;
// modules are PTX, cubin or fatbin images checked against the device before the driver sees them.
// Every member is thread-safe.
#ifndef DEVRT_SRC_BACKENDS_CUDA_CUDA_BACKEND_HPP
#define DEVRT_SRC_BACKENDS_CUDA_CUDA_BACKEND_HPP

#include <devrt/backend/backend.hpp>
#include <devrt/config.hpp>

#include "backend_support/gpu_driver.hpp"

namespace devrt::cuda {

struct CudaDriver; // cuda_backend.cpp

// open_device/close_device (the primary context retained while open, released at close),
// allocate, free, streams, events and device_synchronize (cuCtxSynchronize on the primary
// context) come from GpuDriverOperations; stream_synchronize is CUDA's own.
class CudaBackend : public detail::GpuDriverOperations<CudaDriver> {
public:
  static constexpr std::string_view name = "cuda";
  static constexpr DeviceKind kind = static_cast<DeviceKind>(DEVRT_KIND_CUDA); // declared in meson.build
  static constexpr bool addressable = true;

  // availability(): unavailable, with the root cause: no libcuda.so.1, the toolkit's stub library
  // (no driver), cuInit failing (no device, driver/kernel-module mismatch), or no device.
  Status availability() noexcept;
  Result<std::int32_t> device_count() noexcept;
  Result<AttributeValue> get_attribute(const BackendDevice& device, Attribute attribute) noexcept;
  // kind "cuda": arch sm_XY, max_shared_memory_per_block, max_threads_per_block, thread_warp_size,
  // registers_per_block, l2_cache_size_bytes, multi_processor_count.
  Result<Target> detect_target(const BackendDevice& device) noexcept;

  // copy (GpuDriverOperations): all directions are queued on the stream (cuMemcpy*Async).
  // Pageable host memory makes the driver stage the copy before returning; cuda_host memory is
  // truly asynchronous and must stay untouched until the stream is synchronized. Device to device
  // across GPUs is a peer copy.

  // A created stream skips the context query when this thread made the context current last.
  Status stream_synchronize(const BackendDevice& device, void* stream) noexcept;

  // module_load, module_unload, module_function (GpuDriverOperations): ptx, cubin and fatbin (no
  // options: compile with devrt::nvrtc to pass compiler options); the JIT's error and info logs
  // go to `log`.
  // launch: dynamic shared memory above 48 KiB raises the function's
  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (up to the device's opt-in limit). With a
  // 12.4+ driver the argument count and sizes are checked against the kernel's parameters.
  static constexpr ModuleFormat module_formats[] = {ModuleFormat::ptx, ModuleFormat::cubin, ModuleFormat::fatbin};
  static constexpr bool checked_launch_arguments = true;
  Status launch(const BackendDevice& device, void* function, const LaunchDesc& desc) noexcept;
  // Graphs: the run issued through launch and copy to a stream of its own under
  // cuStreamBeginCapture (thread-local mode), instantiated (cuGraphInstantiateWithFlags) and
  // replayed with cuGraphLaunch; unsupported on drivers before CUDA 11.4.
  Result<void*> graph_create(const BackendDevice& device, void* stream,
                             std::span<const devrt_graph_node> nodes) noexcept;
  Status graph_launch(const BackendDevice& device, void* graph, void* stream) noexcept;
  Status graph_destroy(const BackendDevice& device, void* graph) noexcept;
};

// Page-locked (pinned) host memory, portable to every CUDA device: one device, cuda_host:0,
// present whenever CUDA is. Allocations are host addresses; streams are synchronous.
class CudaHostBackend {
public:
  static constexpr std::string_view name = "cuda_host";
  static constexpr DeviceKind kind = static_cast<DeviceKind>(DEVRT_KIND_CUDA_HOST); // declared in meson.build
  static constexpr bool host_accessible = true;

  Status availability() noexcept;
  Result<std::int32_t> device_count() noexcept;
  // Its device holds CUDA device 0's primary context retained (opened as the cuda kind's are).
  Status open_device(BackendDevice& device) noexcept;
  Status close_device(BackendDevice& device) noexcept;
  Result<AttributeValue> get_attribute(const BackendDevice& device, Attribute attribute) noexcept;
  Result<void*> allocate(const BackendDevice& device, std::size_t nbytes, std::size_t alignment) noexcept;
  Status free(const BackendDevice& device, void* ptr) noexcept;
  Status copy(const CopyDesc& desc) noexcept;

  Result<void*> stream_create(const BackendDevice& device) noexcept;
  Status stream_destroy(const BackendDevice&, void*) noexcept { return Status(); }
  Status stream_synchronize(const BackendDevice&, void*) noexcept { return Status(); }
};

static_assert(Backend<CudaBackend> && BackendDeviceLifecycle<CudaBackend> && BackendEvents<CudaBackend> &&
              BackendTargetDetection<CudaBackend> && BackendModules<CudaBackend> && AddressableMemory<CudaBackend> &&
              BackendGraphs<CudaBackend>);
static_assert(Backend<CudaHostBackend> && BackendDeviceLifecycle<CudaHostBackend> &&
              HostAccessibleMemory<CudaHostBackend>);

} // namespace devrt::cuda

#endif // DEVRT_SRC_BACKENDS_CUDA_CUDA_BACKEND_HPP
