// The OpenCL backend: every device of every platform, libOpenCL.so.1 opened at first use.
//
// Memory is cl_mem handles (offsets applied by the backend); streams are in-order command queues
// (the device's default queue for the null stream); events are markers; modules are programs
// built from OpenCL C or loaded from program binaries; a launch maps grid x block to the global
// size and block to the local size. Every member is thread-safe: OpenCL objects are, except
// kernel arguments, which are set and enqueued under one lock per kernel.
#ifndef DEVRT_SRC_BACKENDS_OPENCL_OPENCL_BACKEND_HPP
#define DEVRT_SRC_BACKENDS_OPENCL_OPENCL_BACKEND_HPP

#include <devrt/backend.hpp>

namespace devrt::opencl {

class OpenclBackend {
public:
  static constexpr std::string_view name = "opencl";
  static constexpr DeviceKind kind = DeviceKind::opencl;

  // unavailable when libOpenCL.so.1 cannot be opened, no platform (ICD) is installed, or the
  // platforms have no devices; the message says which.
  Status availability() noexcept;
  Result<std::int32_t> device_count() noexcept;
  Result<AttributeValue> get_attribute(std::int32_t device, Attribute attribute) noexcept;
  // kind "opencl": device limits, OpenCL C version, fp16/fp64/subgroup support, extensions.
  Result<Target> detect_target(std::int32_t device) noexcept;

  Result<void*> allocate(std::int32_t device, std::size_t nbytes, std::size_t alignment) noexcept;
  Status free(std::int32_t device, void* ptr) noexcept;
  // Host->device copies are queued without blocking (the host memory must stay valid until the
  // stream is synchronized); device->host copies block until the bytes are in host memory (after
  // the stream's earlier work), as TVM's and CUDA's plain copies do; device<->device on one
  // device is clEnqueueCopyBuffer; between two OpenCL devices the copy goes through the host and
  // blocks.
  Status copy(const CopyDesc& desc) noexcept;

  Result<void*> stream_create(std::int32_t device) noexcept;
  Status stream_destroy(std::int32_t device, void* stream) noexcept;
  Status stream_synchronize(std::int32_t device, void* stream) noexcept;

  Result<void*> event_create(std::int32_t device) noexcept;
  Status event_destroy(std::int32_t device, void* event) noexcept;
  Status event_record(std::int32_t device, void* event, void* stream) noexcept;
  Status event_synchronize(std::int32_t device, void* event) noexcept;
  Result<bool> event_query(std::int32_t device, void* event) noexcept;
  Status stream_wait_event(std::int32_t device, void* stream, void* event) noexcept;

  // opencl_c (built with the options plus -cl-kernel-arg-info) and opencl_binary.
  Result<void*> module_load(std::int32_t device, ModuleFormat format, std::span<const std::byte> data,
                            const char* options, BuildLog& log) noexcept;
  Status module_unload(std::int32_t device, void* module) noexcept;
  Result<void*> module_function(std::int32_t device, void* module, const char* name) noexcept;
  // A `__local` pointer parameter receives dynamic_shared_bytes and is not one of the launch's
  // arguments. Buffer offsets must be multiples of CL_DEVICE_MEM_BASE_ADDR_ALIGN (sub-buffers).
  Status launch(std::int32_t device, void* function, const LaunchDesc& desc) noexcept;
  Result<ModuleBinary> module_binary(std::int32_t device, void* module) noexcept;
};

static_assert(Backend<OpenclBackend> && BackendEvents<OpenclBackend> && BackendTargetDetection<OpenclBackend> &&
              BackendModules<OpenclBackend> && BackendModuleBinary<OpenclBackend>);

} // namespace devrt::opencl

#endif // DEVRT_SRC_BACKENDS_OPENCL_OPENCL_BACKEND_HPP
