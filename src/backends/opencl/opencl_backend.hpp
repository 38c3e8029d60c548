// SPDX-License-Identifier: Apache-2.0
// The OpenCL backend: every device of every platform, libOpenCL.so.1 opened at first use.
//
// Memory is cl_mem handles (offsets applied by the backend); streams are in-order command queues
// (the device's default queue for the null stream); events are markers; modules are programs
// built from OpenCL C or loaded from program binaries; a launch maps grid x block to the global
// size and block to the local size. Every member is thread-safe: OpenCL objects are, except
// kernel arguments, which are set and enqueued under one lock per kernel.
#ifndef DEVRT_SRC_BACKENDS_OPENCL_OPENCL_BACKEND_HPP
#define DEVRT_SRC_BACKENDS_OPENCL_OPENCL_BACKEND_HPP

#include <devrt/backend/backend.hpp>
#include <devrt/config.hpp>

namespace devrt::opencl {

class OpenclBackend {
public:
  static constexpr std::string_view name = "opencl";
  static constexpr DeviceKind kind = static_cast<DeviceKind>(DEVRT_KIND_OPENCL); // declared in meson.build

  // availability(): unavailable when libOpenCL.so.1 cannot be opened, no platform (ICD) is
  // installed, or the platforms have no devices; the message says which.
  Status availability() noexcept;
  Result<std::int32_t> device_count() noexcept;
  Result<AttributeValue> get_attribute(const BackendDevice& device, Attribute attribute) noexcept;
  // Each open device's state is its ClDevice, described at discovery: open_device makes its context
  // and default queue; close_device waits for that queue (clFinish), so nothing devrt queued is
  // left running, and releases them with the profiling queue.
  Status open_device(BackendDevice& device) noexcept;
  Status close_device(BackendDevice& device) noexcept;
  // kind "opencl": device limits, OpenCL C version, fp16/fp64/subgroup support, extensions.
  Result<Target> detect_target(const BackendDevice& device) noexcept;

  // copy(): host->device copies are queued without blocking (the host memory must stay valid until the
  // stream is synchronized); device->host copies block until the bytes are in host memory (after
  // the stream's earlier work), as TVM's and CUDA's plain copies do; device<->device on one
  // device is clEnqueueCopyBuffer; between two OpenCL devices the copy goes through the host and
  // blocks.
  Result<void*> allocate(const BackendDevice& device, std::size_t nbytes, std::size_t alignment) noexcept;
  Status free(const BackendDevice& device, void* ptr) noexcept;
  Status copy(const CopyDesc& desc) noexcept;
  Result<void*> stream_create(const BackendDevice& device) noexcept;
  Status stream_destroy(const BackendDevice& device, void* stream) noexcept;
  Status stream_synchronize(const BackendDevice& device, void* stream) noexcept;
  Result<void*> event_create(const BackendDevice& device) noexcept;
  Status event_destroy(const BackendDevice& device, void* event) noexcept;
  Status event_record(const BackendDevice& device, void* event, void* stream) noexcept;
  Status event_synchronize(const BackendDevice& device, void* event) noexcept;
  Result<bool> event_query(const BackendDevice& device, void* event) noexcept;
  Status stream_wait_event(const BackendDevice& device, void* stream, void* event) noexcept;
  // Timed events: a marker on the device's profiling queue after the stream's, its
  // CL_PROFILING_COMMAND_END the time (ns, the device's timer).
  Result<void*> event_create_timed(const BackendDevice& device) noexcept;
  Result<std::int64_t> event_elapsed(const BackendDevice& device, void* start, void* end) noexcept;

  // module_load: opencl_c (built with the options plus -cl-kernel-arg-info) and opencl_binary.
  // launch: a `__local` pointer parameter receives dynamic_shared_bytes and is not one of the
  // launch's arguments. Buffer offsets must be multiples of CL_DEVICE_MEM_BASE_ADDR_ALIGN
  // (sub-buffers).
  static constexpr ModuleFormat module_formats[] = {ModuleFormat::opencl_c, ModuleFormat::opencl_binary};
  static constexpr bool checked_launch_arguments = true;
  static constexpr bool texture_arguments = true;
  Result<void*> module_load(const BackendDevice& device, ModuleFormat format, std::span<const std::byte> data,
                            const char* options, BuildLog& log) noexcept;
  Status module_unload(const BackendDevice& device, void* module) noexcept;
  Result<void*> module_function(const BackendDevice& device, void* module, const char* name) noexcept;
  Status launch(const BackendDevice& device, void* function, const LaunchDesc& desc) noexcept;
  Result<ModuleBinary> module_binary(const BackendDevice& device, void* module) noexcept;
  // Graphs: a cl_khr_command_buffer (simultaneous use) made on the default queue and enqueued on
  // the replaying stream's queue; unsupported where the device lacks the extension or simultaneous
  // use (NVIDIA's driver: the core then replays the recorded launches).
  Result<void*> graph_create(const BackendDevice& device, void* stream,
                             std::span<const devrt_graph_node> nodes) noexcept;
  Status graph_launch(const BackendDevice& device, void* graph, void* stream) noexcept;
  Status graph_destroy(const BackendDevice& device, void* graph) noexcept;

  // Textures (global.texture, -nhwc, -weight) are CL_RGBA image2d_t objects of the element type's
  // channel type, on devices with CL_DEVICE_IMAGE_SUPPORT; float16 texels where the context lists
  // CL_RGBA/CL_HALF_FLOAT. A kernel takes one as an image2d_t argument (DEVRT_ARG_TEXTURE).
  Result<ScopeLimits> scope_limits(const BackendDevice& device, MemoryScope scope) noexcept;
  Result<void*> texture_allocate(const BackendDevice& device, const devrt_texture_desc& desc) noexcept;
  Status texture_free(const BackendDevice& device, void* texture) noexcept;
  Status texture_copy(const devrt_texture_copy_desc& desc) noexcept;
  // Images over buffers where the device has cl_khr_image2d_from_buffer (TVM's pooled images).
  Result<void*> texture_view(const BackendDevice& device, devrt_texture_view_desc& desc) noexcept;
};

static_assert(Backend<OpenclBackend> && BackendDeviceLifecycle<OpenclBackend> && BackendEvents<OpenclBackend> &&
              BackendTargetDetection<OpenclBackend> && BackendModules<OpenclBackend> &&
              BackendModuleBinary<OpenclBackend> && BackendTextureViews<OpenclBackend> && BackendGraphs<OpenclBackend>);

} // namespace devrt::opencl

#endif // DEVRT_SRC_BACKENDS_OPENCL_OPENCL_BACKEND_HPP
