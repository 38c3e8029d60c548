// SPDX-License-Identifier: Apache-2.0
// The compile-time path: devrt's operations for a backend type known when the code is compiled,
// as direct calls the compiler can inline. No C table, no registry lookup, no dlopen.
//
//   using Cpu = devrt::cpu::CpuBackend;
//   auto buffer = devrt::direct::Buffer<Cpu>::allocate(devrt::kHostDevice, 256);
//   devrt::Status s = devrt::direct::copy<Cpu>(devrt::host_span(in, 256), *buffer);
//
// The semantics are the run-time path's (devrt/memory.hpp, stream.hpp, module.hpp): the same
// argument checks (devrt/backend/detail/memory_checks.hpp and module_checks.hpp are shared by both), the same error
// codes, messages that name the device and the call. What differs:
// - only backend B's devices and host memory (cpu:0) are reachable: a copy to another backend's
//   memory is invalid_argument (the run-time path stages it);
// - there is no current stream: an omitted stream is the device's default stream (null handle);
// - there is no Buffer cache: every allocation is B's own.
// Both paths use the same backend instance, so their buffers and streams may be mixed freely
// through MemorySpan and StreamRef. docs/architecture.md says when to use which.
#ifndef DEVRT_BACKEND_DIRECT_HPP
#define DEVRT_BACKEND_DIRECT_HPP

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <utility>

#include <devrt/backend/backend.hpp>
#include <devrt/backend/detail/memory_checks.hpp>
#include <devrt/backend/detail/module_checks.hpp>
#include <devrt/log.hpp>
#include <devrt/memory.hpp>
#include <devrt/module.hpp>
#include <devrt/stream.hpp>

// Declares `name`, the device object of B's device `id` (detail::device_object), returning its
// error from the enclosing function when it cannot be opened.
#define DEVRT_DIRECT_DEVICE(name, id)                                                                                  \
  const auto name##_object = detail::device_object<B>(id);                                                             \
  if (!detail::opened(name##_object)) [[unlikely]]                                                                     \
    return detail::open_error(name##_object);                                                                          \
  const BackendDevice& name = detail::object_of(name##_object)

namespace devrt::direct {

// The process's one instance of B, shared with the registry's table for B. Thread-safe as B is.
template <Backend B>
B& backend() noexcept {
  return detail::backend_instance<B>();
}

namespace detail {

// The device the core opened for a backend with per-device state (BackendDeviceLifecycle): the
// global registry's record of `device`, opened on first use. Thread-safe.
Result<const BackendDevice*> registered_device(Device device) noexcept;

// The device object B's operations take: for a backend without per-device state its index alone,
// a plain value (nothing to look up or check: the compile-time path stays free of the registry and
// the call inlines to the operation); else the core's, a Result.
template <Backend B>
inline auto device_object(std::int32_t id) noexcept {
  if constexpr (BackendDeviceLifecycle<B>) {
    Result<const BackendDevice*> opened = registered_device(Device{B::kind, id});
    if (!opened.ok()) [[unlikely]]
      return Result<BackendDevice>(std::move(opened).status());
    return Result<BackendDevice>(**opened);
  } else {
    return BackendDevice{id, 0, nullptr, nullptr};
  }
}
constexpr bool opened(const BackendDevice&) noexcept { return true; }
inline bool opened(const Result<BackendDevice>& device) noexcept { return device.ok(); }
constexpr const BackendDevice& object_of(const BackendDevice& device) noexcept { return device; }
inline const BackendDevice& object_of(const Result<BackendDevice>& device) noexcept { return *device; }
inline Status open_error(const BackendDevice&) noexcept { return Status(); }
inline Status open_error(const Result<BackendDevice>& device) noexcept { return device.status(); }

// invalid_argument (no such device of B, or another kind), or B's reason when it has no devices.
template <Backend B>
[[gnu::cold, gnu::noinline]] Status device_error(Device device) noexcept {
  if (device.kind != B::kind) {
    return make_error(ErrorCode::invalid_argument, "no device ", device, " on the compile-time path of the ", B::name,
                      " backend");
  }
  Result<std::int32_t> count = backend<B>().device_count();
  if (!count.ok()) return std::move(count).status();
  if (*count == 0) {
    DEVRT_RETURN_IF_ERROR(backend<B>().availability());
  }
  return make_error(ErrorCode::invalid_argument, "no device ", device, " (the ", B::name, " backend has ", *count,
                    *count == 1 ? " device)" : " devices)");
}

// "<device> <call>: <B's message>", keeping B's code.
[[gnu::cold]] Status call_error(Device device, const char* call, const Status& status) noexcept;
[[gnu::cold]] Status allocation_error(Device device, std::size_t nbytes, std::size_t alignment,
                                      const Status& status) noexcept;
// B's module_load error with the first 255 bytes of its build log.
[[gnu::cold]] Status module_load_error(Device device, const Status& status, std::string_view log) noexcept;
// invalid_argument: a copy the compile-time path of `backend_name` cannot reach.
[[gnu::cold]] Status copy_reach_error(std::string_view backend_name, const MemorySpan& src,
                                      const MemorySpan& dst) noexcept;
// invalid_argument: an empty Stream, Event, Module or Function.
[[gnu::cold]] Status empty_handle_error(const char* what) noexcept;

// B's free of `data`, an allocation of B's device `device`.
template <Backend B>
Status free_memory(Device device, void* data) noexcept {
  const auto object = device_object<B>(device.id);
  Status status = opened(object) ? backend<B>().free(object_of(object), data) : open_error(object);
  if (!status.ok()) [[unlikely]]
    status = call_error(device, "free", status);
  return status;
}

// A Buffer is freeing `bytes` at `data`: when a live graph touches that memory (devrt/graph.hpp),
// the graph keeps it and frees it with `free` once destroyed; true then. Thread-safe.
#if DEVRT_BARE_METAL
inline bool graph_keeps_direct(Device, void*, std::size_t, Status (*)(Device, void*) noexcept) noexcept {
  return false; // firmware has no graphs
}
#else
bool graph_keeps_direct(Device device, void* data, std::size_t bytes,
                        Status (*free)(Device device, void* data) noexcept) noexcept;
#endif

} // namespace detail

// Ok when `device` is one of B's devices. Thread-safe.
template <Backend B>
Status check_device(Device device) noexcept {
  if (device.kind == B::kind && device.id >= 0) [[likely]] {
    Result<std::int32_t> count = backend<B>().device_count();
    if (count.ok() && device.id < *count) [[likely]]
      return Status();
  }
  return detail::device_error<B>(device);
}

// An owned allocation of B, freed when it dies (errors are logged). Move-only; zero-size
// Buffers hold no memory. Not thread-safe to mutate concurrently.
template <Backend B>
class Buffer {
public:
  Buffer() noexcept = default;
  Buffer(Buffer&& other) noexcept
      : device_(other.device_), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  Buffer& operator=(Buffer&& other) noexcept {
    if (this != &other) {
      static_cast<void>(reset());
      device_ = other.device_;
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  ~Buffer() {
    Status status = reset();
    if (!status.ok()) DEVRT_LOG(error, "Buffer: ", status.message());
  }

  // As devrt::Buffer::allocate: invalid_argument (bad device or alignment), out_of_memory.
  // Thread-safe.
  static Result<Buffer> allocate(Device device, std::size_t nbytes,
                                 std::size_t alignment = kDefaultAlignment) noexcept {
    if (!devrt::detail::alignment_ok(alignment)) [[unlikely]]
      return devrt::detail::allocation_alignment_error(device, nbytes, alignment);
    DEVRT_RETURN_IF_ERROR(check_device<B>(device));
    if (nbytes == 0) return Buffer(device, nullptr, 0);
    if (nbytes > static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max())) [[unlikely]]
      return devrt::detail::allocation_size_error(device, nbytes, alignment);
    DEVRT_DIRECT_DEVICE(object, device.id);
    Result<void*> data = backend<B>().allocate(object, nbytes, alignment);
    if (!data.ok()) [[unlikely]]
      return detail::allocation_error(device, nbytes, alignment, data.status());
    return Buffer(device, *data, nbytes);
  }

  // Takes ownership of `nbytes` at `data`, which B allocated on `device` through a call of its
  // own (a scoped allocation, say): freed with B's free.
  static Buffer adopt(Device device, void* data, std::size_t nbytes) noexcept { return Buffer(device, data, nbytes); }

  Device device() const noexcept { return device_; }
  void* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  MemorySpan span() const noexcept { return MemorySpan{device_, data_, size_}; }
  operator MemorySpan() const noexcept { return span(); } // NOLINT(google-explicit-constructor)

  // Frees the memory now and returns B's answer; memory a live graph touches is freed when the
  // graph is destroyed instead (devrt/graph.hpp).
  Status reset() noexcept {
    Status status = data_ != nullptr && !detail::graph_keeps_direct(device_, data_, size_, &detail::free_memory<B>)
                        ? detail::free_memory<B>(device_, data_)
                        : Status();
    data_ = nullptr;
    size_ = 0;
    return status;
  }

private:
  Buffer(Device device, void* data, std::size_t size) noexcept : device_(device), data_(data), size_(size) {}
  Device device_;
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

// As devrt::copy, for spans on B's devices or host memory. Checks first: ranges inside the spans
// (out_of_range), null data (invalid_argument), devices (invalid_argument), overlap
// (invalid_argument); nbytes == 0 is a no-op. Runs on B's side of the copy (the destination,
// unless it is host memory and the source is on B), on `stream` or that device's default stream;
// complete once that stream is synchronized. Thread-safe.
template <Backend B>
Status copy(const MemorySpan& src, std::size_t src_offset, const MemorySpan& dst, std::size_t dst_offset,
            std::size_t nbytes, StreamRef stream = {}) noexcept {
  if (!devrt::detail::copy_range_ok(src.size, src.data, src_offset, nbytes)) [[unlikely]]
    return devrt::detail::copy_range_error("source", src, src_offset, nbytes);
  if (!devrt::detail::copy_range_ok(dst.size, dst.data, dst_offset, nbytes)) [[unlikely]]
    return devrt::detail::copy_range_error("destination", dst, dst_offset, nbytes);
  const bool src_on_b = src.device.kind == B::kind;
  const bool dst_on_b = dst.device.kind == B::kind;
  if ((!src_on_b && src.device != kHostDevice) || (!dst_on_b && dst.device != kHostDevice)) [[unlikely]]
    return detail::copy_reach_error(B::name, src, dst);
  if (src_on_b) DEVRT_RETURN_IF_ERROR(check_device<B>(src.device));
  if (dst_on_b && dst.device != src.device) DEVRT_RETURN_IF_ERROR(check_device<B>(dst.device));
  if (nbytes == 0) return Status();
  // The run-time path's overlap rule: by address where both sides are addresses.
  const bool both_host = (!src_on_b || HostAccessibleMemory<B>)&&(!dst_on_b || HostAccessibleMemory<B>);
  const bool by_address = both_host || (src.device == dst.device && AddressableMemory<B>);
  const bool overlap = devrt::detail::copy_ranges_overlap(src, src_offset, dst, dst_offset, nbytes, by_address);
  if (overlap) [[unlikely]]
    return devrt::detail::copy_overlap_error(src, src_offset, dst, dst_offset, nbytes);
  // B's side runs it: device -> host is the device's DMA; otherwise the destination.
  const Device side = (src_on_b && !dst_on_b && B::kind != DeviceKind::cpu) ? src.device : dst.device;
  if (stream.device != side && stream != StreamRef{}) [[unlikely]]
    return devrt::detail::copy_stream_error(src, dst, stream.device, side, false);
  CopyDesc desc = devrt::detail::make_copy_desc(src, src_offset, dst, dst_offset, nbytes, stream.handle);
  const auto src_object = detail::device_object<B>(src.device.id);
  const auto dst_object = detail::device_object<B>(dst.device.id);
  if (src_on_b) {
    if (!detail::opened(src_object)) [[unlikely]]
      return detail::open_error(src_object);
    desc.src_device = &detail::object_of(src_object);
  }
  if (dst_on_b) {
    if (!detail::opened(dst_object)) [[unlikely]]
      return detail::open_error(dst_object);
    desc.dst_device = &detail::object_of(dst_object);
  }
  Status status = backend<B>().copy(desc);
  if (!status.ok()) [[unlikely]]
    return detail::call_error(side, "copy", status);
  return status;
}

// Whole-span copy; sizes must match.
template <Backend B>
Status copy(const MemorySpan& src, const MemorySpan& dst, StreamRef stream = {}) noexcept {
  if (src.size != dst.size) [[unlikely]]
    return devrt::detail::whole_copy_size_error(src, dst);
  return copy<B>(src, 0, dst, 0, src.size, stream);
}

// Waits until everything queued on `stream` (null handle: the device's default stream) has run.
// Thread-safe.
template <Backend B>
Status synchronize(StreamRef stream) noexcept {
  DEVRT_RETURN_IF_ERROR(check_device<B>(stream.device));
  DEVRT_DIRECT_DEVICE(object, stream.device.id);
  Status status = backend<B>().stream_synchronize(object, stream.handle);
  if (!status.ok()) [[unlikely]]
    return detail::call_error(stream.device, "stream_synchronize", status);
  return status;
}

// A stream of B, destroyed when it dies. Move-only; thread-safe to use as B's streams are.
template <Backend B>
class Stream {
public:
  Stream() noexcept = default;
  Stream(Stream&& other) noexcept : ref_(std::exchange(other.ref_, StreamRef{})) {}
  Stream& operator=(Stream&& other) noexcept {
    if (this != &other) {
      reset();
      ref_ = std::exchange(other.ref_, StreamRef{});
    }
    return *this;
  }
  ~Stream() { reset(); }

  // A new stream on `device`. Thread-safe.
  static Result<Stream> create(Device device) noexcept {
    DEVRT_RETURN_IF_ERROR(check_device<B>(device));
    DEVRT_DIRECT_DEVICE(object, device.id);
    Result<void*> handle = backend<B>().stream_create(object);
    if (!handle.ok()) [[unlikely]]
      return detail::call_error(device, "stream_create", handle.status());
    Stream stream;
    stream.ref_ = StreamRef{device, *handle};
    return stream;
  }

  StreamRef ref() const noexcept { return ref_; }
  operator StreamRef() const noexcept { return ref_; } // NOLINT(google-explicit-constructor)
  Device device() const noexcept { return ref_.device; }
  Status synchronize() const noexcept {
    if (ref_.handle == nullptr) [[unlikely]]
      return detail::empty_handle_error("Stream");
    return direct::synchronize<B>(ref_);
  }
  // Destroys the stream now; errors are logged.
  void reset() noexcept {
    if (ref_.handle != nullptr) {
      const auto object = detail::device_object<B>(ref_.device.id);
      Status status = detail::opened(object) ? backend<B>().stream_destroy(detail::object_of(object), ref_.handle)
                                             : detail::open_error(object);
      if (!status.ok()) DEVRT_LOG(error, "Stream: ", status.message());
    }
    ref_ = StreamRef{};
  }

private:
  StreamRef ref_;
};

// An event of B: marks a point in a stream. Move-only; thread-safe to use as B's events are.
template <Backend B>
requires BackendEvents<B>
class Event {
public:
  Event() noexcept = default;
  Event(Event&& other) noexcept : device_(other.device_), handle_(std::exchange(other.handle_, nullptr)) {}
  Event& operator=(Event&& other) noexcept {
    if (this != &other) {
      reset();
      device_ = other.device_;
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  ~Event() { reset(); }

  static Result<Event> create(Device device) noexcept {
    DEVRT_RETURN_IF_ERROR(check_device<B>(device));
    DEVRT_DIRECT_DEVICE(object, device.id);
    Result<void*> handle = backend<B>().event_create(object);
    if (!handle.ok()) [[unlikely]]
      return detail::call_error(device, "event_create", handle.status());
    Event event;
    event.device_ = device;
    event.handle_ = *handle;
    return event;
  }

  Device device() const noexcept { return device_; }
  // Records the point after everything queued so far on `stream` (of this event's device).
  Status record(StreamRef stream) const noexcept {
    DEVRT_RETURN_IF_ERROR(check_stream(stream, "event_record"));
    DEVRT_DIRECT_DEVICE(object, device_.id);
    return answer("event_record", backend<B>().event_record(object, handle_, stream.handle));
  }
  Status synchronize() const noexcept {
    if (handle_ == nullptr) [[unlikely]]
      return detail::empty_handle_error("Event");
    DEVRT_DIRECT_DEVICE(object, device_.id);
    return answer("event_synchronize", backend<B>().event_synchronize(object, handle_));
  }
  // True once the recorded work has run.
  Result<bool> query() const noexcept {
    if (handle_ == nullptr) [[unlikely]]
      return detail::empty_handle_error("Event");
    DEVRT_DIRECT_DEVICE(object, device_.id);
    Result<bool> done = backend<B>().event_query(object, handle_);
    if (!done.ok()) [[unlikely]]
      return detail::call_error(device_, "event_query", done.status());
    return done;
  }
  // Makes `stream` wait for the recorded point before running what is queued after this call.
  Status wait_on(StreamRef stream) const noexcept {
    DEVRT_RETURN_IF_ERROR(check_stream(stream, "stream_wait_event"));
    DEVRT_DIRECT_DEVICE(object, device_.id);
    return answer("stream_wait_event", backend<B>().stream_wait_event(object, stream.handle, handle_));
  }
  void reset() noexcept {
    if (handle_ != nullptr) {
      const auto object = detail::device_object<B>(device_.id);
      Status status = detail::opened(object) ? backend<B>().event_destroy(detail::object_of(object), handle_)
                                             : detail::open_error(object);
      if (!status.ok()) DEVRT_LOG(error, "Event: ", status.message());
    }
    handle_ = nullptr;
  }

private:
  Status check_stream(StreamRef stream, const char* call) const noexcept {
    if (handle_ == nullptr) [[unlikely]]
      return detail::empty_handle_error("Event");
    if (stream.device != device_) [[unlikely]] {
      return make_error(ErrorCode::invalid_argument, device_, " ", call, ": stream belongs to ", stream.device);
    }
    return Status();
  }
  Status answer(const char* call, Status status) const noexcept {
    if (!status.ok()) [[unlikely]]
      return detail::call_error(device_, call, status);
    return status;
  }
  Device device_;
  void* handle_ = nullptr;
};

template <Backend B>
requires BackendModules<B>
class Module;

// A kernel in a loaded Module<B>. Non-owning: valid while its Module lives. Thread-safe to launch.
template <Backend B>
requires BackendModules<B>
class Function {
public:
  Function() noexcept = default;
  std::string_view name() const noexcept { return name_; }
  Device device() const noexcept { return device_; }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

  // As devrt::Function::launch (the same checks), on `stream` or the device's default stream.
  Status launch(const LaunchConfig& config, std::span<const KernelArg> args, StreamRef stream = {}) const noexcept {
    if (handle_ == nullptr) [[unlikely]]
      return detail::empty_handle_error("Function");
    if (stream == StreamRef{}) stream.device = device_;
    devrt_kernel_arg raw[kMaxKernelArgs];
    LaunchDesc desc;
    DEVRT_RETURN_IF_ERROR(
        devrt::detail::check_launch(device_, name_, config, args, stream, raw, desc, BackendTextures<B>));
    DEVRT_DIRECT_DEVICE(object, device_.id);
    Status status = backend<B>().launch(object, handle_, desc);
    if (!status.ok()) [[unlikely]]
      return detail::call_error(device_, "launch", status);
    return status;
  }
  Status launch(const LaunchConfig& config, std::initializer_list<KernelArg> args,
                StreamRef stream = {}) const noexcept {
    return launch(config, std::span<const KernelArg>(args.begin(), args.size()), stream);
  }

private:
  friend class Module<B>;
  Device device_;
  void* handle_ = nullptr;
  std::string_view name_; // the caller's name: a literal or other storage that outlives the Function
};

// Code loaded on a device of B, unloaded when it dies (after its launches have run). Move-only.
template <Backend B>
requires BackendModules<B>
class Module {
public:
  Module() noexcept = default;
  Module(Module&& other) noexcept : device_(other.device_), handle_(std::exchange(other.handle_, nullptr)) {}
  Module& operator=(Module&& other) noexcept {
    if (this != &other) {
      reset();
      device_ = other.device_;
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  ~Module() { reset(); }

  // As devrt::Module::load: invalid_argument for empty data or a bad device; B's errors, with its
  // build log, otherwise. Thread-safe.
  static Result<Module> load(Device device, ModuleFormat format, std::span<const std::byte> data,
                             const char* options = "") noexcept {
    DEVRT_RETURN_IF_ERROR(check_device<B>(device));
    if (data.empty()) [[unlikely]]
      return make_error(ErrorCode::invalid_argument, device, " module_load: empty module");
    DEVRT_RETURN_IF_ERROR(
        devrt::detail::check_module_format(B::name, device, devrt::detail::module_format_bits<B>(), format));
    char log_text[256];
    BuildLog log(log_text, sizeof log_text);
    DEVRT_DIRECT_DEVICE(object, device.id);
    Result<void*> handle = backend<B>().module_load(object, format, data, options, log);
    if (!handle.ok()) [[unlikely]]
      return detail::module_load_error(device, handle.status(), log.view());
    Module module;
    module.device_ = device;
    module.handle_ = *handle;
    return module;
  }
  static Result<Module> load(Device device, ModuleFormat format, std::string_view text) noexcept {
    return load(device, format, std::as_bytes(std::span<const char>(text.data(), text.size())));
  }

  // A kernel by name (`name` must outlive the Function: a literal, say): not_found when absent.
  Result<Function<B>> function(std::string_view name) const noexcept {
    if (handle_ == nullptr) [[unlikely]]
      return detail::empty_handle_error("Module");
    char terminated[128];
    if (name.size() >= sizeof terminated) [[unlikely]]
      return make_error(ErrorCode::not_found, device_, " module_function: no kernel with a ", name.size(),
                        "-character name");
    for (std::size_t i = 0; i < name.size(); ++i) terminated[i] = name[i];
    terminated[name.size()] = '\0';
    DEVRT_DIRECT_DEVICE(object, device_.id);
    Result<void*> handle = backend<B>().module_function(object, handle_, terminated);
    if (!handle.ok()) [[unlikely]]
      return detail::call_error(device_, "module_function", handle.status());
    Function<B> function;
    function.device_ = device_;
    function.handle_ = *handle;
    function.name_ = name;
    return function;
  }

  Device device() const noexcept { return device_; }
  explicit operator bool() const noexcept { return handle_ != nullptr; }
  void reset() noexcept {
    if (handle_ != nullptr) {
      const auto object = detail::device_object<B>(device_.id);
      Status status = detail::opened(object) ? backend<B>().module_unload(detail::object_of(object), handle_)
                                             : detail::open_error(object);
      if (!status.ok()) DEVRT_LOG(error, "Module: ", status.message());
    }
    handle_ = nullptr;
  }

private:
  Device device_;
  void* handle_ = nullptr;
};

} // namespace devrt::direct

#undef DEVRT_DIRECT_DEVICE

#endif // DEVRT_BACKEND_DIRECT_HPP
