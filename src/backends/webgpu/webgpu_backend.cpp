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

#include "support/lazy_runtime.hpp"
#include "webgpu_state.hpp"

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

namespace {
constexpr auto kWaitLimit = std::chrono::seconds(30);
} // namespace

// Runs the instance's events until `done` is set or the limit passes. Runs on the worker thread.
bool wait_for(const Runtime& rt, const std::atomic<bool>& done) {
  const auto deadline = std::chrono::steady_clock::now() + kWaitLimit;
  for (unsigned spins = 0; !done.load(std::memory_order_acquire); ++spins) {
    rt.api.wgpuInstanceProcessEvents(rt.instance);
    if (done.load(std::memory_order_acquire)) break;
    if (std::chrono::steady_clock::now() > deadline) return false;
    if (spins > 64) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  return true;
}

namespace {

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

// The adapter for `backend` at `level`, or nullptr with `why` set.
WGPUAdapter request_adapter(const Runtime& rt, WGPUEnum backend, WGPUEnum level, std::string& why) {
  struct Answer {
    std::atomic<bool> done{false};
    WGPUAdapter adapter = nullptr;
    std::string message;
  } answer;
  WGPURequestAdapterOptions options{};
  options.backendType = backend;
  options.featureLevel = level;
  WGPURequestAdapterCallbackInfo callback{};
  callback.mode = kCallbackModeAllowProcessEvents;
  callback.callback = [](WGPUEnum status, WGPUAdapter adapter, WGPUStringView message, void* data, void*) {
    auto* a = static_cast<Answer*>(data);
    if (status == kSuccess) a->adapter = adapter;
    a->message = text(message);
    a->done.store(true, std::memory_order_release);
  };
  callback.userdata1 = &answer;
  rt.api.wgpuInstanceRequestAdapter(rt.instance, &options, callback);
  if (!wait_for(rt, answer.done)) {
    why = std::string(backend_type_name(backend)) + ": no answer to wgpuInstanceRequestAdapter";
    return nullptr;
  }
  if (answer.adapter == nullptr) {
    why = std::string(backend_type_name(backend)) + ": " + (answer.message.empty() ? "no adapter" : answer.message);
  }
  return answer.adapter;
}

Status open_device(Runtime& rt, DeviceState& d) {
  const Api& api = rt.api;
  WGPUAdapterInfo info{};
  if (api.wgpuAdapterGetInfo(d.adapter, &info) != kSuccess) {
    return make_error(ErrorCode::driver_error, "wgpuAdapterGetInfo failed");
  }
  d.name = text(info.device);
  d.description = text(info.description);
  d.backend_type = info.backendType;
  d.adapter_type = info.adapterType;
  d.subgroup_min_size = info.subgroupMinSize;
  api.wgpuAdapterInfoFreeMembers(info);
  d.backend_name = backend_type_name(d.backend_type);
  if (api.wgpuAdapterGetLimits(d.adapter, &d.limits) != kSuccess) {
    return make_error(ErrorCode::driver_error, "wgpuAdapterGetLimits failed");
  }
  d.shader_f16 = api.wgpuAdapterHasFeature(d.adapter, kFeatureShaderF16) != 0;
  d.subgroups = api.wgpuAdapterHasFeature(d.adapter, kFeatureSubgroups) != 0;
  std::vector<WGPUEnum> features;
  if (d.shader_f16) features.push_back(kFeatureShaderF16);
  if (d.subgroups) features.push_back(kFeatureSubgroups);
  struct Answer {
    std::atomic<bool> done{false};
    WGPUDevice device = nullptr;
    std::string message;
  } answer;
  WGPUDeviceDescriptor descriptor{};
  descriptor.requiredFeatureCount = features.size();
  descriptor.requiredFeatures = features.data();
  descriptor.requiredLimits = &d.limits; // everything the adapter offers, not the defaults
  descriptor.deviceLostCallbackInfo.mode = kCallbackModeAllowProcessEvents;
  descriptor.deviceLostCallbackInfo.callback = [](const WGPUDevice*, WGPUEnum, WGPUStringView message, void* data,
                                                  void*) {
    auto* state = static_cast<DeviceState*>(data);
    state->lost_message = text(message);
    state->lost.store(true, std::memory_order_release);
  };
  descriptor.deviceLostCallbackInfo.userdata1 = &d;
  descriptor.uncapturedErrorCallbackInfo.callback = [](const WGPUDevice*, WGPUEnum, WGPUStringView message, void* data,
                                                       void*) {
    static_cast<DeviceState*>(data)->uncaptured = text(message);
  };
  descriptor.uncapturedErrorCallbackInfo.userdata1 = &d;
  WGPURequestDeviceCallbackInfo callback{};
  callback.mode = kCallbackModeAllowProcessEvents;
  callback.callback = [](WGPUEnum status, WGPUDevice device, WGPUStringView message, void* data, void*) {
    auto* a = static_cast<Answer*>(data);
    if (status == kSuccess) a->device = device;
    a->message = text(message);
    a->done.store(true, std::memory_order_release);
  };
  callback.userdata1 = &answer;
  api.wgpuAdapterRequestDevice(d.adapter, &descriptor, callback);
  if (!wait_for(rt, answer.done)) return make_error(ErrorCode::driver_error, "no answer to wgpuAdapterRequestDevice");
  if (answer.device == nullptr) {
    return make_error(ErrorCode::driver_error, "wgpuAdapterRequestDevice failed: ", answer.message);
  }
  d.device = answer.device;
  d.queue = api.wgpuDeviceGetQueue(d.device);
  return Status();
}

// The backend DEVRT_WEBGPU_BACKEND forces ("vulkan", "opengles", "metal", "d3d12"), 0 for none,
// or an error for another word.
Result<WGPUEnum> forced_backend() {
  const char* value = ::secure_getenv("DEVRT_WEBGPU_BACKEND"); // NOLINT(concurrency-mt-unsafe)
  if (value == nullptr || value[0] == '\0') return WGPUEnum{0};
  std::string_view word = value;
  if (word == "vulkan") return kBackendVulkan;
  if (word == "opengles") return kBackendOpenGLES;
  if (word == "metal") return kBackendMetal;
  if (word == "d3d12") return kBackendD3D12;
  return make_error(ErrorCode::invalid_argument, "DEVRT_WEBGPU_BACKEND='", word,
                    "' is none of vulkan, opengles, metal, d3d12");
}

Status discover(Runtime& rt) {
  std::string reason;
  const char* chosen = ::secure_getenv("DEVRT_WEBGPU_LIBRARY"); // NOLINT(concurrency-mt-unsafe)
  bool opened = chosen != nullptr && chosen[0] != '\0'
                    ? rt.library.open({chosen}, reason)
                    : rt.library.open({"libwebgpu_dawn.so", "libwgpu_native.so", "libwebgpu_wrapper.so"}, reason);
  if (!opened) {
    return make_error(ErrorCode::unavailable,
                      "no WebGPU implementation (Dawn's libwebgpu_dawn.so, wgpu-native's "
                      "libwgpu_native.so; DEVRT_WEBGPU_LIBRARY names another): ",
                      reason);
  }
#define DEVRT_WEBGPU_RESOLVE(symbol, result, parameters)                                                               \
  if (!rt.library.resolve(#symbol, rt.api.symbol)) {                                                                   \
    return detail::missing_symbol(rt.library, #symbol, " (a webgpu.h implementation of 2025 or later is needed)");     \
  }
  DEVRT_WEBGPU_SYMBOLS(DEVRT_WEBGPU_RESOLVE)
#undef DEVRT_WEBGPU_RESOLVE
  DEVRT_ASSIGN_OR_RETURN(WGPUEnum forced, forced_backend());
  // Dawn's OpenGL ES backend finds Mesa's surfaceless EGL platform only through this variable.
  ::setenv("EGL_PLATFORM", "surfaceless", 0); // NOLINT(concurrency-mt-unsafe)
  rt.instance = rt.api.wgpuCreateInstance(nullptr);
  if (rt.instance == nullptr) return make_error(ErrorCode::unavailable, "wgpuCreateInstance failed");
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
  for (const Choice& choice : choices) {
    std::string why;
    WGPUAdapter adapter = request_adapter(rt, choice.backend, choice.level, why);
    if (adapter == nullptr) {
      tried += (tried.empty() ? "" : "; ") + why;
      continue;
    }
    auto state = std::make_unique<DeviceState>();
    state->adapter = adapter;
    Status opened_device = open_device(rt, *state);
    if (!opened_device.ok() || state->backend_type == kBackendNull) {
      tried += (tried.empty() ? "" : "; ") + std::string(backend_type_name(choice.backend)) + ": " +
               (opened_device.ok() ? "the Null adapter (refused: it computes nothing)"
                                   : std::string(opened_device.message()));
      continue;
    }
    rt.devices.push_back(std::move(state));
    break;
  }
  if (rt.devices.empty()) return make_error(ErrorCode::unavailable, "no WebGPU adapter: ", tried);
  return Status();
}

// Discovery runs on the worker thread, which then owns the instance and every device.
Status discover_on_worker(Runtime& rt) {
  return worker().run([&] { return discover(rt); });
}

using Discovery = detail::LazyRuntime<Runtime, discover_on_worker>;

} // namespace

Runtime& runtime() noexcept { return Discovery::get(); }

DeviceState& state_of(std::int32_t index) { return *runtime().devices[static_cast<std::size_t>(index)]; }

// The errors of the calls between push_scope() and pop_scope(), as a Status naming `call`.
void push_scope(const Api& api, DeviceState& d) {
  api.wgpuDevicePushErrorScope(d.device, kErrorFilterOutOfMemory);
  api.wgpuDevicePushErrorScope(d.device, kErrorFilterValidation);
}

Status pop_scope(const Runtime& rt, DeviceState& d, const char* call) {
  struct Answer {
    std::atomic<bool> done{false};
    WGPUEnum type = kErrorNone;
    std::string message;
  } answers[2];
  for (Answer& answer : answers) {
    WGPUPopErrorScopeCallbackInfo callback{};
    callback.mode = kCallbackModeAllowProcessEvents;
    callback.callback = [](WGPUEnum, WGPUEnum type, WGPUStringView message, void* data, void*) {
      auto* a = static_cast<Answer*>(data);
      a->type = type;
      a->message = text(message);
      a->done.store(true, std::memory_order_release);
    };
    callback.userdata1 = &answer;
    rt.api.wgpuDevicePopErrorScope(d.device, callback);
    if (!wait_for(rt, answer.done)) return make_error(ErrorCode::driver_error, call, ": no answer to its error scope");
  }
  for (const Answer& answer : answers) {
    if (answer.type == kErrorOutOfMemory) return make_error(ErrorCode::out_of_memory, call, ": ", answer.message);
    if (answer.type != kErrorNone) return make_error(ErrorCode::driver_error, call, ": ", answer.message);
  }
  return Status();
}

Status check_lost(DeviceState& d) {
  if (d.lost.load(std::memory_order_acquire)) {
    return make_error(ErrorCode::driver_error, "the WebGPU device was lost: ", d.lost_message);
  }
  return Status();
}

namespace {

// Waits until the queue has run everything submitted. Runs on the worker thread.
Status wait_idle(const Runtime& rt, DeviceState& d) {
  std::atomic<bool> done{false};
  WGPUQueueWorkDoneCallbackInfo callback{};
  callback.mode = kCallbackModeAllowProcessEvents;
  callback.callback = [](WGPUEnum, WGPUStringView, void* data, void*) {
    static_cast<std::atomic<bool>*>(data)->store(true, std::memory_order_release);
  };
  callback.userdata1 = &done;
  rt.api.wgpuQueueOnSubmittedWorkDone(d.queue, callback);
  if (!wait_for(rt, done)) return make_error(ErrorCode::timed_out, "the queue did not finish within 30 s");
  return check_lost(d);
}

} // namespace

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

constexpr std::uint64_t align_down(std::uint64_t value) { return value & ~std::uint64_t{3}; }
constexpr std::uint64_t align_up(std::uint64_t value) { return (value + 3) & ~std::uint64_t{3}; }

// Reads [offset, offset + bytes) of `source` (both multiples of 4) into `out` through a mapped
// staging buffer, after everything queued before. Runs on the worker thread.
Status read_aligned(const Runtime& rt, DeviceState& d, WGPUBuffer source, std::uint64_t offset, std::uint64_t bytes,
                    void* out) {
  const Api& api = rt.api;
  DEVRT_ASSIGN_OR_RETURN(WGPUBuffer staging, create_buffer(rt, d, bytes, kUsageMapRead | kUsageCopyDst));
  WGPUCommandEncoder encoder = api.wgpuDeviceCreateCommandEncoder(d.device, nullptr);
  api.wgpuCommandEncoderCopyBufferToBuffer(encoder, source, offset, staging, 0, bytes);
  WGPUCommandBuffer commands = api.wgpuCommandEncoderFinish(encoder, nullptr);
  api.wgpuQueueSubmit(d.queue, 1, &commands);
  api.wgpuCommandBufferRelease(commands);
  api.wgpuCommandEncoderRelease(encoder);
  struct Answer {
    std::atomic<bool> done{false};
    WGPUEnum status = 0;
    std::string message;
  } answer;
  WGPUBufferMapCallbackInfo callback{};
  callback.mode = kCallbackModeAllowProcessEvents;
  callback.callback = [](WGPUEnum status, WGPUStringView message, void* data, void*) {
    auto* a = static_cast<Answer*>(data);
    a->status = status;
    a->message = text(message);
    a->done.store(true, std::memory_order_release);
  };
  callback.userdata1 = &answer;
  api.wgpuBufferMapAsync(staging, kMapRead, 0, static_cast<std::size_t>(bytes), callback);
  Status status;
  if (!wait_for(rt, answer.done)) {
    status = make_error(ErrorCode::timed_out, "wgpuBufferMapAsync did not finish within 30 s");
  } else if (answer.status != kSuccess) {
    status = make_error(ErrorCode::driver_error, "wgpuBufferMapAsync failed: ", answer.message);
  } else {
    const void* mapped = api.wgpuBufferGetConstMappedRange(staging, 0, static_cast<std::size_t>(bytes));
    if (mapped == nullptr) {
      status = make_error(ErrorCode::driver_error, "wgpuBufferGetConstMappedRange returned null");
    } else {
      std::memcpy(out, mapped, static_cast<std::size_t>(bytes));
    }
    api.wgpuBufferUnmap(staging);
  }
  release_buffer(api, staging);
  return status.ok() ? check_lost(d) : status;
}

// Writes `bytes` at `offset` of `target`: directly when both are multiples of 4 (the queue copies
// the host bytes before returning), else by reading the 4-byte words at the edges first. Runs on
// the worker thread.
Status write_bytes(const Runtime& rt, DeviceState& d, const Allocation& target, std::uint64_t offset,
                   const std::byte* data, std::uint64_t bytes) {
  if (offset % 4 == 0 && bytes % 4 == 0) {
    rt.api.wgpuQueueWriteBuffer(d.queue, target.buffer, offset, data, static_cast<std::size_t>(bytes));
    return check_lost(d);
  }
  const std::uint64_t begin = align_down(offset);
  const std::uint64_t end = std::min(align_up(offset + bytes), target.size);
  std::vector<std::byte> window(static_cast<std::size_t>(end - begin));
  DEVRT_RETURN_IF_ERROR(read_aligned(rt, d, target.buffer, begin, end - begin, window.data()));
  std::memcpy(window.data() + (offset - begin), data, static_cast<std::size_t>(bytes));
  rt.api.wgpuQueueWriteBuffer(d.queue, target.buffer, begin, window.data(), window.size());
  return check_lost(d);
}

// Reads `bytes` at `offset` of `source` into `out`. Runs on the worker thread.
Status read_bytes(const Runtime& rt, DeviceState& d, const Allocation& source, std::uint64_t offset, std::byte* out,
                  std::uint64_t bytes) {
  const std::uint64_t begin = align_down(offset);
  const std::uint64_t end = std::min(align_up(offset + bytes), source.size);
  if (begin == offset && end - begin == bytes) return read_aligned(rt, d, source.buffer, begin, bytes, out);
  std::vector<std::byte> window(static_cast<std::size_t>(end - begin));
  DEVRT_RETURN_IF_ERROR(read_aligned(rt, d, source.buffer, begin, end - begin, window.data()));
  std::memcpy(out, window.data() + (offset - begin), static_cast<std::size_t>(bytes));
  return Status();
}

// The token a devrt stream of this backend is: every stream submits to the device's one queue.
struct StreamToken {
  std::int32_t device = 0;
};

// An event: the flag the queue sets once the work submitted before record() has run; null until
// recorded (an unrecorded event is complete). The callback owns a reference, so destroying the
// event before the queue reaches it is safe.
struct EventState {
  std::shared_ptr<std::atomic<bool>> done;
};

} // namespace

Status WebgpuBackend::availability() noexcept { return Discovery::get_retrying().status; }

Result<std::int32_t> WebgpuBackend::device_count() noexcept {
  Runtime& rt = Discovery::get_retrying();
  if (!rt.status.ok()) return std::int32_t{0};
  return static_cast<std::int32_t>(rt.devices.size());
}

Result<AttributeValue> WebgpuBackend::get_attribute(const BackendDevice& device, Attribute attribute) noexcept {
  const DeviceState& d = state_of(device.index);
  auto integer = [](auto value) { return AttributeValue(static_cast<std::int64_t>(value)); };
  switch (attribute) {
  case Attribute::exist: return AttributeValue(true);
  case Attribute::max_threads_per_block: return integer(d.limits.maxComputeInvocationsPerWorkgroup);
  case Attribute::warp_size: return d.subgroup_min_size != 0 ? integer(d.subgroup_min_size) : AttributeValue();
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

Result<Target> WebgpuBackend::detect_target(const BackendDevice& device) noexcept {
  const DeviceState& d = state_of(device.index);
  auto integer = [](auto value) { return static_cast<std::int64_t>(value); };
  Target target("webgpu");
  target.set("keys", {"webgpu", "gpu"});
  target.set("max_num_threads", integer(d.limits.maxComputeInvocationsPerWorkgroup));
  target.set("max_shared_memory_per_block", integer(d.limits.maxComputeWorkgroupStorageSize));
  target.set("thread_warp_size", integer(d.subgroup_min_size != 0 ? d.subgroup_min_size : 1));
  target.set("supports_subgroups", d.subgroups);
  target.set("supports_float16", d.shader_f16);
  target.set("max_block_size_x", integer(d.limits.maxComputeWorkgroupSizeX));
  target.set("max_block_size_y", integer(d.limits.maxComputeWorkgroupSizeY));
  target.set("max_block_size_z", integer(d.limits.maxComputeWorkgroupSizeZ));
  target.set("max_storage_buffer_binding_size", integer(d.limits.maxStorageBufferBindingSize));
  target.set("max_storage_buffers_per_shader_stage", integer(d.limits.maxStorageBuffersPerShaderStage));
  target.set("device_name", d.name);
  target.set("backend", d.backend_name);
  return target;
}

Result<void*> WebgpuBackend::allocate(const BackendDevice& device, std::size_t nbytes, std::size_t) noexcept {
  const Runtime& rt = runtime();
  DeviceState& d = state_of(device.index);
  const std::uint64_t bytes = align_up(nbytes);
  if (bytes > d.limits.maxBufferSize) {
    return make_error(ErrorCode::out_of_memory, "exceeds the device's largest buffer of ", d.limits.maxBufferSize,
                      " bytes (maxBufferSize)");
  }
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

Status WebgpuBackend::free(const BackendDevice&, void* ptr) noexcept {
  const Runtime& rt = runtime();
  auto* allocation = static_cast<Allocation*>(ptr);
  // WebGPU keeps a destroyed buffer alive for the work already submitted that uses it.
  worker().run([&] {
    release_buffer(rt.api, allocation->buffer);
    return 0;
  });
  freed_buffers().freed(allocation);
  delete allocation;
  return Status();
}

Status WebgpuBackend::copy(const CopyDesc& desc) noexcept {
  const Runtime& rt = runtime();
  const auto kind = static_cast<std::int32_t>(WebgpuBackend::kind);
  if (desc.src_kind == kind) DEVRT_RETURN_IF_ERROR(freed_buffers().check(desc.src, "the source"));
  if (desc.dst_kind == kind) DEVRT_RETURN_IF_ERROR(freed_buffers().check(desc.dst, "the destination"));
  return worker().run([&]() -> Status {
    if (desc.src_kind != kind) { // host -> device
      return write_bytes(rt, state_of(desc.dst_device_id), *static_cast<const Allocation*>(desc.dst), desc.dst_offset,
                         static_cast<const std::byte*>(desc.src) + desc.src_offset, desc.nbytes);
    }
    const auto& src = *static_cast<const Allocation*>(desc.src);
    if (desc.dst_kind != kind) { // device -> host: complete on return
      return read_bytes(rt, state_of(desc.src_device_id), src, desc.src_offset,
                        static_cast<std::byte*>(desc.dst) + desc.dst_offset, desc.nbytes);
    }
    const auto& dst = *static_cast<const Allocation*>(desc.dst);
    if (desc.src_device_id == desc.dst_device_id && desc.src_offset % 4 == 0 && desc.dst_offset % 4 == 0 &&
        desc.nbytes % 4 == 0) {
      DeviceState& d = state_of(desc.dst_device_id);
      WGPUCommandEncoder encoder = rt.api.wgpuDeviceCreateCommandEncoder(d.device, nullptr);
      rt.api.wgpuCommandEncoderCopyBufferToBuffer(encoder, src.buffer, desc.src_offset, dst.buffer, desc.dst_offset,
                                                  desc.nbytes);
      WGPUCommandBuffer commands = rt.api.wgpuCommandEncoderFinish(encoder, nullptr);
      rt.api.wgpuQueueSubmit(d.queue, 1, &commands);
      rt.api.wgpuCommandBufferRelease(commands);
      rt.api.wgpuCommandEncoderRelease(encoder);
      return check_lost(d);
    }
    // Unaligned, or between two devices: through host memory.
    std::vector<std::byte> bounce(desc.nbytes);
    DEVRT_RETURN_IF_ERROR(
        read_bytes(rt, state_of(desc.src_device_id), src, desc.src_offset, bounce.data(), desc.nbytes));
    return write_bytes(rt, state_of(desc.dst_device_id), dst, desc.dst_offset, bounce.data(), desc.nbytes);
  });
}

Result<void*> WebgpuBackend::stream_create(const BackendDevice& device) noexcept {
  auto* token = new (std::nothrow) StreamToken{device.index};
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
  DeviceState& d = state_of(device.index);
  return worker().run([&] { return wait_idle(rt, d); });
}

Result<void*> WebgpuBackend::event_create(const BackendDevice&) noexcept {
  auto* event = new (std::nothrow) EventState();
  if (event == nullptr) return make_error(ErrorCode::out_of_memory, "no host memory for an event");
  return static_cast<void*>(event);
}

Status WebgpuBackend::event_destroy(const BackendDevice&, void* event) noexcept {
  worker().run([&] { // the flag's last reference may be the queue's, released on this thread
    delete static_cast<EventState*>(event);
    return 0;
  });
  return Status();
}

Status WebgpuBackend::event_record(const BackendDevice& device, void* event, void*) noexcept {
  const Runtime& rt = runtime();
  DeviceState& d = state_of(device.index);
  auto flag = std::make_shared<std::atomic<bool>>(false);
  auto* reference = new (std::nothrow) std::shared_ptr<std::atomic<bool>>(flag);
  if (reference == nullptr) return make_error(ErrorCode::out_of_memory, "no host memory for an event record");
  return worker().run([&]() -> Status {
    DEVRT_RETURN_IF_ERROR(check_lost(d));
    WGPUQueueWorkDoneCallbackInfo callback{};
    callback.mode = kCallbackModeAllowProcessEvents;
    callback.callback = [](WGPUEnum, WGPUStringView, void* data, void*) {
      auto* held = static_cast<std::shared_ptr<std::atomic<bool>>*>(data);
      (*held)->store(true, std::memory_order_release);
      delete held;
    };
    callback.userdata1 = reference;
    rt.api.wgpuQueueOnSubmittedWorkDone(d.queue, callback);
    static_cast<EventState*>(event)->done = std::move(flag);
    return Status();
  });
}

Status WebgpuBackend::event_synchronize(const BackendDevice& device, void* event) noexcept {
  const Runtime& rt = runtime();
  DeviceState& d = state_of(device.index);
  return worker().run([&]() -> Status {
    const auto& done = static_cast<EventState*>(event)->done;
    if (done == nullptr) return Status();
    if (!wait_for(rt, *done)) return make_error(ErrorCode::timed_out, "the event was not reached within 30 s");
    return check_lost(d);
  });
}

Result<bool> WebgpuBackend::event_query(const BackendDevice& device, void* event) noexcept {
  const Runtime& rt = runtime();
  DeviceState& d = state_of(device.index);
  return worker().run([&]() -> Result<bool> {
    const auto& done = static_cast<EventState*>(event)->done;
    if (done == nullptr) return true;
    rt.api.wgpuInstanceProcessEvents(rt.instance);
    DEVRT_RETURN_IF_ERROR(check_lost(d));
    return done->load(std::memory_order_acquire);
  });
}

Status WebgpuBackend::stream_wait_event(const BackendDevice&, void*, void*) noexcept {
  return Status(); // one queue, in order: whatever the event marks runs before the stream's next work
}

} // namespace devrt::webgpu
