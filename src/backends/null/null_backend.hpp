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

#include <devrt/backend.hpp>
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
  Result<AttributeValue> get_attribute(std::int32_t, Attribute) noexcept { return unsupported("get_attribute"); }

  // ---- Memory (required).
  Result<void*> allocate(std::int32_t, std::size_t, std::size_t) noexcept { return unsupported("allocate"); }
  Status free(std::int32_t, void*) noexcept { return unsupported("free"); }
  Status copy(const CopyDesc&) noexcept { return unsupported("copy"); }

  // ---- Streams (required).
  Result<void*> stream_create(std::int32_t) noexcept { return unsupported("stream_create"); }
  Status stream_destroy(std::int32_t, void*) noexcept { return unsupported("stream_destroy"); }
  Status stream_synchronize(std::int32_t, void*) noexcept { return unsupported("stream_synchronize"); }

  // ---- Events (optional: BackendEvents). Delete these six and devrt answers `unsupported` for
  // events itself; keep them to implement events.
  Result<void*> event_create(std::int32_t) noexcept { return unsupported("event_create"); }
  Status event_destroy(std::int32_t, void*) noexcept { return unsupported("event_destroy"); }
  Status event_record(std::int32_t, void*, void*) noexcept { return unsupported("event_record"); }
  Status event_synchronize(std::int32_t, void*) noexcept { return unsupported("event_synchronize"); }
  Result<bool> event_query(std::int32_t, void*) noexcept { return unsupported("event_query"); }
  Status stream_wait_event(std::int32_t, void*, void*) noexcept { return unsupported("stream_wait_event"); }

  // ---- Kernel modules (optional: BackendModules), and a loaded module's bytes
  // (BackendModuleBinary). module_formats lists what module_load accepts (devrt refuses the rest
  // before calling it); checked_launch_arguments says that launch refuses arguments that do not
  // match the kernel's parameters; texture_arguments, that kernels take textures.
  static constexpr ModuleFormat module_formats[] = {ModuleFormat::spirv};
  static constexpr bool checked_launch_arguments = false;
  static constexpr bool texture_arguments = false;
  Result<void*> module_load(std::int32_t, ModuleFormat, std::span<const std::byte>, const char*, BuildLog&) noexcept {
    return unsupported("module_load");
  }
  Status module_unload(std::int32_t, void*) noexcept { return unsupported("module_unload"); }
  Result<void*> module_function(std::int32_t, void*, const char*) noexcept { return unsupported("module_function"); }
  Status launch(std::int32_t, void*, const LaunchDesc&) noexcept { return unsupported("launch"); }
  Result<ModuleBinary> module_binary(std::int32_t, void*) noexcept { return unsupported("module_binary"); }

  // ---- Whole-device synchronization (optional: BackendDeviceSynchronize).
  Status device_synchronize(std::int32_t) noexcept { return unsupported("device_synchronize"); }

  // ---- The device as a compiler target (optional: BackendTargetDetection).
  Result<Target> detect_target(std::int32_t) noexcept { return unsupported("detect_target"); }

  // ---- Memory scopes besides "global" (optional: BackendScopes), textures in them
  // (BackendTextures) and flat memory in them (BackendScopedMemory, freed with free()).
  Result<ScopeLimits> scope_limits(std::int32_t, MemoryScope) noexcept { return unsupported("scope_limits"); }
  Result<void*> texture_allocate(std::int32_t, const devrt_texture_desc&) noexcept {
    return unsupported("texture_allocate");
  }
  Status texture_free(std::int32_t, void*) noexcept { return unsupported("texture_free"); }
  Status texture_copy(const devrt_texture_copy_desc&) noexcept { return unsupported("texture_copy"); }
  Result<void*> scope_allocate(std::int32_t, MemoryScope, std::size_t, std::size_t) noexcept {
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

static_assert(Backend<NullBackend> && BackendEvents<NullBackend> && BackendModules<NullBackend> &&
              BackendModuleBinary<NullBackend> && BackendDeviceSynchronize<NullBackend> &&
              BackendTargetDetection<NullBackend> && BackendTextures<NullBackend> && BackendScopedMemory<NullBackend>);

} // namespace devrt::null

#endif // DEVRT_SRC_BACKENDS_NULL_NULL_BACKEND_HPP
