// SPDX-License-Identifier: Apache-2.0
// The operations the CUDA and HIP backends share, written once over a driver traits type: the two
// APIs have the same shape (allocate/free, non-blocking streams, timing-free events, device-wide
// synchronisation) and differ in names, handle types and how a device is made current. A backend
// inherits GpuDriverOperations<Driver> and gets these members of devrt::Backend and
// devrt::BackendEvents; it declares its own where it differs (CUDA's stream_synchronize). Not
// public API.
//
// A Driver provides:
//   Api, Error, Stream, Event, DevicePointer    the API table and its handle types
//   kSuccess, kNotReady                         its error codes
//   kStreamFlags, kEventFlags                   non-blocking streams, events without timing
//   kTimedEventFlags, kInvalidHandle            events with timing; an event not recorded
//   kAllocationAlignment                        what its allocator guarantees
//   api(), over_aligned()                       the loaded table; the over-alignment map
//   open(index) -> Result<void*>                 the device's state, made or referenced (a primary
//                                               context retained); close(state) undoes it
//   activate(device)                            makes the open device current on this thread
//   error(call, code)                           the Status of a failed call
//   one DriverCall per operation below: {"cuStreamCreate", &Api::cuStreamCreate}, ...
//   kind, kName, kLoadOptionsAdvice             the backend's device kind and name; what a module
//                                               load given options is told to do instead
//   peer_copy(desc, dst, src, stream)           a copy between two of its devices
//   ModuleHandle, Function                      a loaded module; a looked-up kernel (with `name`)
//   check_image(device, image)                  whether a module image runs on the device
//   load_image(format, data, log) -> Result<ModuleHandle>   with the device current
//   make_function(device, module, name) -> Result<std::unique_ptr<Function>>  with it current
// Every member is thread-safe as the driver's calls are.
#ifndef DEVRT_SRC_BACKEND_SUPPORT_GPU_DRIVER_HPP
#define DEVRT_SRC_BACKEND_SUPPORT_GPU_DRIVER_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <type_traits>
#include <vector>

#include <devrt/backend/backend.hpp>
#include <devrt/backend/module_image.hpp>

namespace devrt::detail {

// One driver entry point: its name for messages and its slot in the API table.
template <class Slot>
struct DriverCall {
  const char* name;
  Slot slot;
};
template <class Slot>
DriverCall(const char*, Slot) -> DriverCall<Slot>;

// A loaded module and the kernels looked up in it, each made once and kept until the unload.
template <class Handle, class Function>
struct GpuModule {
  Handle module{};
  std::mutex mutex;
  std::vector<std::unique_ptr<Function>> functions;
};

template <class Driver>
class GpuDriverOperations {
public:
  // The device's state is the driver's (Driver::open); closing waits for the device's work first.
  Status open_device(BackendDevice& device) noexcept {
    Result<void*> state = Driver::open(device.index);
    if (!state.ok()) return std::move(state).status();
    device.state = *state;
    return Status();
  }
  Status close_device(BackendDevice& device) noexcept {
    if (device.state == nullptr) return Status();
    Status synchronized = on_device(device, Driver::device_synchronize);
    Status closed = Driver::close(device.state);
    device.state = nullptr;
    return synchronized.ok() ? closed : synchronized;
  }

  Result<void*> allocate(const BackendDevice& device, std::size_t nbytes, std::size_t alignment) noexcept {
    DEVRT_RETURN_IF_ERROR(Driver::activate(device));
    std::size_t extra = alignment > Driver::kAllocationAlignment ? alignment - 1 : 0;
    if (nbytes > SIZE_MAX - extra) {
      return make_error(ErrorCode::out_of_memory, Driver::malloc.name, ": size overflows");
    }
    typename Driver::DevicePointer base{};
    DEVRT_RETURN_IF_ERROR(invoke(Driver::malloc, &base, nbytes + extra));
    std::uintptr_t address = to_address(base);
    if (extra != 0) address = Driver::over_aligned().align(address, alignment);
    return reinterpret_cast<void*>(address);
  }
  Status free(const BackendDevice& device, void* ptr) noexcept {
    DEVRT_RETURN_IF_ERROR(Driver::activate(device));
    std::uintptr_t base = Driver::over_aligned().release(reinterpret_cast<std::uintptr_t>(ptr));
    return invoke(Driver::release, from_address(base));
  }

  Result<void*> stream_create(const BackendDevice& device) noexcept {
    DEVRT_RETURN_IF_ERROR(Driver::activate(device));
    typename Driver::Stream stream = nullptr;
    DEVRT_RETURN_IF_ERROR(invoke(Driver::stream_create, &stream, Driver::kStreamFlags));
    return static_cast<void*>(stream);
  }
  Status stream_destroy(const BackendDevice& device, void* stream) noexcept {
    return on_device(device, Driver::stream_destroy, stream_of(stream));
  }
  Status stream_synchronize(const BackendDevice& device, void* stream) noexcept {
    return on_device(device, Driver::stream_synchronize, stream_of(stream));
  }
  // Every stream of the device, blocking or not.
  Status device_synchronize(const BackendDevice& device) noexcept {
    return on_device(device, Driver::device_synchronize);
  }

  Result<void*> event_create(const BackendDevice& device) noexcept {
    DEVRT_RETURN_IF_ERROR(Driver::activate(device));
    typename Driver::Event event = nullptr;
    DEVRT_RETURN_IF_ERROR(invoke(Driver::event_create, &event, Driver::kEventFlags));
    return static_cast<void*>(event);
  }
  Status event_destroy(const BackendDevice& device, void* event) noexcept {
    return on_device(device, Driver::event_destroy, event_of(event));
  }
  Status event_record(const BackendDevice& device, void* event, void* stream) noexcept {
    return on_device(device, Driver::event_record, event_of(event), stream_of(stream));
  }
  Status event_synchronize(const BackendDevice& device, void* event) noexcept {
    return on_device(device, Driver::event_synchronize, event_of(event));
  }
  Result<bool> event_query(const BackendDevice& device, void* event) noexcept {
    DEVRT_RETURN_IF_ERROR(Driver::activate(device));
    typename Driver::Error code = (Driver::api().*Driver::event_query.slot)(event_of(event));
    if (code == Driver::kNotReady) return false;
    if (code != Driver::kSuccess) return Driver::error(Driver::event_query.name, code);
    return true;
  }
  Status stream_wait_event(const BackendDevice& device, void* stream, void* event) noexcept {
    return on_device(device, Driver::stream_wait_event, stream_of(stream), event_of(event), 0u);
  }

  // Timed events: the driver's timing events (milliseconds as a float, about 0.5 us resolution).
  Result<void*> event_create_timed(const BackendDevice& device) noexcept {
    if (Driver::api().*Driver::event_elapsed.slot == nullptr) {
      return make_error(ErrorCode::unsupported, "the driver has no ", Driver::event_elapsed.name);
    }
    DEVRT_RETURN_IF_ERROR(Driver::activate(device));
    typename Driver::Event event = nullptr;
    DEVRT_RETURN_IF_ERROR(invoke(Driver::event_create, &event, Driver::kTimedEventFlags));
    return static_cast<void*>(event);
  }
  Result<std::int64_t> event_elapsed(const BackendDevice& device, void* start, void* end) noexcept {
    DEVRT_RETURN_IF_ERROR(Driver::activate(device));
    float milliseconds = 0;
    typename Driver::Error code =
        (Driver::api().*Driver::event_elapsed.slot)(&milliseconds, event_of(start), event_of(end));
    if (code == Driver::kNotReady) {
      return make_error(ErrorCode::unavailable, "an event has not completed (synchronize it first)");
    }
    if (code == Driver::kInvalidHandle) {
      return make_error(ErrorCode::invalid_argument, "an event was never recorded (",
                        Driver::error(Driver::event_elapsed.name, code).message(), ")");
    }
    if (code != Driver::kSuccess) return Driver::error(Driver::event_elapsed.name, code);
    return static_cast<std::int64_t>(static_cast<double>(milliseconds) * 1e6);
  }

  // Queued on desc.stream in every direction: host to device and back (staged by the driver for
  // pageable memory), within a device, and across two devices as a peer copy.
  Status copy(const CopyDesc& desc) noexcept {
    const auto own = static_cast<std::int32_t>(Driver::kind);
    void* src = const_cast<std::byte*>(static_cast<const std::byte*>(desc.src)) + desc.src_offset;
    void* dst = static_cast<std::byte*>(desc.dst) + desc.dst_offset;
    auto stream = stream_of(desc.stream);
    if (desc.src_kind != own)
      return on_device(*desc.dst_device, Driver::memcpy_htod, device_pointer(dst), src, desc.nbytes, stream);
    if (desc.dst_kind != own)
      return on_device(*desc.src_device, Driver::memcpy_dtoh, dst, device_pointer(src), desc.nbytes, stream);
    if (desc.src_device == desc.dst_device) {
      return on_device(*desc.dst_device, Driver::memcpy_dtod, device_pointer(dst), device_pointer(src), desc.nbytes,
                       stream);
    }
    return Driver::peer_copy(desc, device_pointer(dst), device_pointer(src), stream);
  }

  // A module image of the format given: checked (no options, the format its bytes have, a target
  // the device runs), then loaded by the driver with the device current.
  Result<void*> module_load(const BackendDevice& device, ModuleFormat format, std::span<const std::byte> data,
                            const char* options, BuildLog& log) noexcept {
    if (options[0] != '\0') {
      return make_error(ErrorCode::invalid_argument, "the ", Driver::kName, " backend takes no load options (got '",
                        options, "')", Driver::kLoadOptionsAdvice);
    }
    Result<ModuleImageInfo> image = inspect_module_image(data);
    if (!image.ok()) return std::move(image).status();
    if (image->format != format) {
      return make_error(ErrorCode::invalid_argument, "the bytes are a ", module_format_name(image->format), ", not a ",
                        module_format_name(format));
    }
    DEVRT_RETURN_IF_ERROR(Driver::check_image(device, *image));
    DEVRT_RETURN_IF_ERROR(Driver::activate(device));
    Result<typename Driver::ModuleHandle> loaded = Driver::load_image(format, data, log);
    if (!loaded.ok()) return std::move(loaded).status();
    auto* module = new (std::nothrow) GpuModule<typename Driver::ModuleHandle, typename Driver::Function>();
    if (module == nullptr) {
      static_cast<void>(invoke(Driver::module_unload, *loaded));
      return make_error(ErrorCode::out_of_memory, "no memory for a module");
    }
    module->module = *loaded;
    return static_cast<void*>(module);
  }
  // The module's kernels go with it, whatever the driver answers.
  Status module_unload(const BackendDevice& device, void* handle) noexcept {
    auto* module = static_cast<GpuModule<typename Driver::ModuleHandle, typename Driver::Function>*>(handle);
    Status unloaded = on_device(device, Driver::module_unload, module->module);
    delete module;
    return unloaded;
  }
  // The kernel `name`, looked up once per module (Driver::make_function) and kept.
  Result<void*> module_function(const BackendDevice& device, void* handle, const char* name) noexcept {
    auto* module = static_cast<GpuModule<typename Driver::ModuleHandle, typename Driver::Function>*>(handle);
    std::lock_guard<std::mutex> lock(module->mutex);
    for (const auto& function : module->functions) {
      if (function->name == name) return static_cast<void*>(function.get());
    }
    DEVRT_RETURN_IF_ERROR(Driver::activate(device));
    Result<std::unique_ptr<typename Driver::Function>> made = Driver::make_function(device, module->module, name);
    if (!made.ok()) return std::move(made).status();
    void* result = made->get();
    module->functions.push_back(std::move(*made));
    return result;
  }

protected:
  // Calls the entry point with `args`; its error as a Status naming it.
  template <class Slot, class... Args>
  static Status invoke(const DriverCall<Slot>& call, Args... args) noexcept {
    typename Driver::Error code = (Driver::api().*call.slot)(args...);
    if (code == Driver::kSuccess) [[likely]]
      return Status();
    return Driver::error(call.name, code);
  }
  // invoke() with the device made current first.
  template <class Slot, class... Args>
  static Status on_device(const BackendDevice& device, const DriverCall<Slot>& call, Args... args) noexcept {
    DEVRT_RETURN_IF_ERROR(Driver::activate(device));
    return invoke(call, args...);
  }
  // (Deduced return types: the class is instantiated before Driver is complete.)
  static auto stream_of(void* stream) noexcept { return static_cast<typename Driver::Stream>(stream); }
  static auto event_of(void* event) noexcept { return static_cast<typename Driver::Event>(event); }

  static auto device_pointer(void* address) noexcept { return from_address(reinterpret_cast<std::uintptr_t>(address)); }

private:
  template <class Pointer>
  static std::uintptr_t to_address(Pointer pointer) noexcept {
    if constexpr (std::is_pointer_v<Pointer>) {
      return reinterpret_cast<std::uintptr_t>(pointer);
    } else {
      return static_cast<std::uintptr_t>(pointer);
    }
  }
  static auto from_address(std::uintptr_t address) noexcept {
    using Pointer = typename Driver::DevicePointer;
    if constexpr (std::is_pointer_v<Pointer>) {
      return reinterpret_cast<Pointer>(address);
    } else {
      return static_cast<Pointer>(address);
    }
  }
};

} // namespace devrt::detail

#endif // DEVRT_SRC_BACKEND_SUPPORT_GPU_DRIVER_HPP
