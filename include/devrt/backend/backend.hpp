// SPDX-License-Identifier: Apache-2.0
// The Backend concept and its translation into the C-ABI table the registry stores.
//
// A backend is a default-constructible C++ type with static `name` and `kind` and member functions
// for discovery, memory, copies and streams (see `Backend` below). Optional capabilities (events,
// host-accessible memory) are detected with smaller concepts. make_backend_table<B>() turns any
// conforming type into a devrt_backend_table at compile time; DEVRT_REGISTER_BACKEND(id, B) adds
// it to the process-wide registry. src/backends/null/ is the template for a new backend.
//
// This is the backend author's header: it includes the application API (<devrt/devrt.hpp>) and
// adds the C ABI, the registry and BackendRef, run-time attribute values, module images and
// workspace pools. Applications include <devrt/devrt.hpp> alone.
#ifndef DEVRT_BACKEND_BACKEND_HPP
#define DEVRT_BACKEND_BACKEND_HPP

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <type_traits>
#include <variant>

#include <devrt/attribute.hpp>
#include <devrt/backend/attribute_value.hpp>
#include <devrt/backend/backend_abi.h>
#include <devrt/backend/module_image.hpp>
#include <devrt/backend/registry.hpp>
#include <devrt/backend/workspace_pool.hpp>
#include <devrt/detail/no_destroy.hpp>
#include <devrt/device.hpp>
#include <devrt/devrt.hpp>
#include <devrt/module.hpp>
#include <devrt/status.hpp>
#include <devrt/target.hpp>

namespace devrt {

using CopyDesc = devrt_copy_desc;
// A device as the core opened it (devrt/backend/backend_abi.h): its index, and the backend's state for it
// when the backend keeps one (BackendDeviceLifecycle). Owned by the core; one address from
// open_device to close_device.
using BackendDevice = devrt_backend_device;

// The backend's state of `device`, which its open_device set: backend_state<MyDevice>(device).
template <class T>
T& backend_state(const BackendDevice& device) noexcept {
  return *static_cast<T*>(device.state);
}

// A bounded, NUL-terminated text buffer a backend writes its build log into. Not thread-safe.
class BuildLog {
public:
  BuildLog(char* data, std::size_t capacity) noexcept : data_(data), capacity_(data != nullptr ? capacity : 0) {
    if (capacity_ > 0) data_[0] = '\0';
  }
  // Appends as much of `text` as fits.
  void append(std::string_view text) noexcept {
    if (capacity_ == 0) return;
    std::size_t room = capacity_ - 1 - size_;
    std::size_t n = text.size() < room ? text.size() : room;
    if (n > 0) std::char_traits<char>::copy(data_ + size_, text.data(), n);
    size_ += n;
    data_[size_] = '\0';
  }
  std::string_view view() const noexcept { return std::string_view(data_ != nullptr ? data_ : "", size_); }

private:
  char* data_;
  std::size_t capacity_;
  std::size_t size_ = 0;
};

// Static identity: `static constexpr std::string_view name = "cpu";` (a string literal) and
// `static constexpr DeviceKind kind = DeviceKind::cpu;`.
template <class B>
concept BackendIdentity = requires {
  { B::name } -> std::convertible_to<std::string_view>;
  { B::kind } -> std::convertible_to<DeviceKind>;
};

// Discovery. availability() is ok or `unavailable` with the reason (missing driver ...).
template <class B>
concept BackendDiscovery = requires(B& b, const BackendDevice& device, Attribute attribute) {
  { b.availability() } -> std::same_as<Status>;
  { b.device_count() } -> std::same_as<Result<std::int32_t>>;
  { b.get_attribute(device, attribute) } -> std::same_as<Result<AttributeValue>>;
};

// Memory and copies. allocate() never sees nbytes == 0 (the core answers that itself).
template <class B>
concept BackendMemory = requires(B& b, const BackendDevice& device, std::size_t n, void* p, const CopyDesc& copy) {
  { b.allocate(device, n, n) } -> std::same_as<Result<void*>>;
  { b.free(device, p) } -> std::same_as<Status>;
  { b.copy(copy) } -> std::same_as<Status>;
};

// Streams. A null stream handle names the device's default stream.
template <class B>
concept BackendStreams = requires(B& b, const BackendDevice& device, void* stream) {
  { b.stream_create(device) } -> std::same_as<Result<void*>>;
  { b.stream_destroy(device, stream) } -> std::same_as<Status>;
  { b.stream_synchronize(device, stream) } -> std::same_as<Status>;
};

// Optional: state per device. open_device may set device.state (to the backend's object for the
// device, see backend_state) and close_device frees it; without them a device has no state.
template <class B>
concept BackendDeviceLifecycle = requires(B& b, BackendDevice& device) {
  { b.open_device(device) } -> std::same_as<Status>;
  { b.close_device(device) } -> std::same_as<Status>;
};

// Everything a backend must provide.
template <class B>
concept Backend =
    std::default_initializable<B> && BackendIdentity<B> && BackendDiscovery<B> && BackendMemory<B> && BackendStreams<B>;

// Optional: events, and a stream waiting for an event.
template <class B>
concept BackendEvents = requires(B& b, const BackendDevice& device, void* event, void* stream) {
  { b.event_create(device) } -> std::same_as<Result<void*>>;
  { b.event_destroy(device, event) } -> std::same_as<Status>;
  { b.event_record(device, event, stream) } -> std::same_as<Status>;
  { b.event_synchronize(device, event) } -> std::same_as<Status>;
  { b.event_query(device, event) } -> std::same_as<Result<bool>>;
  { b.stream_wait_event(device, stream, event) } -> std::same_as<Status>;
};

// Optional, with BackendEvents: timed events (see devrt_backend_table.event_create_timed). An
// event_create_timed event is destroyed, recorded and waited for through the other event members;
// event_elapsed answers nanoseconds between two such events, recorded and complete.
template <class B>
concept BackendEventTiming = BackendEvents<B> && requires(B& b, const BackendDevice& device, void* event) {
  { b.event_create_timed(device) } -> std::same_as<Result<void*>>;
  { b.event_elapsed(device, event, event) } -> std::same_as<Result<std::int64_t>>;
};

// Optional, with BackendModules: graphs (see devrt_backend_table.graph_create). graph_create bakes
// checked launches and same-device copies into one replayable object, or answers unsupported.
template <class B>
concept BackendGraphs = requires(B& b, const BackendDevice& device, void* stream, void* graph,
                                 std::span<const devrt_graph_node> nodes) {
  { b.graph_create(device, stream, nodes) } -> std::same_as<Result<void*>>;
  { b.graph_launch(device, graph, stream) } -> std::same_as<Status>;
  { b.graph_destroy(device, graph) } -> std::same_as<Status>;
};

// Optional: `static constexpr bool host_accessible = true;` when allocations are host addresses.
template <class B>
concept HostAccessibleMemory = requires {
  requires B::host_accessible;
};

// Optional: `static constexpr bool addressable = true;` when allocations are addresses in one
// address space (offsets may be added to them; overlap can be judged by address).
template <class B>
concept AddressableMemory = HostAccessibleMemory<B> || requires {
  requires B::addressable;
};

// Optional: `static constexpr bool synchronous = true;` when every operation (copies, launches,
// frees) has finished when its call returns, so that freed memory may be handed out again at once
// (devrt's Buffer cache is used only for such backends).
template <class B>
concept SynchronousBackend = requires {
  requires B::synchronous;
};

// Optional: `static constexpr bool out_of_process = true;` when the devices live in another
// process (DEVRT_CAP_OUT_OF_PROCESS: remote).
template <class B>
concept OutOfProcessDevices = requires {
  requires B::out_of_process;
};

// Optional, with BackendModules: the formats one device loads (DEVRT_MODULE_FORMAT_BIT each), a
// subset of module_formats, for a backend whose devices differ (see
// devrt_backend_table.device_module_formats).
template <class B>
concept BackendDeviceModuleFormats = requires(B& b, const BackendDevice& device) {
  { b.device_module_formats(device) } -> std::same_as<Result<std::uint32_t>>;
};

// Optional: describes a device as a compiler target (see devrt/target.hpp).
template <class B>
concept BackendTargetDetection = requires(B& b, const BackendDevice& device) {
  { b.detect_target(device) } -> std::same_as<Result<Target>>;
};

// Optional, for backends whose facts are fixed when they are compiled (a DSP, firmware): string
// attributes as static text, `static std::string_view attribute_text(Attribute) noexcept` (empty
// for the ones get_attribute answers), and the target as static JSON in Target::to_json()'s form,
// `static std::string_view target_json() noexcept`. Neither builds a std::string or a Target, so
// an image with such a backend links no allocation for them.
template <class B>
concept StaticAttributeText = requires(Attribute attribute) {
  { B::attribute_text(attribute) }
  noexcept->std::same_as<std::string_view>;
};
template <class B>
concept StaticTargetJson = requires {
  { B::target_json() }
  noexcept->std::same_as<std::string_view>;
};

using LaunchDesc = devrt_launch_desc;

// Optional: kernel modules. `static constexpr ModuleFormat module_formats[] = {...};` lists the
// formats module_load accepts (the core refuses others before the call); module_load gets the raw
// bytes (never empty) of one of them, NUL-terminated compiler options and a log to fill (build log,
// validation message); module_function looks a kernel up by name; launch runs it with arguments the
// core has checked (buffers on this device, inside their allocation; grid and block extents >= 1).
template <class B>
concept BackendModules = requires(B& b, const BackendDevice& device, void* handle, ModuleFormat format,
                                  std::span<const std::byte> data, const char* text, BuildLog& log,
                                  const LaunchDesc& launch) {
  {std::span<const ModuleFormat>(B::module_formats)};
  { b.module_load(device, format, data, text, log) } -> std::same_as<Result<void*>>;
  { b.module_unload(device, handle) } -> std::same_as<Status>;
  { b.module_function(device, handle, text) } -> std::same_as<Result<void*>>;
  { b.launch(device, handle, launch) } -> std::same_as<Status>;
};

// Optional, with BackendModules: `static constexpr bool checked_launch_arguments = true;` when
// launch refuses arguments that do not match the kernel's parameters, naming its signature.
template <class B>
concept CheckedLaunchArguments = requires {
  requires B::checked_launch_arguments;
};

// Optional, with BackendModules and BackendTextures: `static constexpr bool texture_arguments =
// true;` when kernels take textures as arguments.
template <class B>
concept TextureArguments = requires {
  requires B::texture_arguments;
};

namespace detail {
template <class B>
constexpr std::uint32_t module_format_bits() noexcept {
  std::uint32_t bits = 0;
  for (ModuleFormat format : B::module_formats) bits |= DEVRT_MODULE_FORMAT_BIT(static_cast<std::uint32_t>(format));
  return bits;
}
} // namespace detail

// Optional: waits for everything queued on every stream of a device (see devrt::synchronize(Device)).
template <class B>
concept BackendDeviceSynchronize = requires(B& b, const BackendDevice& device) {
  { b.device_synchronize(device) } -> std::same_as<Status>;
};

// Optional: a loaded module as bytes that module_load accepts again (OpenCL program binaries).
template <class B>
concept BackendModuleBinary = requires(B& b, const BackendDevice& device, void* handle) {
  { b.module_binary(device, handle) } -> std::same_as<Result<ModuleBinary>>;
};

// Optional, with BackendModules: the instructions module_load rewrote in a module to define what
// its format leaves undefined (see devrt_backend_table.module_rewrites).
template <class B>
concept BackendModuleRewrites = requires(B& b, const BackendDevice& device, void* handle) {
  { b.module_rewrites(device, handle) } -> std::same_as<Result<std::uint32_t>>;
};

// Optional: memory scopes besides "global" (devrt/device.hpp). scope_limits answers
// `unsupported` for a scope the device lacks.
template <class B>
concept BackendScopes = requires(B& b, const BackendDevice& device, MemoryScope scope) {
  { b.scope_limits(device, scope) } -> std::same_as<Result<ScopeLimits>>;
};

// Optional, with BackendScopes: textures. texture_allocate gets a desc checked against
// scope_limits; texture_copy moves a whole texture to or from compact rows of linear memory.
template <class B>
concept BackendTextures = BackendScopes<B> &&
    requires(B& b, const BackendDevice& device, void* texture, const devrt_texture_desc& desc,
             const devrt_texture_copy_desc& copy) {
  { b.texture_allocate(device, desc) } -> std::same_as<Result<void*>>;
  { b.texture_free(device, texture) } -> std::same_as<Status>;
  { b.texture_copy(copy) } -> std::same_as<Status>;
};

// Optional, with BackendTextures: a texture over an allocation of the backend (see
// devrt_texture_view_desc), freed with texture_free; fills desc.row_pitch and desc.bytes.
template <class B>
concept BackendTextureViews = BackendTextures<B> &&
    requires(B& b, const BackendDevice& device, devrt_texture_view_desc& desc) {
  { b.texture_view(device, desc) } -> std::same_as<Result<void*>>;
};

// Optional, with BackendScopes: flat memory in another scope (Hexagon's VTCM), freed with free().
template <class B>
concept BackendScopedMemory = BackendScopes<B> &&
    requires(B& b, const BackendDevice& device, MemoryScope scope, std::size_t n) {
  { b.scope_allocate(device, scope, n, n) } -> std::same_as<Result<void*>>;
};

namespace detail {

// The one instance of a backend type in this process, created on first use, never destroyed.
// A stateless backend (an empty, trivial type: cpu, hexagon) is constant-initialised: no guard
// variable, nothing to run, so a compile-time call through it inlines to the operation itself.
template <class B>
B& backend_instance() noexcept {
  if constexpr (std::is_empty_v<B> && std::is_trivially_default_constructible_v<B> &&
                std::is_trivially_destructible_v<B>) {
    static constinit B instance{};
    return instance;
  } else {
    static NoDestroy<B> instance;
    return instance.get();
  }
}

// A failure crosses the C table as a code and a reason in err->message, which the core prefixes
// with backend, device and call. When the caller's buffer accepts it (DEVRT_ERROR_ACCEPTS_HANDOVER,
// devrt/backend/backend_abi.h; the core's calls do), the thunk hands over the Status's own message instead
// of copying it into the buffer: untruncated, and not copied back out.

inline std::int32_t export_status(const Status& status, devrt_error* err) noexcept {
  if (status.ok()) return 0;
  if (err != nullptr) {
    std::string_view message = status.message();
    std::size_t n = message.size() < DEVRT_ERROR_MESSAGE_CAPACITY ? message.size() : DEVRT_ERROR_MESSAGE_CAPACITY - 1;
    for (std::size_t i = 0; i < n; ++i) err->message[i] = message[i];
    err->message[n] = '\0';
  }
  return static_cast<std::int32_t>(status.code());
}

inline std::int32_t export_status(Status&& status, devrt_error* err) noexcept {
  if (!status.ok() && err != nullptr && err->message[0] == '\0' && err->message[1] == DEVRT_ERROR_ACCEPTS_HANDOVER) {
    auto code = static_cast<std::int32_t>(status.code());
    char* message = StatusAccess::release(status);
    std::char_traits<char>::copy(err->message + DEVRT_ERROR_HANDOVER_OFFSET, reinterpret_cast<const char*>(&message),
                                 sizeof message);
    err->message[1] = DEVRT_ERROR_HANDED_OVER;
    return code;
  }
  return export_status(static_cast<const Status&>(status), err);
}

void export_attribute(const AttributeValue& value, devrt_attribute_value* out) noexcept;
// A string attribute, cut to DEVRT_ATTRIBUTE_STRING_CAPACITY - 1 bytes.
void export_attribute_text(std::string_view text, devrt_attribute_value* out) noexcept;
// Copies `json` and its NUL into out[0..capacity), or returns out_of_range with *needed set.
std::int32_t export_json(std::string_view json, char* out, std::size_t capacity, std::size_t* needed,
                         devrt_error* err) noexcept;

// Copies `bytes` into out[0..capacity), or returns out_of_range with *needed set.
std::int32_t export_bytes(std::string_view bytes, void* out, std::size_t capacity, std::size_t* needed,
                          devrt_error* err) noexcept;

// Stores a Result's value through `out` (converted to the C type) or exports its error.
template <class T, class Out>
std::int32_t export_result(Result<T>&& result, Out* out, devrt_error* err) noexcept {
  if (!result.ok()) return export_status(detail::move(result).status(), err);
  *out = static_cast<Out>(*result);
  return 0;
}

template <class B>
struct Thunks {
  static B& self() noexcept { return backend_instance<B>(); }

  static std::int32_t availability(void*, devrt_error* err) noexcept {
    return export_status(self().availability(), err);
  }
  static std::int32_t open_device(devrt_backend_device* device, devrt_error* err) noexcept {
    if constexpr (BackendDeviceLifecycle<B>) return export_status(self().open_device(*device), err);
    static_cast<void>(device);
    static_cast<void>(err);
    return 0;
  }
  static std::int32_t close_device(devrt_backend_device* device, devrt_error* err) noexcept {
    if constexpr (BackendDeviceLifecycle<B>) return export_status(self().close_device(*device), err);
    device->state = nullptr;
    static_cast<void>(err);
    return 0;
  }
  static std::int32_t device_count(void*, std::int32_t* out, devrt_error* err) noexcept {
    return export_result(self().device_count(), out, err);
  }
  static std::int32_t get_attribute(const devrt_backend_device* device, std::int32_t attribute,
                                    devrt_attribute_value* out, devrt_error* err) noexcept {
    if constexpr (StaticAttributeText<B>) {
      if (std::string_view text = B::attribute_text(static_cast<Attribute>(attribute)); !text.empty()) {
        export_attribute_text(text, out);
        return 0;
      }
    }
    Result<AttributeValue> value = self().get_attribute(*device, static_cast<Attribute>(attribute));
    if (!value.ok()) return export_status(detail::move(value).status(), err);
    export_attribute(*value, out);
    return 0;
  }
  static std::int32_t allocate(const devrt_backend_device* device, std::size_t nbytes, std::size_t alignment,
                               void** out, devrt_error* err) noexcept {
    return export_result(self().allocate(*device, nbytes, alignment), out, err);
  }
  static std::int32_t free(const devrt_backend_device* device, void* ptr, devrt_error* err) noexcept {
    return export_status(self().free(*device, ptr), err);
  }
  static std::int32_t copy(void*, const devrt_copy_desc* desc, devrt_error* err) noexcept {
    return export_status(self().copy(*desc), err);
  }
  static std::int32_t stream_create(const devrt_backend_device* device, void** out, devrt_error* err) noexcept {
    return export_result(self().stream_create(*device), out, err);
  }
  static std::int32_t stream_destroy(const devrt_backend_device* device, void* stream, devrt_error* err) noexcept {
    return export_status(self().stream_destroy(*device, stream), err);
  }
  static std::int32_t stream_synchronize(const devrt_backend_device* device, void* stream, devrt_error* err) noexcept {
    return export_status(self().stream_synchronize(*device, stream), err);
  }
  static std::int32_t event_create_timed(const devrt_backend_device* device, void** out, devrt_error* err) noexcept {
    return export_result(self().event_create_timed(*device), out, err);
  }
  static std::int32_t event_elapsed(const devrt_backend_device* device, void* start, void* end, std::int64_t* out,
                                    devrt_error* err) noexcept {
    return export_result(self().event_elapsed(*device, start, end), out, err);
  }
  static std::int32_t graph_create(const devrt_backend_device* device, void* stream, const devrt_graph_node* nodes,
                                   std::size_t count, void** out, devrt_error* err) noexcept {
    return export_result(self().graph_create(*device, stream, std::span<const devrt_graph_node>(nodes, count)), out,
                         err);
  }
  static std::int32_t graph_launch(const devrt_backend_device* device, void* graph, void* stream,
                                   devrt_error* err) noexcept {
    return export_status(self().graph_launch(*device, graph, stream), err);
  }
  static std::int32_t graph_destroy(const devrt_backend_device* device, void* graph, devrt_error* err) noexcept {
    return export_status(self().graph_destroy(*device, graph), err);
  }
  static std::int32_t device_synchronize(const devrt_backend_device* device, devrt_error* err) noexcept {
    return export_status(self().device_synchronize(*device), err);
  }
  static std::int32_t event_create(const devrt_backend_device* device, void** out, devrt_error* err) noexcept {
    return export_result(self().event_create(*device), out, err);
  }
  static std::int32_t event_destroy(const devrt_backend_device* device, void* event, devrt_error* err) noexcept {
    return export_status(self().event_destroy(*device, event), err);
  }
  static std::int32_t event_record(const devrt_backend_device* device, void* event, void* stream,
                                   devrt_error* err) noexcept {
    return export_status(self().event_record(*device, event, stream), err);
  }
  static std::int32_t event_synchronize(const devrt_backend_device* device, void* event, devrt_error* err) noexcept {
    return export_status(self().event_synchronize(*device, event), err);
  }
  static std::int32_t event_query(const devrt_backend_device* device, void* event, std::int32_t* out,
                                  devrt_error* err) noexcept {
    return export_result(self().event_query(*device, event), out, err);
  }
  static std::int32_t stream_wait_event(const devrt_backend_device* device, void* stream, void* event,
                                        devrt_error* err) noexcept {
    return export_status(self().stream_wait_event(*device, stream, event), err);
  }
  static std::int32_t module_load(const devrt_backend_device* device, std::int32_t format, const void* data,
                                  std::size_t size, const char* options, void** out, char* log,
                                  std::size_t log_capacity, devrt_error* err) noexcept {
    BuildLog build_log(log, log_capacity);
    return export_result(self().module_load(*device, static_cast<ModuleFormat>(format),
                                            std::span<const std::byte>(static_cast<const std::byte*>(data), size),
                                            options, build_log),
                         out, err);
  }
  static std::int32_t device_module_formats(const devrt_backend_device* device, std::uint32_t* out,
                                            devrt_error* err) noexcept {
    Result<std::uint32_t> formats = self().device_module_formats(*device);
    if (!formats.ok()) return export_status(detail::move(formats).status(), err);
    *out = *formats;
    return 0;
  }
  static std::int32_t module_rewrites(const devrt_backend_device* device, void* module, std::uint32_t* out,
                                      devrt_error* err) noexcept {
    Result<std::uint32_t> count = self().module_rewrites(*device, module);
    if (!count.ok()) return export_status(detail::move(count).status(), err);
    *out = *count;
    return 0;
  }
  static std::int32_t module_unload(const devrt_backend_device* device, void* module, devrt_error* err) noexcept {
    return export_status(self().module_unload(*device, module), err);
  }
  static std::int32_t module_function(const devrt_backend_device* device, void* module, const char* name, void** out,
                                      devrt_error* err) noexcept {
    return export_result(self().module_function(*device, module, name), out, err);
  }
  static std::int32_t launch(const devrt_backend_device* device, void* function, const devrt_launch_desc* desc,
                             devrt_error* err) noexcept {
    return export_status(self().launch(*device, function, *desc), err);
  }
  static std::int32_t module_binary(const devrt_backend_device* device, void* module, std::int32_t* out_format,
                                    void* out, std::size_t capacity, std::size_t* needed, devrt_error* err) noexcept {
    Result<ModuleBinary> binary = self().module_binary(*device, module);
    if (!binary.ok()) return export_status(detail::move(binary).status(), err);
    *out_format = static_cast<std::int32_t>(binary->format);
    return export_bytes(binary->bytes, out, capacity, needed, err);
  }
  static std::int32_t scope_limits(const devrt_backend_device* device, std::int32_t scope, devrt_scope_limits* out,
                                   devrt_error* err) noexcept {
    Result<ScopeLimits> limits = self().scope_limits(*device, static_cast<MemoryScope>(scope));
    if (!limits.ok()) return export_status(detail::move(limits).status(), err);
    *out = devrt_scope_limits{limits->max_width, limits->max_height, limits->max_bytes, limits->half_texels ? 1 : 0, 0,
                              limits->max_layers};
    return 0;
  }
  static std::int32_t scope_allocate(const devrt_backend_device* device, std::int32_t scope, std::size_t nbytes,
                                     std::size_t alignment, void** out, devrt_error* err) noexcept {
    return export_result(self().scope_allocate(*device, static_cast<MemoryScope>(scope), nbytes, alignment), out, err);
  }
  static std::int32_t texture_allocate(const devrt_backend_device* device, const devrt_texture_desc* desc, void** out,
                                       devrt_error* err) noexcept {
    return export_result(self().texture_allocate(*device, *desc), out, err);
  }
  static std::int32_t texture_free(const devrt_backend_device* device, void* texture, devrt_error* err) noexcept {
    return export_status(self().texture_free(*device, texture), err);
  }
  static std::int32_t texture_copy(void*, const devrt_texture_copy_desc* desc, devrt_error* err) noexcept {
    return export_status(self().texture_copy(*desc), err);
  }
  static std::int32_t texture_view(const devrt_backend_device* device, devrt_texture_view_desc* desc, void** out,
                                   devrt_error* err) noexcept {
    return export_result(self().texture_view(*device, *desc), out, err);
  }
  static std::int32_t detect_target(const devrt_backend_device* device, char* json, std::size_t capacity,
                                    std::size_t* needed, devrt_error* err) noexcept {
    Result<Target> target = self().detect_target(*device);
    if (!target.ok()) return export_status(detail::move(target).status(), err);
    return export_json(target->to_json(), json, capacity, needed, err);
  }
  static std::int32_t static_target(const devrt_backend_device*, char* json, std::size_t capacity, std::size_t* needed,
                                    devrt_error* err) noexcept {
    return export_json(B::target_json(), json, capacity, needed, err);
  }
};

} // namespace detail

// The C-ABI table for backend type B, built at compile time. A type that misses a required
// operation stops compilation here with a diagnostic naming devrt::Backend.
template <class B>
constexpr devrt_backend_table make_backend_table() noexcept {
  static_assert(Backend<B>, "this type does not satisfy the devrt::Backend concept (see devrt/backend/backend.hpp)");
  devrt_backend_table table{};
  if constexpr (Backend<B>) {
    using T = detail::Thunks<B>;
    table.abi_version = DEVRT_BACKEND_ABI_VERSION;
    table.struct_size = sizeof(devrt_backend_table);
    table.name = std::string_view(B::name).data();
    table.device_kind = static_cast<std::int32_t>(static_cast<DeviceKind>(B::kind));
    table.capabilities =
        (BackendEvents<B> ? DEVRT_CAP_EVENTS : 0u) | (HostAccessibleMemory<B> ? DEVRT_CAP_HOST_ACCESSIBLE : 0u) |
        (AddressableMemory<B> ? DEVRT_CAP_ADDRESSABLE : 0u) | (SynchronousBackend<B> ? DEVRT_CAP_SYNCHRONOUS : 0u) |
        (BackendModules<B> && CheckedLaunchArguments<B> ? DEVRT_CAP_CHECKED_LAUNCH_ARGUMENTS : 0u) |
        (BackendModules<B> && BackendTextures<B> && TextureArguments<B> ? DEVRT_CAP_TEXTURE_ARGUMENTS : 0u) |
        (OutOfProcessDevices<B> ? DEVRT_CAP_OUT_OF_PROCESS : 0u);
    table.availability = &T::availability;
    table.device_count = &T::device_count;
    table.open_device = &T::open_device;
    table.close_device = &T::close_device;
    table.get_attribute = &T::get_attribute;
    table.allocate = &T::allocate;
    table.free = &T::free;
    table.copy = &T::copy;
    table.stream_create = &T::stream_create;
    table.stream_destroy = &T::stream_destroy;
    table.stream_synchronize = &T::stream_synchronize;
    if constexpr (BackendEvents<B>) {
      table.event_create = &T::event_create;
      table.event_destroy = &T::event_destroy;
      table.event_record = &T::event_record;
      table.event_synchronize = &T::event_synchronize;
      table.event_query = &T::event_query;
      table.stream_wait_event = &T::stream_wait_event;
    }
    if constexpr (BackendEventTiming<B>) {
      table.event_create_timed = &T::event_create_timed;
      table.event_elapsed = &T::event_elapsed;
    }
    if constexpr (BackendTargetDetection<B>) {
      table.detect_target = &T::detect_target;
    } else if constexpr (StaticTargetJson<B>) {
      table.detect_target = &T::static_target;
    }
    if constexpr (BackendModules<B>) {
      table.module_load = &T::module_load;
      table.module_unload = &T::module_unload;
      table.module_function = &T::module_function;
      table.launch = &T::launch;
      table.module_formats = detail::module_format_bits<B>();
    }
    if constexpr (BackendModules<B> && BackendDeviceModuleFormats<B>) {
      table.device_module_formats = &T::device_module_formats;
    }
    if constexpr (BackendModuleBinary<B>) table.module_binary = &T::module_binary;
    if constexpr (BackendModules<B> && BackendModuleRewrites<B>) table.module_rewrites = &T::module_rewrites;
    if constexpr (BackendModules<B> && BackendGraphs<B>) {
      table.graph_create = &T::graph_create;
      table.graph_launch = &T::graph_launch;
      table.graph_destroy = &T::graph_destroy;
    }
    if constexpr (BackendDeviceSynchronize<B>) table.device_synchronize = &T::device_synchronize;
    if constexpr (BackendScopes<B>) table.scope_limits = &T::scope_limits;
    if constexpr (BackendScopedMemory<B>) table.scope_allocate = &T::scope_allocate;
    if constexpr (BackendTextures<B>) {
      table.texture_allocate = &T::texture_allocate;
      table.texture_free = &T::texture_free;
      table.texture_copy = &T::texture_copy;
    }
    if constexpr (BackendTextureViews<B>) table.texture_view = &T::texture_view;
  }
  return table;
}

namespace detail {
// A backend type's name, for DEVRT_REGISTER_BACKEND's check that it matches the identifier.
template <class B>
inline constexpr std::string_view backend_name_v = B::name;

// True when no two of the device kinds are equal: the compiled-in backends' kinds must be (the
// generated list of built-in backends static_asserts it; Meson refuses the build first).
constexpr bool device_kinds_distinct(std::initializer_list<std::int32_t> kinds) noexcept {
  for (const std::int32_t* a = kinds.begin(); a != kinds.end(); ++a) {
    for (const std::int32_t* b = a + 1; b != kinds.end(); ++b) {
      if (*a == *b) return false;
    }
  }
  return true;
}

// Adds a table to Registry::global() at static-initialisation time; failures are logged.
struct BackendRegistrar {
  explicit BackendRegistrar(const devrt_backend_table* table) noexcept;
};
} // namespace detail

} // namespace devrt

// Registers backend type `...` under the identifier `id` (its name, e.g. cpu). Defines the table
// `devrt_backend_table_<id>` (constant-initialised data) and the extern "C" anchor
// `devrt_backend_anchor_<id>()` returning it, plus a static registrar. Backends built into libdevrt
// (DEVRT_BUILDING_DEVRT) get no registrar: they are listed in a generated table of anchors that the registry
// references, so they survive static linking even where static constructors never run; out-of-library backends rely on
// the registrar. Use at namespace scope, once per backend. Compiled with DEVRT_BUILDING_PLUGIN defined (a plugin), only
// the anchor is defined: the plugin's DEVRT_PLUGIN_ENTRY hands its tables to the loader instead.
#define DEVRT_BACKEND_ANCHOR(id, ...)                                                                                  \
  static_assert(::devrt::detail::backend_name_v<__VA_ARGS__> == #id,                                                   \
                "DEVRT_REGISTER_BACKEND(" #id ", ...): the type's `name` must be \"" #id "\"");                        \
  extern "C" constinit const ::devrt_backend_table devrt_backend_table_##id =                                          \
      ::devrt::make_backend_table<__VA_ARGS__>();                                                                      \
  extern "C" const ::devrt_backend_table* devrt_backend_anchor_##id(void) noexcept { return &devrt_backend_table_##id; }
#if defined(DEVRT_BUILDING_PLUGIN) || defined(DEVRT_BUILDING_DEVRT)
// Plugins hand their tables to the loader; devrt's built-in backends are registered from the
// generated list of anchors, without static constructors (firmware may not run them).
#define DEVRT_REGISTER_BACKEND(id, ...) DEVRT_BACKEND_ANCHOR(id, __VA_ARGS__)
#else
#define DEVRT_REGISTER_BACKEND(id, ...)                                                                                \
  DEVRT_BACKEND_ANCHOR(id, __VA_ARGS__)                                                                                \
  namespace {                                                                                                          \
  [[maybe_unused]] const ::devrt::detail::BackendRegistrar devrt_backend_registrar_##id{devrt_backend_anchor_##id()};  \
  }
#endif

// Defines a plugin's entry point (DEVRT_PLUGIN_ENTRY_SYMBOL), handing the loader the tables of
// the listed backends: DEVRT_PLUGIN_ENTRY(devrt_backend_anchor_cuda(), devrt_backend_anchor_cuda_host()).
// Use once per shared object, at namespace scope, after the backends' DEVRT_REGISTER_BACKEND.
#define DEVRT_PLUGIN_ENTRY(...)                                                                                        \
  extern "C" [[gnu::visibility("default")]] const ::devrt_plugin_info* devrt_plugin_entry(void) noexcept {             \
    static const ::devrt_backend_table* const devrt_plugin_tables[] = {__VA_ARGS__};                                   \
    static const ::devrt_plugin_info devrt_plugin_info_value = {                                                       \
        DEVRT_BACKEND_ABI_VERSION, sizeof(::devrt_plugin_info),                                                        \
        static_cast<::std::uint32_t>(sizeof devrt_plugin_tables / sizeof devrt_plugin_tables[0]),                      \
        devrt_plugin_tables};                                                                                          \
    return &devrt_plugin_info_value;                                                                                   \
  }

#endif // DEVRT_BACKEND_BACKEND_HPP
