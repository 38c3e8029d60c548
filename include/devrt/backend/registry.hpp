// SPDX-License-Identifier: Apache-2.0
// The backend registry: fixed capacity, no heap, lock-free lookup by kind and by name. For backend
// authors and tools (through <devrt/backend/backend.hpp>); applications use <devrt/devrt.hpp>.
#ifndef DEVRT_BACKEND_REGISTRY_HPP
#define DEVRT_BACKEND_REGISTRY_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <devrt/attribute.hpp>
#include <devrt/backend/attribute_value.hpp>
#include <devrt/backend/backend_abi.h>
#include <devrt/backend/detail/mutex.hpp>
#include <devrt/device.hpp>
#include <devrt/status.hpp>

namespace devrt {

// A non-owning handle to one registered backend table, with C++ wrappers over its functions, which
// take a device's index and pass the backend the device as the core opened it (opening it on
// first use). Every error names backend, device and call. Cheap to copy; thread-safe as the
// backend is.
class BackendRef {
public:
  constexpr BackendRef() noexcept = default;
  constexpr explicit BackendRef(const devrt_backend_table* table) noexcept : table_(table) {}

  constexpr explicit operator bool() const noexcept { return table_ != nullptr; }
  constexpr const devrt_backend_table* table() const noexcept { return table_; }
  std::string_view name() const noexcept { return table_->name; }
  DeviceKind kind() const noexcept { return static_cast<DeviceKind>(table_->device_kind); }
  bool has_capability(std::uint32_t cap) const noexcept { return (table_->capabilities & cap) != 0; }
  bool has_events() const noexcept { return has_capability(DEVRT_CAP_EVENTS); }
  bool host_accessible() const noexcept { return has_capability(DEVRT_CAP_HOST_ACCESSIBLE); }
  // Whether its MemorySpans hold addresses (addressable or host-accessible memory: offsets add to
  // them and overlap is judged by address), not handles to allocations (OpenCL, Vulkan, WebGPU).
  bool spans_are_addresses() const noexcept {
    return has_capability(DEVRT_CAP_ADDRESSABLE) || has_capability(DEVRT_CAP_HOST_ACCESSIBLE);
  }
  bool has_target_detection() const noexcept { return DEVRT_BACKEND_TABLE_HAS(table_, detect_target); }

  // Ok when the backend can be used here, else `unavailable` with the reason. May load drivers.
  Status availability() const noexcept;
  // Number of devices (0 when unavailable). May load drivers on first call.
  Result<std::int32_t> device_count() const noexcept;
  // invalid_argument unless 0 <= id < device_count(); names the backend.
  Status check_device(std::int32_t id) const noexcept;
  // One attribute; monostate when the backend does not report it.
  Result<AttributeValue> attribute(std::int32_t id, Attribute attribute) const noexcept;
  // The device as a compiler target, in JSON (prefer devrt::detect_target, which parses and
  // caches it). unsupported when the backend has no detector.
  Result<std::string> detect_target(std::int32_t id) const noexcept;

  // Raw allocation (prefer Buffer). nbytes == 0 yields nullptr. alignment: a power of two.
  Result<void*> allocate(std::int32_t id, std::size_t nbytes, std::size_t alignment) const noexcept;
  Status free(std::int32_t id, void* ptr) const noexcept;
  // Raw copy; the caller has validated ranges (prefer devrt::copy, which does). Fills the desc's
  // src_device and dst_device with devices src_id's and dst_id's objects where the side is this
  // backend's (opened on first use); `id` is the device that runs it, named in errors.
  Status copy(std::int32_t id, std::int32_t src_id, std::int32_t dst_id, devrt_copy_desc& desc) const noexcept;

  // Waits for every stream of the device. Ok at once on a synchronous backend; unsupported on a
  // backend with neither DEVRT_CAP_SYNCHRONOUS nor device_synchronize.
  Status device_synchronize(std::int32_t id) const noexcept;
  bool has_device_synchronize() const noexcept { return DEVRT_BACKEND_TABLE_HAS(table_, device_synchronize); }
  // True when device_synchronize() can succeed: the backend is synchronous or has the entry.
  bool can_synchronize_device() const noexcept {
    return has_capability(DEVRT_CAP_SYNCHRONOUS) || has_device_synchronize();
  }

  Result<void*> stream_create(std::int32_t id) const noexcept;
  Status stream_destroy(std::int32_t id, void* stream) const noexcept;
  Status stream_synchronize(std::int32_t id, void* stream) const noexcept;

  // Events: `unsupported` when the backend lacks DEVRT_CAP_EVENTS.
  Result<void*> event_create(std::int32_t id) const noexcept;
  Status event_destroy(std::int32_t id, void* event) const noexcept;
  Status event_record(std::int32_t id, void* event, void* stream) const noexcept;
  Status event_synchronize(std::int32_t id, void* event) const noexcept;
  Result<bool> event_query(std::int32_t id, void* event) const noexcept;
  Status stream_wait_event(std::int32_t id, void* stream, void* event) const noexcept;
  // Timed events (devrt_backend_table.event_create_timed): `unsupported` naming the backend when
  // it cannot time on its devices.
  bool has_event_timing() const noexcept {
    return has_events() && DEVRT_BACKEND_TABLE_HAS(table_, event_create_timed) &&
           DEVRT_BACKEND_TABLE_HAS(table_, event_elapsed);
  }
  Result<void*> event_create_timed(std::int32_t id) const noexcept;
  Result<std::int64_t> event_elapsed(std::int32_t id, void* start, void* end) const noexcept;

  // Kernel modules (prefer devrt::Module and devrt::Function). unsupported when the backend has
  // none. module_load puts the backend's build log into *log when log is not null.
  bool has_modules() const noexcept { return DEVRT_BACKEND_TABLE_HAS(table_, launch); }
  // The module formats module_load accepts, DEVRT_MODULE_FORMAT_BIT(format) each; 0 when the
  // backend has no modules or its table predates the declaration.
  std::uint32_t module_formats() const noexcept {
    return has_modules() && table_->struct_size >= offsetof(devrt_backend_table, module_formats) + sizeof(std::uint32_t)
               ? table_->module_formats
               : 0u;
  }
  // True when module_load accepts `format` (a DEVRT_MODULE_* value).
  bool loads_module_format(std::int32_t format) const noexcept {
    return format > 0 && format < 32 &&
           (module_formats() & DEVRT_MODULE_FORMAT_BIT(static_cast<std::uint32_t>(format))) != 0;
  }
  // The formats device `id` loads: device_module_formats where the backend's devices differ, else
  // module_formats(). Opens the device.
  Result<std::uint32_t> device_module_formats(std::int32_t id) const noexcept;
  Result<void*> module_load(std::int32_t id, std::int32_t format, const void* data, std::size_t size,
                            const char* options, std::string* log) const noexcept;
  Status module_unload(std::int32_t id, void* module) const noexcept;
  Result<void*> module_function(std::int32_t id, void* module, const char* name) const noexcept;
  // The module's bytes in *out and their format in *format; unsupported without module_binary.
  Status module_binary(std::int32_t id, void* module, std::int32_t* format, std::string* out) const noexcept;
  // The instructions module_load rewrote in the module (devrt_backend_table.module_rewrites); 0
  // for a backend that rewrites nothing.
  Result<std::uint32_t> module_rewrites(std::int32_t id, void* module) const noexcept;
  // One launch; the caller has checked the arguments. Errors name `kernel`, grid and block.
  Status launch(std::int32_t id, void* function, const devrt_launch_desc& desc, std::string_view kernel) const noexcept;

  // Graphs (devrt_backend_table.graph_create; prefer devrt::begin_capture). graph_create answers
  // unsupported, naming the backend, when the backend has no graphs or cannot bake these nodes.
  bool has_graphs() const noexcept {
    return has_modules() && DEVRT_BACKEND_TABLE_HAS(table_, graph_create) &&
           DEVRT_BACKEND_TABLE_HAS(table_, graph_launch) && DEVRT_BACKEND_TABLE_HAS(table_, graph_destroy);
  }
  Result<void*> graph_create(std::int32_t id, void* stream, std::span<const devrt_graph_node> nodes) const noexcept;
  Status graph_launch(std::int32_t id, void* graph, void* stream) const noexcept;
  Status graph_destroy(std::int32_t id, void* graph) const noexcept;

  // Memory scopes (prefer devrt::scope_limits and Tensor::empty with a scope). scope_limits is
  // unsupported, naming scope and device, for a scope the device lacks; "global" is the backend's
  // own memory on every device.
  bool has_textures() const noexcept { return DEVRT_BACKEND_TABLE_HAS(table_, texture_copy); }
  Result<ScopeLimits> scope_limits(std::int32_t id, MemoryScope scope) const noexcept;
  Result<void*> texture_allocate(std::int32_t id, const devrt_texture_desc& desc) const noexcept;
  // Flat memory in `scope` (global: allocate), freed with free(). unsupported when the backend
  // has no such memory. Checks as allocate.
  Result<void*> scope_allocate(std::int32_t id, MemoryScope scope, std::size_t nbytes,
                               std::size_t alignment) const noexcept;
  Status texture_free(std::int32_t id, void* texture) const noexcept;
  // Fills desc.device with device `id`'s object.
  Status texture_copy(std::int32_t id, devrt_texture_copy_desc& desc) const noexcept;
  // A texture over an allocation (devrt_texture_view_desc; prefer Tensor::as_texture); unsupported
  // when the backend makes none.
  Result<void*> texture_view(std::int32_t id, devrt_texture_view_desc& desc) const noexcept;

  friend constexpr bool operator==(BackendRef a, BackendRef b) noexcept { return a.table_ == b.table_; }

private:
  const devrt_backend_table* table_ = nullptr;
};

// A set of backends. Registry::global() is the process-wide one (holding every backend built into
// libdevrt plus those registered by DEVRT_REGISTER_BACKEND); tests may create their own.
// Capacity is fixed (kCapacity); registration and lookup never touch the heap or a driver.
// add() is serialised by a mutex; lookups are lock-free and may run concurrently with add().
namespace detail {
struct RegistryAccess;
} // namespace detail

class Registry {
public:
  // Backends in all; kind 0 is not a kind.
  static constexpr std::size_t kCapacity = kMaxDeviceKinds - 1;

  constexpr Registry() noexcept = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // The process-wide registry, with every built-in backend already in it. Thread-safe.
  static Registry& global() noexcept;

  // Validates and stores a table (not copied: it must outlive the registry). Adding the same
  // table again is a no-op; another table with a taken name is `already_exists`; a bad ABI
  // version or struct size is `abi_mismatch`; missing functions are `invalid_argument`. A second
  // implementation of a taken kind is kept beside the first: the first lookup of the kind chooses
  // the one that serves it (the first named in DEVRT_PREFER=<name>[,<name>...], else the first
  // available in registration order, else the first registered); the others stand by.
  Status add(const devrt_backend_table* table) noexcept;
  // Adds several tables (a plugin's) all or none: any failure leaves the registry as it was. A
  // table may take the place of a placeholder (DEVRT_CAP_PLACEHOLDER) of the same name and kind.
  Status add_group(std::span<const devrt_backend_table* const> tables) noexcept;

  // The backend that serves `kind`; the first lookup of a kind with several implementations
  // chooses it (add(), above). Thread-safe; lock-free once chosen.
  BackendRef find(DeviceKind kind) const noexcept {
    auto k = static_cast<std::int32_t>(kind);
    if (k < 0 || k >= kMaxDeviceKinds) return BackendRef();
#if !DEVRT_BARE_METAL
    if (unchosen_[k].load(std::memory_order_acquire)) [[unlikely]]
      choose(k);
#endif
    return BackendRef(by_kind_[k].load(std::memory_order_acquire));
  }
  BackendRef find(std::string_view name) const noexcept;
  // Backend for a device kind, or `unavailable` naming the kind and listing what is built in.
  Result<BackendRef> get(DeviceKind kind) const noexcept;

  std::size_t size() const noexcept { return count_.load(std::memory_order_acquire); }
  // Backends in registration order; i < size().
  BackendRef at(std::size_t i) const noexcept { return BackendRef(entries_[i].load(std::memory_order_acquire)); }
  // Ok when `backend` serves its kind; else `unavailable`, naming the implementation that does and
  // why (DEVRT_PREFER, or the first available): it stands by. Thread-safe.
  Status standing_by(BackendRef backend) const noexcept;

private:
  friend struct detail::RegistryAccess;
  // Chooses the implementation that serves `kind` among those registered (add()).
  void choose(std::int32_t kind) const noexcept;

  std::atomic<const devrt_backend_table*> entries_[kCapacity]{};
  // The serving table per kind; unchosen_ while a kind with several has not been looked up yet.
  mutable std::atomic<const devrt_backend_table*> by_kind_[kMaxDeviceKinds]{};
  mutable std::atomic<bool> unchosen_[kMaxDeviceKinds]{};
  std::atomic<std::size_t> count_{0};
  mutable detail::Mutex add_mutex_;
};

// Shorthand for Registry::global().get(device.kind) followed by check_device(device.id).
Result<BackendRef> backend_for(Device device) noexcept;

} // namespace devrt

#endif // DEVRT_BACKEND_REGISTRY_HPP
