// SPDX-License-Identifier: Apache-2.0
// The remote backend: devices served by devrt-server on another process or machine, reached over
// UCX (docs/remote.md). One device kind, `remote`; each device forwards to one device of its
// server, whose kind decides the module formats and target.
#ifndef DEVRT_SRC_BACKENDS_REMOTE_REMOTE_BACKEND_HPP
#define DEVRT_SRC_BACKENDS_REMOTE_REMOTE_BACKEND_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <devrt/backend/backend.hpp>
#include <devrt/config.hpp>

namespace devrt::remote {

// The connections live in a process-wide list (remote_backend.cpp); each open device's state
// (open_device) names its connection and the server's device. Every member is thread-safe.
class RemoteBackend {
public:
  static constexpr std::string_view name = "remote";
  static constexpr DeviceKind kind = static_cast<DeviceKind>(DEVRT_KIND_REMOTE); // declared in meson.build
  static constexpr bool out_of_process = true;

  Status availability() noexcept;
  Result<std::int32_t> device_count() noexcept;
  Status open_device(BackendDevice& device) noexcept;
  Status close_device(BackendDevice& device) noexcept;
  Result<AttributeValue> get_attribute(const BackendDevice& device, Attribute attribute) noexcept;
  Result<Target> detect_target(const BackendDevice& device) noexcept;

  Result<void*> allocate(const BackendDevice& device, std::size_t nbytes, std::size_t alignment) noexcept;
  Status free(const BackendDevice& device, void* handle) noexcept;
  Status copy(const CopyDesc& desc) noexcept;

  Result<void*> stream_create(const BackendDevice& device) noexcept;
  Status stream_destroy(const BackendDevice& device, void* stream) noexcept;
  Status stream_synchronize(const BackendDevice& device, void* stream) noexcept;
  Status device_synchronize(const BackendDevice& device) noexcept;

  Result<void*> event_create(const BackendDevice& device) noexcept;
  Result<void*> event_create_timed(const BackendDevice& device) noexcept;
  Status event_destroy(const BackendDevice& device, void* event) noexcept;
  Status event_record(const BackendDevice& device, void* event, void* stream) noexcept;
  Status event_synchronize(const BackendDevice& device, void* event) noexcept;
  Result<bool> event_query(const BackendDevice& device, void* event) noexcept;
  Status stream_wait_event(const BackendDevice& device, void* stream, void* event) noexcept;
  Result<std::int64_t> event_elapsed(const BackendDevice& device, void* start, void* end) noexcept;

  // Every format a server's backend may load; each device loads those of its kind on its server
  // (device_module_formats), and the server refuses host code unless started to allow it.
  static constexpr ModuleFormat module_formats[] = {
      ModuleFormat::host_table, ModuleFormat::shared_object, ModuleFormat::opencl_c, ModuleFormat::opencl_binary,
      ModuleFormat::spirv,      ModuleFormat::ptx,           ModuleFormat::cubin,    ModuleFormat::fatbin,
      ModuleFormat::hsaco,      ModuleFormat::wgsl};
  Result<std::uint32_t> device_module_formats(const BackendDevice& device) noexcept;
  Result<void*> module_load(const BackendDevice& device, ModuleFormat format, std::span<const std::byte> image,
                            const char* options, BuildLog& log) noexcept;
  Status module_unload(const BackendDevice& device, void* module) noexcept;
  // What the server's backend rewrote in the module, as its load reported it.
  Result<std::uint32_t> module_rewrites(const BackendDevice& device, void* module) noexcept;
  Result<void*> module_function(const BackendDevice& device, void* module, const char* name) noexcept;
  Status launch(const BackendDevice& device, void* function, const LaunchDesc& desc) noexcept;
  // Graphs: the nodes go to the server once, which captures them into a graph of its own; each
  // replay is one one-way message. unsupported (the core replays the nodes itself) for a graph
  // larger than the server's largest message.
  Result<void*> graph_create(const BackendDevice& device, void* stream,
                             std::span<const devrt_graph_node> nodes) noexcept;
  Status graph_launch(const BackendDevice& device, void* graph, void* stream) noexcept;
  Status graph_destroy(const BackendDevice& device, void* graph) noexcept;
};

static_assert(Backend<RemoteBackend> && BackendEvents<RemoteBackend> && BackendEventTiming<RemoteBackend> &&
              BackendModules<RemoteBackend> && BackendModuleRewrites<RemoteBackend> &&
              BackendDeviceModuleFormats<RemoteBackend> && BackendDeviceSynchronize<RemoteBackend> &&
              BackendTargetDetection<RemoteBackend> && OutOfProcessDevices<RemoteBackend> &&
              BackendDeviceLifecycle<RemoteBackend>);

} // namespace devrt::remote

#endif // DEVRT_SRC_BACKENDS_REMOTE_REMOTE_BACKEND_HPP
