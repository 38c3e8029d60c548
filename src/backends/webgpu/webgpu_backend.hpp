// SPDX-License-Identifier: Apache-2.0
// The WebGPU backend (DLPack kWebGPU, 15) over a dlopened implementation of webgpu.h: Dawn or
// wgpu-native. Each adapter devrt accepts is a device (never Dawn's Null adapter); its queue is
// the only hardware queue, and every devrt stream of the device submits to it in order.
#ifndef DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_BACKEND_HPP
#define DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_BACKEND_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <devrt/backend/backend.hpp>
#include <devrt/config.hpp>

namespace devrt::webgpu {

// Stateless; the process-wide runtime (webgpu_state.hpp) holds the instance and the adapters; each
// open device's state is its adapter's DeviceState.
// Every member is thread-safe: calls into the implementation are serialised per device.
class WebgpuBackend {
public:
  static constexpr std::string_view name = "webgpu";
  static constexpr DeviceKind kind = static_cast<DeviceKind>(DEVRT_KIND_WEBGPU);

  Status availability() noexcept;
  Result<std::int32_t> device_count() noexcept;
  // Discovery describes each adapter and tries its device; open_device requests the device devrt
  // uses (every feature and limit the adapter offers) and close_device waits for it and releases
  // it with its queue and the buffers it kept.
  Status open_device(BackendDevice& device) noexcept;
  Status close_device(BackendDevice& device) noexcept;
  Result<AttributeValue> get_attribute(const BackendDevice& device, Attribute attribute) noexcept;
  // The device as TVM's `webgpu` target: keys webgpu and gpu, the workgroup limits, subgroups,
  // shader-f16 as float16 support.
  Result<Target> detect_target(const BackendDevice& device) noexcept;

  Result<void*> allocate(const BackendDevice& device, std::size_t nbytes, std::size_t alignment) noexcept;
  Status free(const BackendDevice& device, void* ptr) noexcept;
  Status copy(const CopyDesc& desc) noexcept;

  Result<void*> stream_create(const BackendDevice& device) noexcept;
  Status stream_destroy(const BackendDevice& device, void* stream) noexcept;
  Status stream_synchronize(const BackendDevice& device, void* stream) noexcept;
  Status device_synchronize(const BackendDevice& device) noexcept;

  // Events: the point in the queue when record() ran (every stream submits to the one queue, so
  // waiting on an event from another stream of the device needs no work).
  Result<void*> event_create(const BackendDevice& device) noexcept;
  Status event_destroy(const BackendDevice& device, void* event) noexcept;
  Status event_record(const BackendDevice& device, void* event, void* stream) noexcept;
  Status event_synchronize(const BackendDevice& device, void* event) noexcept;
  Result<bool> event_query(const BackendDevice& device, void* event) noexcept;
  Status stream_wait_event(const BackendDevice& device, void* stream, void* event) noexcept;

  // Kernel modules from WGSL (webgpu_module.cpp): buffer arguments bind to group 0's storage
  // buffers in @binding order, 32-bit scalars fill its uniform buffer followed by the grid's x
  // extent (TVM's calling convention); a workgroup size from `override` constants follows the
  // launch's block. Arguments are checked against the storage buffers, then the members of the
  // uniform buffer's struct (TVM's PODArgs, packGridDimX left out), when all are i32, u32 or f32.
  static constexpr ModuleFormat module_formats[] = {ModuleFormat::wgsl};
  static constexpr bool checked_launch_arguments = true;
  static constexpr bool texture_arguments = false;
  Result<void*> module_load(const BackendDevice& device, ModuleFormat format, std::span<const std::byte> data,
                            const char* options, BuildLog& log) noexcept;
  Status module_unload(const BackendDevice& device, void* module) noexcept;
  Result<void*> module_function(const BackendDevice& device, void* module, const char* name) noexcept;
  Status launch(const BackendDevice& device, void* function, const LaunchDesc& desc) noexcept;
  Result<ModuleBinary> module_binary(const BackendDevice& device, void* module) noexcept;
};

static_assert(Backend<WebgpuBackend> && BackendDeviceSynchronize<WebgpuBackend> && BackendEvents<WebgpuBackend> &&
              BackendModules<WebgpuBackend> && BackendModuleBinary<WebgpuBackend> &&
              BackendTargetDetection<WebgpuBackend>);

} // namespace devrt::webgpu

#endif // DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_BACKEND_HPP
