// SPDX-License-Identifier: Apache-2.0
// The WebGPU backend: discovery (the library, the adapter, the device), attributes, buffers,
// copies and the queue as every stream's destination.
#include "webgpu_backend.hpp"

#include <devrt/log.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/fault_injection.hpp"
#include "support/lazy_runtime.hpp"
#include "webgpu_library.hpp"
#include "webgpu_state.hpp"

#if DEVRT_FAULT_INJECTION
// An error scope that caught an error answers status Success and the error's type: a failed pop is
// injected as such, the code as the type (3 is OutOfMemory, 2 Validation, 4 Internal).
template <>
struct devrt::detail::fault::CallbackFault<devrt::webgpu::WGPUPopErrorScopeCallback> {
  static void invoke(devrt::webgpu::WGPUPopErrorScopeCallback callback, std::int64_t code, void* userdata1,
                     void* userdata2) {
    callback(devrt::webgpu::kSuccess, static_cast<devrt::webgpu::WGPUEnum>(code),
             {kInjectedMessage.data(), kInjectedMessage.size()}, userdata1, userdata2);
  }
};
#endif

namespace devrt::webgpu {

detail::FreedBuffers& freed_buffers() noexcept {
  static detail::NoDestroy<detail::FreedBuffers> buffers; // used by frees during exit
  return buffers.get();
}

Worker& worker() {
  static detail::NoDestroy<Worker> instance; // its thread outlives static destructors
  return instance.get();
}

std::string text(WGPUStringView view) {
  if (view.data == nullptr) return {};
  return view.length == SIZE_MAX ? std::string(view.data) : std::string(view.data, view.length);
}

std::string failure(const char* call, WGPUEnum status, const std::string& message) {
  return std::string(call) + " failed (status " + std::to_string(status) + ")" +
         (message.empty() ? std::string() : ": " + message);
}

namespace {
constexpr auto kWaitLimit = std::chrono::seconds(30);
// How long a wait polls without sleeping: most waits (a copy, a short kernel, an error scope) end
// within it, and a sleep costs at least the kernel's timer slack (50 us).
constexpr auto kSpinLimit = std::chrono::milliseconds(1);
// and for how much of that without yielding the core (a yield is a system call, and lets the thread
// that waits for this one's answer take the core).
constexpr auto kBusyLimit = std::chrono::microseconds(50);
} // namespace

// Runs the instance's events until `done` is set or the limit passes: polling busily for
// kBusyLimit, then yielding the core between polls until kSpinLimit, then every 20 us. Runs on the
// worker thread.
bool wait_for(const Runtime& rt, const std::atomic<bool>& done) {
  const auto start = std::chrono::steady_clock::now();
  while (!done.load(std::memory_order_acquire)) {
    rt.api.wgpuInstanceProcessEvents(rt.instance);
    if (done.load(std::memory_order_acquire)) break;
    const auto waited = std::chrono::steady_clock::now() - start;
    if (waited > kWaitLimit) return false;
    if (waited < kBusyLimit) continue;
    if (waited < kSpinLimit) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
  return true;
}

namespace {

const char* error_type_name(WGPUEnum type) {
  switch (type) {
  case kErrorValidation: return "Validation";
  case kErrorOutOfMemory: return "OutOfMemory";
  case kErrorInternal: return "Internal";
  default: return "Unknown";
  }
}

const char* backend_type_name(WGPUEnum type) {
  switch (type) {
  case kBackendVulkan: return "Vulkan";
  case kBackendOpenGLES: return "OpenGL ES";
  case kBackendOpenGL: return "OpenGL";
  case kBackendMetal: return "Metal";
  case kBackendD3D12: return "D3D12";
  case kBackendNull: return "Null";
  default: return "unknown";
  }
}

// The adapter for `backend` at `level`, or nullptr with `why` set and `error` true when the
// request failed (rather than finding no adapter of that kind).
WGPUAdapter request_adapter(const Runtime& rt, WGPUEnum backend, WGPUEnum level, std::string& why, bool& error) {
  struct Answer {
    std::atomic<bool> done{false};
    WGPUEnum status = 0;
    WGPUAdapter adapter = nullptr;
    std::string message;
  } answer;
  WGPURequestAdapterOptions options{};
  options.backendType = backend;
  options.featureLevel = level;
  DawnRequestAdapterOptionsGetGLProc gl{};
  if (backend == kBackendOpenGLES && rt.egl_display != nullptr) {
    gl.chain.sType = kSTypeDawnRequestAdapterOptionsGetGLProc;
    gl.getProc = rt.egl_get_proc;
    gl.display = rt.egl_display;
    options.nextInChain = &gl.chain;
  }
  WGPURequestAdapterCallbackInfo callback{};
  callback.mode = kCallbackModeAllowProcessEvents;
  callback.callback = [](WGPUEnum status, WGPUAdapter adapter, WGPUStringView message, void* data, void*) {
    auto* a = static_cast<Answer*>(data);
    a->status = status;
    if (status == kSuccess) a->adapter = adapter;
    a->message = text(message);
    a->done.store(true, std::memory_order_release);
  };
  callback.userdata1 = &answer;
  rt.api.wgpuInstanceRequestAdapter(rt.instance, &options, callback);
  if (!wait_for(rt, answer.done)) {
    why = std::string(backend_type_name(backend)) + ": no answer to wgpuInstanceRequestAdapter";
    error = true;
    return nullptr;
  }
  if (answer.adapter == nullptr) {
    error = answer.status != kSuccess && answer.status != kRequestAdapterUnavailable;
    why = std::string(backend_type_name(backend)) + ": " +
          (error                    ? failure("wgpuInstanceRequestAdapter", answer.status, answer.message)
           : answer.message.empty() ? std::string("no adapter")
                                    : answer.message);
  }
  return answer.adapter;
}

// What the adapter is and offers (its info, limits and features), into `d`.
Status describe_adapter(Runtime& rt, DeviceState& d) {
  const Api& api = rt.api;
  WGPUAdapterInfo info{};
  if (WGPUEnum got = api.wgpuAdapterGetInfo(d.adapter, &info); got != kSuccess) {
    return make_error(ErrorCode::driver_error, failure("wgpuAdapterGetInfo", got, {}));
  }
  d.name = text(info.device);
  d.description = text(info.description);
  d.backend_type = info.backendType;
  d.subgroup_min_size = info.subgroupMinSize;
  api.wgpuAdapterInfoFreeMembers(info);
  d.backend_name = backend_type_name(d.backend_type);
  if (WGPUEnum got = api.wgpuAdapterGetLimits(d.adapter, &d.limits); got != kSuccess) {
    return make_error(ErrorCode::driver_error, failure("wgpuAdapterGetLimits", got, {}));
  }
  d.shader_f16 = api.wgpuAdapterHasFeature(d.adapter, kFeatureShaderF16) != 0;
  d.subgroups = api.wgpuAdapterHasFeature(d.adapter, kFeatureSubgroups) != 0;
  return Status();
}

// Whether the adapter's device opens: described, requested, and released again (open_device
// makes the device devrt uses).
Status try_adapter(Runtime& rt, DeviceState& d) {
  DEVRT_RETURN_IF_ERROR(describe_adapter(rt, d));
  Status requested = request_device(rt, d);
  release_device(rt, d);
  return requested;
}

#if DEVRT_FAULT_INJECTION
// Entry points the API lets return null on failure (an instance, a buffer mapped at creation, a
// range not mapped); and one whose integral answer is no status.
constexpr std::string_view kMayReturnNull[] = {"wgpuCreateInstance", "wgpuDeviceCreateBuffer",
                                               "wgpuBufferGetConstMappedRange"};
constexpr std::string_view kCannotFail[] = {"wgpuAdapterHasFeature"};
#endif

// The fault seam (test builds with -Dfault_injection=true; nothing otherwise): the table's entry
// points wrapped (support/fault_injection.hpp). The asynchronous calls fail through their
// callbacks, an error scope reports its error as a type (below).
void fault_seam([[maybe_unused]] Api& api) {
  DEVRT_FAULT_WRAP_SYMBOLS_WITH("webgpu", api, DEVRT_WEBGPU_SYMBOLS,
                                (detail::fault::FaultRules{kMayReturnNull, kCannotFail}));
}

// The backend DEVRT_WEBGPU_BACKEND forces ("vulkan", "opengles", "metal", "d3d12"), 0 for none,
// or an error for another word.
Result<WGPUEnum> forced_backend() {
  const char* value = detail::read_text_env("DEVRT_WEBGPU_BACKEND");
  if (value == nullptr) return WGPUEnum{0};
  std::string_view word = value;
  if (word == "vulkan") return kBackendVulkan;
  if (word == "opengles") return kBackendOpenGLES;
  if (word == "metal") return kBackendMetal;
  if (word == "d3d12") return kBackendD3D12;
  return make_error(ErrorCode::invalid_argument, "DEVRT_WEBGPU_BACKEND='", word,
                    "' is none of vulkan, opengles, metal, d3d12");
}

// Opens Mesa's surfaceless EGL platform display (EGL_PLATFORM_SURFACELESS_MESA) for Dawn's
// OpenGL ES backend, which otherwise opens the default platform's display and, without a display
// server, finds none. Nothing happens without libEGL or the extension.
void open_surfaceless_display(Runtime& rt) {
  std::string reason;
  if (!rt.egl.open({"libEGL.so.1"}, reason) || !rt.egl.resolve("eglGetProcAddress", rt.egl_get_proc)) return;
  using GetPlatformDisplay = void* (*)(std::uint32_t platform, void* native_display, const std::intptr_t* attributes);
  auto get_display = reinterpret_cast<GetPlatformDisplay>(rt.egl_get_proc("eglGetPlatformDisplayEXT"));
  constexpr std::uint32_t kPlatformSurfacelessMesa = 0x31DD;
  if (get_display != nullptr) rt.egl_display = get_display(kPlatformSurfacelessMesa, nullptr, nullptr);
}

Status discover(Runtime& rt) {
  DEVRT_RETURN_IF_ERROR(rt.library.open(kLibrary, library_candidates()));
#define DEVRT_WEBGPU_RESOLVE(symbol, result, parameters)                                                               \
  if (!rt.library.resolve(#symbol, rt.api.symbol)) {                                                                   \
    return detail::missing_symbol(rt.library, #symbol, " (a webgpu.h implementation of 2025 or later is needed)");     \
  }
  DEVRT_WEBGPU_SYMBOLS(DEVRT_WEBGPU_RESOLVE)
#undef DEVRT_WEBGPU_RESOLVE
  DEVRT_ASSIGN_OR_RETURN(WGPUEnum forced, forced_backend());
  fault_seam(rt.api);
  rt.instance = rt.api.wgpuCreateInstance(nullptr);
  // A failure that may pass (tried again by the next call that starts using the backend).
  if (rt.instance == nullptr) return make_error(ErrorCode::driver_error, "wgpuCreateInstance returned null");
  struct Choice {
    WGPUEnum backend, level;
  };
  std::vector<Choice> choices;
  if (forced != 0) {
    choices.push_back({forced, forced == kBackendOpenGLES ? kFeatureLevelCompatibility : kFeatureLevelCore});
  } else {
    choices = {{kBackendVulkan, kFeatureLevelCore},
               {kBackendMetal, kFeatureLevelCore},
               {kBackendD3D12, kFeatureLevelCore},
               {kBackendOpenGLES, kFeatureLevelCompatibility}};
  }
  std::string tried;
  bool failed = false; // a call failed (rather than no adapter being there): worth trying again
  for (const Choice& choice : choices) {
    // libEGL only when no native backend answered: a machine with a GPU never loads it.
    if (choice.backend == kBackendOpenGLES && !rt.egl.is_open()) open_surfaceless_display(rt);
    std::string why;
    WGPUAdapter adapter = request_adapter(rt, choice.backend, choice.level, why, failed);
    if (adapter == nullptr) {
      tried += (tried.empty() ? "" : "; ") + why;
      continue;
    }
    auto state = std::make_unique<DeviceState>();
    state->adapter = adapter;
    Status opened_device = try_adapter(rt, *state);
    if (!opened_device.ok() || state->backend_type == kBackendNull) {
      failed = failed || !opened_device.ok();
      tried += (tried.empty() ? "" : "; ") + std::string(backend_type_name(choice.backend)) + ": " +
               (opened_device.ok() ? "the Null adapter (refused: it computes nothing)"
                                   : std::string(opened_device.message()));
      rt.api.wgpuAdapterRelease(adapter);
      continue;
    }
    rt.devices.push_back(std::move(state));
    break;
  }
  if (rt.devices.empty()) {
    return make_error(failed ? ErrorCode::driver_error : ErrorCode::unavailable, "no WebGPU adapter: ", tried);
  }
  return Status();
}

// Discovery runs on the worker thread, which then owns the instance and every device.
Status discover_on_worker(Runtime& rt) {
  return worker().run([&] { return discover(rt); });
}

using Discovery = detail::LazyRuntime<Runtime, discover_on_worker>;

} // namespace

Runtime& runtime() noexcept { return Discovery::get(); }

// The errors of the calls between push_scope() and pop_scope(), as a Status naming `call`.
void push_scope(const Api& api, DeviceState& d) {
  api.wgpuDevicePushErrorScope(d.device, kErrorFilterOutOfMemory);
  api.wgpuDevicePushErrorScope(d.device, kErrorFilterValidation);
}

Status pop_scope(const Runtime& rt, DeviceState& d, const char* call) {
  struct Answer {
    std::atomic<bool> done{false};
    WGPUEnum status = 0;
    WGPUEnum type = kErrorNone;
    std::string message;
  } answers[2];
  for (Answer& answer : answers) {
    WGPUPopErrorScopeCallbackInfo callback{};
    callback.mode = kCallbackModeAllowProcessEvents;
    callback.callback = [](WGPUEnum status, WGPUEnum type, WGPUStringView message, void* data, void*) {
      auto* a = static_cast<Answer*>(data);
      a->status = status;
      a->type = type;
      a->message = text(message);
      a->done.store(true, std::memory_order_release);
    };
    callback.userdata1 = &answer;
    rt.api.wgpuDevicePopErrorScope(d.device, callback);
    if (!wait_for(rt, answer.done)) return make_error(ErrorCode::driver_error, call, ": no answer to its error scope");
  }
  for (const Answer& answer : answers) {
    if (answer.status != kSuccess) {
      return make_error(ErrorCode::driver_error, call, ": ", failure("wgpuDevicePopErrorScope", answer.status, {}));
    }
    if (answer.type == kErrorNone) continue;
    return make_error(answer.type == kErrorOutOfMemory ? ErrorCode::out_of_memory : ErrorCode::driver_error, call, ": ",
                      error_type_name(answer.type), " error (type ", answer.type,
                      ", from wgpuDevicePopErrorScope): ", answer.message);
  }
  return Status();
}

Result<WGPUBuffer> create_buffer(const Runtime& rt, DeviceState& d, std::uint64_t bytes, WGPUFlags usage) {
  WGPUBufferDescriptor descriptor{};
  descriptor.size = bytes;
  descriptor.usage = usage;
  return create_scoped<WGPUBuffer>(
      rt, d, "wgpuDeviceCreateBuffer", [&] { return rt.api.wgpuDeviceCreateBuffer(d.device, &descriptor); },
      rt.api.wgpuBufferRelease);
}

void release_buffer(const Api& api, WGPUBuffer buffer) {
  api.wgpuBufferDestroy(buffer);
  api.wgpuBufferRelease(buffer);
}

namespace {

// The token a devrt stream of this backend is (a distinct non-null handle): every stream submits
// to the device's one queue.
struct StreamToken {};

// The flag the queue sets once the work submitted before an event's record() has run, held by the
// event and by the queue's callback; released by both, on the worker thread (so a plain count), so
// destroying the event before the queue reaches it is safe.
struct EventFlag {
  std::atomic<bool> done{false};
  int references = 2;
  WGPUEnum status = kSuccess; // the queue's answer, read once `done` is set
  std::string message;
};

void release(EventFlag* flag) {
  if (flag != nullptr && --flag->references == 0) delete flag;
}

// The queue's answer for a reached flag.
Status reached(const EventFlag& flag) {
  if (flag.status == kSuccess) return Status();
  return make_error(ErrorCode::driver_error, failure("wgpuQueueOnSubmittedWorkDone", flag.status, flag.message));
}

// An event: its flag, null until recorded (an unrecorded event is complete).
struct EventState {
  EventFlag* flag = nullptr;
};

} // namespace

Status WebgpuBackend::availability() noexcept { return Discovery::get_retrying().status; }

Result<std::int32_t> WebgpuBackend::device_count() noexcept {
  return detail::discovered_device_count(Discovery::get_retrying());
}

Result<AttributeValue> WebgpuBackend::get_attribute(const BackendDevice& device, Attribute attribute) noexcept {
  const DeviceState& d = state_of(device);
  auto integer = [](auto value) { return AttributeValue(static_cast<std::int64_t>(value)); };
  switch (attribute) {
  case Attribute::exist: return AttributeValue(true);
  case Attribute::max_threads_per_block: return integer(d.limits.maxComputeInvocationsPerWorkgroup);
  case Attribute::warp_size:
    return d.subgroups && d.subgroup_min_size != 0 ? integer(d.subgroup_min_size) : AttributeValue();
  case Attribute::max_shared_memory_per_block: return integer(d.limits.maxComputeWorkgroupStorageSize);
  case Attribute::device_name: return AttributeValue(d.name);
  case Attribute::max_thread_dimensions:
    return AttributeValue(Dim3{static_cast<std::int64_t>(d.limits.maxComputeWorkgroupSizeX),
                               static_cast<std::int64_t>(d.limits.maxComputeWorkgroupSizeY),
                               static_cast<std::int64_t>(d.limits.maxComputeWorkgroupSizeZ)});
  case Attribute::driver_version: return AttributeValue(d.backend_name + ": " + d.description);
  case Attribute::buffer_offset_alignment: return integer(d.limits.minStorageBufferOffsetAlignment);
  default: return AttributeValue();
  }
}

AdapterFacts adapter_facts(const DeviceState& d) {
  AdapterFacts facts;
  facts.device = d.name;
  facts.backend = d.backend_name;
  facts.max_compute_invocations_per_workgroup = d.limits.maxComputeInvocationsPerWorkgroup;
  facts.max_compute_workgroup_storage_size = d.limits.maxComputeWorkgroupStorageSize;
  facts.max_compute_workgroup_size[0] = d.limits.maxComputeWorkgroupSizeX;
  facts.max_compute_workgroup_size[1] = d.limits.maxComputeWorkgroupSizeY;
  facts.max_compute_workgroup_size[2] = d.limits.maxComputeWorkgroupSizeZ;
  facts.max_storage_buffer_binding_size = d.limits.maxStorageBufferBindingSize;
  facts.max_storage_buffers_per_shader_stage = d.limits.maxStorageBuffersPerShaderStage;
  facts.subgroup_min_size = d.subgroup_min_size;
  facts.subgroups = d.subgroups;
  facts.shader_f16 = d.shader_f16;
  return facts;
}

Result<Target> WebgpuBackend::detect_target(const BackendDevice& device) noexcept {
  return webgpu_target(adapter_facts(state_of(device)));
}

Result<void*> WebgpuBackend::allocate(const BackendDevice& device, std::size_t nbytes, std::size_t) noexcept {
  const Runtime& rt = runtime();
  DeviceState& d = state_of(device);
  if (nbytes > d.limits.maxBufferSize) {
    return make_error(ErrorCode::out_of_memory, "exceeds the device's largest buffer of ", d.limits.maxBufferSize,
                      " bytes (maxBufferSize)");
  }
  const std::uint64_t bytes = (std::uint64_t{nbytes} + 3) & ~std::uint64_t{3}; // WebGPU sizes are multiples of 4
  auto* allocation = new (std::nothrow) Allocation();
  if (allocation == nullptr) return make_error(ErrorCode::out_of_memory, "no host memory for a buffer record");
  Result<WGPUBuffer> buffer =
      worker().run([&] { return create_buffer(rt, d, bytes, kUsageStorage | kUsageCopySrc | kUsageCopyDst); });
  if (!buffer.ok()) {
    delete allocation;
    return std::move(buffer).status();
  }
  allocation->buffer = *buffer;
  allocation->size = bytes;
  freed_buffers().allocated(allocation);
  return static_cast<void*>(allocation);
}

Status WebgpuBackend::free(const BackendDevice& device, void* ptr) noexcept {
  const Runtime& rt = runtime();
  auto* allocation = static_cast<Allocation*>(ptr);
  // WebGPU keeps a destroyed buffer alive for the work already submitted that uses it, but refuses
  // a submission that uses it after: the batch goes first.
  freed_buffers().freed(allocation);
  worker().run([&] {
    submit(rt, state_of(device)); // the batch's errors stay pending for the next call
    release_buffer(rt.api, allocation->buffer);
    return 0;
  });
  delete allocation;
  return Status();
}

Status WebgpuBackend::copy(const CopyDesc& desc) noexcept {
  const Runtime& rt = runtime();
  const auto kind = static_cast<std::int32_t>(WebgpuBackend::kind);
  if (desc.src_kind == kind) DEVRT_RETURN_IF_ERROR(freed_buffers().check(desc.src, "the source"));
  if (desc.dst_kind == kind) DEVRT_RETURN_IF_ERROR(freed_buffers().check(desc.dst, "the destination"));
  if (desc.src_kind != kind) {
    // Host -> device: queued to the worker without waiting (the copy rule keeps the source until
    // the stream is synchronized); what fails is reported by the device's next call that waits.
    DeviceState& d = state_of(*desc.dst_device);
    const auto* target = static_cast<const Allocation*>(desc.dst);
    const auto* source = static_cast<const std::byte*>(desc.src) + desc.src_offset;
    const std::uint64_t offset = desc.dst_offset, bytes = desc.nbytes;
    const bool queued = worker().post([&rt, &d, target, source, offset, bytes] {
      Status status = write_bytes(rt, d, *target, offset, source, bytes);
      if (!status.ok()) note_error(d, status, "a copy to the device");
    });
    if (!queued) return make_error(ErrorCode::out_of_memory, "no host memory to queue the copy");
    return Status();
  }
  return worker().run([&]() -> Status {
    const auto& src = *static_cast<const Allocation*>(desc.src);
    if (desc.dst_kind != kind) { // device -> host: complete on return
      return read_bytes(rt, state_of(*desc.src_device), src, desc.src_offset,
                        static_cast<std::byte*>(desc.dst) + desc.dst_offset, desc.nbytes);
    }
    const auto& dst = *static_cast<const Allocation*>(desc.dst);
    if (desc.src_device == desc.dst_device && desc.src_offset % 4 == 0 && desc.dst_offset % 4 == 0 &&
        desc.nbytes % 4 == 0) {
      DeviceState& d = state_of(*desc.dst_device);
      rt.api.wgpuCommandEncoderCopyBufferToBuffer(batch_encoder(rt, d), src.buffer, desc.src_offset, dst.buffer,
                                                  desc.dst_offset, desc.nbytes);
      return check_device(d);
    }
    // Unaligned, or between two devices: through host memory.
    std::vector<std::byte> bounce(desc.nbytes);
    DEVRT_RETURN_IF_ERROR(read_bytes(rt, state_of(*desc.src_device), src, desc.src_offset, bounce.data(), desc.nbytes));
    return write_bytes(rt, state_of(*desc.dst_device), dst, desc.dst_offset, bounce.data(), desc.nbytes);
  });
}

Result<void*> WebgpuBackend::stream_create(const BackendDevice& device) noexcept {
  static_cast<void>(device);
  auto* token = new (std::nothrow) StreamToken{};
  if (token == nullptr) return make_error(ErrorCode::out_of_memory, "no host memory for a stream");
  return static_cast<void*>(token);
}

Status WebgpuBackend::stream_destroy(const BackendDevice& device, void* stream) noexcept {
  Status drained = stream_synchronize(device, stream);
  delete static_cast<StreamToken*>(stream);
  return drained;
}

Status WebgpuBackend::stream_synchronize(const BackendDevice& device, void*) noexcept {
  return device_synchronize(device);
}

Status WebgpuBackend::device_synchronize(const BackendDevice& device) noexcept {
  const Runtime& rt = runtime();
  DeviceState& d = state_of(device);
  if (known_idle(d)) return Status(); // nothing queued since the device was last seen idle
  return worker().run([&] { return wait_idle(rt, d); });
}

Result<void*> WebgpuBackend::event_create(const BackendDevice&) noexcept {
  auto* event = new (std::nothrow) EventState();
  if (event == nullptr) return make_error(ErrorCode::out_of_memory, "no host memory for an event");
  return static_cast<void*>(event);
}

Status WebgpuBackend::event_destroy(const BackendDevice&, void* event) noexcept {
  worker().run([&] { // the flag's references are counted on this thread
    release(static_cast<EventState*>(event)->flag);
    delete static_cast<EventState*>(event);
    return 0;
  });
  return Status();
}

Status WebgpuBackend::event_record(const BackendDevice& device, void* event, void*) noexcept {
  const Runtime& rt = runtime();
  DeviceState& d = state_of(device);
  auto* flag = new (std::nothrow) EventFlag();
  if (flag == nullptr) return make_error(ErrorCode::out_of_memory, "no host memory for an event record");
  return worker().run([&]() -> Status {
    if (Status flushed = flush(rt, d); !flushed.ok()) {
      delete flag;
      return flushed;
    }
    WGPUQueueWorkDoneCallbackInfo callback{};
    callback.mode = kCallbackModeAllowProcessEvents;
    callback.callback = [](WGPUEnum status, WGPUStringView message, void* data, void*) {
      auto* reached = static_cast<EventFlag*>(data);
      reached->status = status;
      if (status != kSuccess) reached->message = text(message);
      reached->done.store(true, std::memory_order_release);
      release(reached);
    };
    callback.userdata1 = flag;
    rt.api.wgpuQueueOnSubmittedWorkDone(d.queue, callback);
    auto& state = *static_cast<EventState*>(event);
    release(state.flag);
    state.flag = flag;
    return Status();
  });
}

Status WebgpuBackend::event_synchronize(const BackendDevice& device, void* event) noexcept {
  const Runtime& rt = runtime();
  DeviceState& d = state_of(device);
  return worker().run([&]() -> Status {
    const EventFlag* flag = static_cast<EventState*>(event)->flag;
    if (flag == nullptr) return Status();
    if (!wait_for(rt, flag->done)) return make_error(ErrorCode::timed_out, "the event was not reached within 30 s");
    DEVRT_RETURN_IF_ERROR(check_device(d));
    return reached(*flag);
  });
}

Result<bool> WebgpuBackend::event_query(const BackendDevice& device, void* event) noexcept {
  const Runtime& rt = runtime();
  DeviceState& d = state_of(device);
  return worker().run([&]() -> Result<bool> {
    const EventFlag* flag = static_cast<EventState*>(event)->flag;
    if (flag == nullptr) return true;
    rt.api.wgpuInstanceProcessEvents(rt.instance);
    DEVRT_RETURN_IF_ERROR(check_device(d));
    if (!flag->done.load(std::memory_order_acquire)) return false;
    DEVRT_RETURN_IF_ERROR(reached(*flag));
    return true;
  });
}

Status WebgpuBackend::stream_wait_event(const BackendDevice&, void*, void*) noexcept {
  return Status(); // one queue, in order: whatever the event marks runs before the stream's next work
}

} // namespace devrt::webgpu
