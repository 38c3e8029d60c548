// SPDX-License-Identifier: Apache-2.0
// The null backend: every operation of devrt::Backend, required and optional, present and
// answering `unsupported`. Copy this folder to start a new backend (README.md beside this file),
// then replace the answers one by one.
#ifndef DEVRT_SRC_BACKENDS_NULL_NULL_BACKEND_HPP
#define DEVRT_SRC_BACKENDS_NULL_NULL_BACKEND_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <devrt/backend/backend.hpp>
#include <devrt/config.hpp>

namespace devrt::null {

// Stateless; every member is thread-safe.
class NullBackend {
public:
  // The identity: the name is the registrar's identifier, the kind is declared once, in this
  // folder's meson.build (DEVRT_KIND_NULL comes from there through <devrt/config.hpp>).
  static constexpr std::string_view name = "null";
  static constexpr DeviceKind kind = static_cast<DeviceKind>(DEVRT_KIND_NULL); // declared in meson.build

  // ---- Discovery (required). A real backend opens its vendor runtime in availability(), once
  // and lazily, caches the answer, and says why it cannot.
  Status availability() noexcept { return unsupported("availability"); }
  Result<std::int32_t> device_count() noexcept { return 0; }
  Result<AttributeValue> get_attribute(const BackendDevice&, Attribute) noexcept {
    return unsupported("get_attribute");
  }

  // ---- Devices (optional: BackendDeviceLifecycle). Every per-device operation gets the device
  // as devrt opened it; open_device may set device.state to this backend's object for the device
  // (read it with backend_state<T>(device)) and close_device frees it (devrt calls it at
  // shutdown(), or after it at the destruction of the device's last object: none is left then).
  // Delete both when a device needs no state of its own.
  Status open_device(BackendDevice&) noexcept { return Status(); }
  Status close_device(BackendDevice& device) noexcept {
    device.state = {};
    return Status();
  }

  // ---- Memory (required).
  Result<void*> allocate(const BackendDevice&, std::size_t, std::size_t) noexcept { return unsupported("allocate"); }
  Status free(const BackendDevice&, void*) noexcept { return unsupported("free"); }
  Status copy(const CopyDesc&) noexcept { return unsupported("copy"); }

  // ---- Streams (required).
  Result<void*> stream_create(const BackendDevice&) noexcept { return unsupported("stream_create"); }
  Status stream_destroy(const BackendDevice&, void*) noexcept { return unsupported("stream_destroy"); }
  Status stream_synchronize(const BackendDevice&, void*) noexcept { return unsupported("stream_synchronize"); }

  // ---- Events (optional: BackendEvents). Delete these six and devrt answers `unsupported` for
  // events itself; keep them to implement events.
  Result<void*> event_create(const BackendDevice&) noexcept { return unsupported("event_create"); }
  Status event_destroy(const BackendDevice&, void*) noexcept { return unsupported("event_destroy"); }
  Status event_record(const BackendDevice&, void*, void*) noexcept { return unsupported("event_record"); }
  Status event_synchronize(const BackendDevice&, void*) noexcept { return unsupported("event_synchronize"); }
  Result<bool> event_query(const BackendDevice&, void*) noexcept { return unsupported("event_query"); }
  Status stream_wait_event(const BackendDevice&, void*, void*) noexcept { return unsupported("stream_wait_event"); }

  // ---- Kernel modules (optional: BackendModules), and a loaded module's bytes
  // (BackendModuleBinary). module_formats lists what module_load accepts (devrt refuses the rest
  // before calling it); checked_launch_arguments says that launch refuses arguments that do not
  // match the kernel's parameters; texture_arguments, that kernels take textures.
  static constexpr ModuleFormat module_formats[] = {ModuleFormat::spirv};
  static constexpr bool checked_launch_arguments = false;
  static constexpr bool texture_arguments = false;
  Result<void*> module_load(const BackendDevice&, ModuleFormat, std::span<const std::byte>, const char*,
                            BuildLog&) noexcept {
    return unsupported("module_load");
  }
  Status module_unload(const BackendDevice&, void*) noexcept { return unsupported("module_unload"); }
  Result<void*> module_function(const BackendDevice&, void*, const char*) noexcept {
    return unsupported("module_function");
  }
  Status launch(const BackendDevice&, void*, const LaunchDesc&) noexcept { return unsupported("launch"); }
  Result<ModuleBinary> module_binary(const BackendDevice&, void*) noexcept { return unsupported("module_binary"); }

  // ---- Whole-device synchronization (optional: BackendDeviceSynchronize).
  Status device_synchronize(const BackendDevice&) noexcept { return unsupported("device_synchronize"); }

  // ---- The device as a compiler target (optional: BackendTargetDetection).
  Result<Target> detect_target(const BackendDevice&) noexcept { return unsupported("detect_target"); }

  // ---- Memory scopes besides "global" (optional: BackendScopes), textures in them
  // (BackendTextures) and flat memory in them (BackendScopedMemory, freed with free()).
  Result<ScopeLimits> scope_limits(const BackendDevice&, MemoryScope) noexcept { return unsupported("scope_limits"); }
  Result<void*> texture_allocate(const BackendDevice&, const devrt_texture_desc&) noexcept {
    return unsupported("texture_allocate");
  }
  Status texture_free(const BackendDevice&, void*) noexcept { return unsupported("texture_free"); }
  Status texture_copy(const devrt_texture_copy_desc&) noexcept { return unsupported("texture_copy"); }
  Result<void*> scope_allocate(const BackendDevice&, MemoryScope, std::size_t, std::size_t) noexcept {
    return unsupported("scope_allocate");
  }

  // Memory properties are optional flags, off unless declared: `static constexpr bool
  // host_accessible = true;` (host code may read it), `addressable = true;` (device pointers are
  // addresses), `synchronous = true;` (every operation is complete on return).

private:
  static Status unsupported(const char* call) noexcept {
    return make_error(ErrorCode::unsupported, "the null backend implements no ", call);
  }
};

static_assert(Backend<NullBackend> && BackendDeviceLifecycle<NullBackend> && BackendEvents<NullBackend> &&
              BackendModules<NullBackend> && BackendModuleBinary<NullBackend> &&
              BackendDeviceSynchronize<NullBackend> && BackendTargetDetection<NullBackend> &&
              BackendTextures<NullBackend> && BackendScopedMemory<NullBackend>);

} // namespace devrt::null

#endif // DEVRT_SRC_BACKENDS_NULL_NULL_BACKEND_HPP
