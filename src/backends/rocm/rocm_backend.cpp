// SPDX-License-Identifier: Apache-2.0
#include "rocm_backend.hpp"

#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "backend_support/gpu_driver.hpp"
#include "backend_support/gpu_launch.hpp"
#include "rocm_api.hpp"
#include "support/dynamic_library.hpp"
#include "support/fault_injection.hpp"
#include "support/lazy_runtime.hpp"
#include "support/over_aligned.hpp"

namespace devrt::rocm {

namespace {

// hipMalloc returns addresses aligned to at least this; larger requests are over-allocated.
constexpr std::size_t kDeviceAlignment = 256;

struct HipDevice : detail::GpuDeviceInfo {
  std::string processor, gcn_arch_name;
};

struct Runtime {
  Status status;
  Api api;
  detail::DynamicLibrary library;
  int driver_version = 0;
  std::vector<HipDevice> devices;
  detail::OverAlignedMap over_aligned;
};

[[gnu::cold]] Status hip_error(const Api& api, const char* call, hipError_t code) {
  ErrorCode devrt_code = ErrorCode::driver_error;
  if (code == hipErrorOutOfMemory) devrt_code = ErrorCode::out_of_memory;
  if (code == hipErrorInvalidValue || code == hipErrorInvalidImage || code == hipErrorNoBinaryForGpu) {
    devrt_code = ErrorCode::invalid_argument;
  }
  const char* name = api.hipGetErrorName != nullptr ? api.hipGetErrorName(code) : nullptr;
  return make_error(devrt_code, call, " failed: ", name != nullptr ? name : "an unlisted HIP error", " (",
                    static_cast<int>(code), ")");
}

#define DEVRT_HIP_CHECK(api, call_text, expr)                                                                          \
  do {                                                                                                                 \
    hipError_t devrt_hip_code = (expr);                                                                                \
    if (devrt_hip_code != hipSuccess) [[unlikely]]                                                                     \
      return hip_error(api, call_text, devrt_hip_code);                                                                \
  } while (0)

Status discover(Runtime& rt) {
  DEVRT_RETURN_IF_ERROR(rt.library.open(kRuntime));
  DEVRT_RESOLVE_SYMBOLS(rt.library, rt.api, DEVRT_HIP_SYMBOLS, "");
  DEVRT_RESOLVE_SYMBOLS(rt.library, rt.api, DEVRT_HIP_TYPED_SYMBOLS, "");
  DEVRT_FAULT_WRAP_SYMBOLS("rocm", rt.api, DEVRT_HIP_SYMBOLS);
  DEVRT_FAULT_WRAP_SYMBOLS("rocm", rt.api, DEVRT_HIP_TYPED_SYMBOLS);
  const Api& api = rt.api;
  static_cast<void>(api.hipDriverGetVersion(&rt.driver_version));
  int count = 0;
  hipError_t code = api.hipGetDeviceCount(&count);
  if (code == hipErrorNoDevice || (code == hipSuccess && count == 0)) {
    return make_error(ErrorCode::unavailable, "no ROCm device: hipGetDeviceCount reports hipErrorNoDevice (",
                      rt.library.path(), " loaded; no AMD GPU or no access to /dev/kfd)");
  }
  if (code != hipSuccess) return hip_error(api, "hipGetDeviceCount", code); // may pass: discovered again
  for (int i = 0; i < count; ++i) {
    hipDeviceProp_t properties{};
    DEVRT_HIP_CHECK(api, "hipGetDeviceProperties", api.hipGetDeviceProperties(&properties, i));
    HipDevice d;
    d.name = properties.name;
    d.gcn_arch_name = properties.gcnArchName;
    d.processor = d.gcn_arch_name.substr(0, d.gcn_arch_name.find(':'));
    auto attr = [&](hipDeviceAttribute_t a) {
      int value = 0;
      return api.hipDeviceGetAttribute(&value, a, i) == hipSuccess ? value : 0;
    };
    d.max_threads = attr(hipDeviceAttributeMaxThreadsPerBlock);
    d.warp = attr(hipDeviceAttributeWarpSize);
    d.shared_per_block = attr(hipDeviceAttributeMaxSharedMemoryPerBlock);
    d.clock_khz = attr(hipDeviceAttributeClockRate);
    d.processors = attr(hipDeviceAttributeMultiprocessorCount);
    d.registers = attr(hipDeviceAttributeMaxRegistersPerBlock);
    d.l2_bytes = attr(hipDeviceAttributeL2CacheSize);
    d.pitch_alignment = attr(hipDeviceAttributeTexturePitchAlignment);
    d.max_block[0] = attr(hipDeviceAttributeMaxBlockDimX);
    d.max_block[1] = attr(hipDeviceAttributeMaxBlockDimY);
    d.max_block[2] = attr(hipDeviceAttributeMaxBlockDimZ);
    d.max_grid[0] = attr(hipDeviceAttributeMaxGridDimX);
    d.max_grid[1] = attr(hipDeviceAttributeMaxGridDimY);
    d.max_grid[2] = attr(hipDeviceAttributeMaxGridDimZ);
    d.total_memory = properties.totalGlobalMem;
    rt.devices.push_back(std::move(d));
  }
  return Status();
}

using Discovery = detail::LazyRuntime<Runtime, discover>;
Runtime& runtime() noexcept { return Discovery::get(); }

// The open device's state: its HipDevice as discovery described it (RocmDriver::open). HIP has no
// context to hold: the device is made current by number.
const HipDevice& state_of(const BackendDevice& device) noexcept { return backend_state<const HipDevice>(device); }

// Makes `device` the calling thread's HIP device.
Status activate(const Api& api, std::int32_t device) noexcept {
  int current = -1;
  if (api.hipGetDevice(&current) != hipSuccess || current != device) {
    DEVRT_HIP_CHECK(api, "hipSetDevice", api.hipSetDevice(device));
  }
  return Status();
}

struct HipFunction {
  hipFunction_t function = nullptr;
  std::string name;
  detail::GpuLimits limits;
  int static_shared = 0;
};

} // namespace

// ---- The driver traits of the operations HIP shares with CUDA (backend_support/gpu_driver.hpp) ------------

struct RocmDriver {
  using Api = rocm::Api;
  using Error = hipError_t;
  using Stream = hipStream_t;
  using Event = hipEvent_t;
  using DevicePointer = void*;
  static constexpr Error kSuccess = hipSuccess;
  static constexpr Error kNotReady = hipErrorNotReady;
  static constexpr unsigned kStreamFlags = hipStreamNonBlocking;
  static constexpr unsigned kEventFlags = hipEventDisableTiming;
  static constexpr unsigned kTimedEventFlags = hipEventDefault;
  static constexpr Error kInvalidHandle = hipErrorInvalidHandle;
  static constexpr std::size_t kAllocationAlignment = kDeviceAlignment;
  static const Api& api() noexcept { return runtime().api; }
  static detail::OverAlignedMap& over_aligned() noexcept { return runtime().over_aligned; }
  static Status activate(const BackendDevice& device) noexcept { return rocm::activate(runtime().api, device.index); }
  static Result<void*> open(std::int32_t index) noexcept {
    return static_cast<void*>(&runtime().devices[static_cast<std::size_t>(index)]);
  }
  static Status close(void*) noexcept { return Status(); }
  static Status error(const char* call, Error code) noexcept { return hip_error(runtime().api, call, code); }
  static constexpr detail::DriverCall malloc{"hipMalloc", &Api::hipMalloc};
  static constexpr detail::DriverCall release{"hipFree", &Api::hipFree};
  static constexpr detail::DriverCall stream_create{"hipStreamCreateWithFlags", &Api::hipStreamCreateWithFlags};
  static constexpr detail::DriverCall stream_destroy{"hipStreamDestroy", &Api::hipStreamDestroy};
  static constexpr detail::DriverCall stream_synchronize{"hipStreamSynchronize", &Api::hipStreamSynchronize};
  static constexpr detail::DriverCall device_synchronize{"hipDeviceSynchronize", &Api::hipDeviceSynchronize};
  static constexpr detail::DriverCall event_create{"hipEventCreateWithFlags", &Api::hipEventCreateWithFlags};
  static constexpr detail::DriverCall event_destroy{"hipEventDestroy", &Api::hipEventDestroy};
  static constexpr detail::DriverCall event_record{"hipEventRecord", &Api::hipEventRecord};
  static constexpr detail::DriverCall event_synchronize{"hipEventSynchronize", &Api::hipEventSynchronize};
  static constexpr detail::DriverCall event_query{"hipEventQuery", &Api::hipEventQuery};
  static constexpr detail::DriverCall stream_wait_event{"hipStreamWaitEvent", &Api::hipStreamWaitEvent};
  static constexpr detail::DriverCall event_elapsed{"hipEventElapsedTime", &Api::hipEventElapsedTime};
  static constexpr detail::DriverCall memcpy_htod{"hipMemcpyHtoDAsync", &Api::hipMemcpyHtoDAsync};
  static constexpr detail::DriverCall memcpy_dtoh{"hipMemcpyDtoHAsync", &Api::hipMemcpyDtoHAsync};
  static constexpr detail::DriverCall memcpy_dtod{"hipMemcpyDtoDAsync", &Api::hipMemcpyDtoDAsync};
  static constexpr detail::DriverCall module_unload{"hipModuleUnload", &Api::hipModuleUnload};

  static constexpr DeviceKind kind = RocmBackend::kind;
  static constexpr std::string_view kName = RocmBackend::name;
  static constexpr std::string_view kLoadOptionsAdvice = "";
  using ModuleHandle = hipModule_t;
  using Function = HipFunction;
  // Across two devices: hipMemcpyPeerAsync with the destination current.
  static Status peer_copy(const CopyDesc& desc, void* dst, void* src, hipStream_t stream) noexcept {
    const Api& api = runtime().api;
    DEVRT_RETURN_IF_ERROR(rocm::activate(api, desc.dst_device->index));
    DEVRT_HIP_CHECK(
        api, "hipMemcpyPeerAsync",
        api.hipMemcpyPeerAsync(dst, desc.dst_device->index, src, desc.src_device->index, desc.nbytes, stream));
    return Status();
  }
  static Status check_image(const BackendDevice& device, const ModuleImageInfo& image) noexcept {
    return detail::check_rocm_image_fits(image, state_of(device).processor);
  }
  static Result<hipModule_t> load_image(ModuleFormat, std::span<const std::byte> data, BuildLog&) noexcept {
    const Api& api = runtime().api;
    hipModule_t module = nullptr;
    DEVRT_HIP_CHECK(api, "hipModuleLoadData", api.hipModuleLoadData(&module, data.data()));
    return module;
  }
  static Result<std::unique_ptr<HipFunction>> make_function(const BackendDevice& device, hipModule_t module,
                                                            const char* name) noexcept;
};

// The kernel and its limits (HIP cannot report a kernel's parameters).
Result<std::unique_ptr<HipFunction>> RocmDriver::make_function(const BackendDevice& device, hipModule_t module,
                                                               const char* name) noexcept {
  const Api& api = runtime().api;
  const HipDevice& d = state_of(device);
  hipFunction_t function = nullptr;
  hipError_t code = api.hipModuleGetFunction(&function, module, name);
  if (code == hipErrorNotFound || code == hipErrorInvalidDeviceFunction) {
    return make_error(ErrorCode::not_found, "the code object has no kernel '", name, "'");
  }
  DEVRT_HIP_CHECK(api, "hipModuleGetFunction", code);
  auto f = std::make_unique<HipFunction>();
  f->function = function;
  f->name = name;
  int max_threads = d.max_threads;
  static_cast<void>(api.hipFuncGetAttribute(&max_threads, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function));
  static_cast<void>(api.hipFuncGetAttribute(&f->static_shared, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function));
  f->limits = detail::GpuLimits::of(d, max_threads);
  return f;
}

// ---- Discovery -------------------------------------------------------------------------------

// A discovery that failed for a reason that may pass (not `unavailable`) runs again on the next
// call, as on every backend.
Status RocmBackend::availability() noexcept { return Discovery::get_retrying().status; }

Result<std::int32_t> RocmBackend::device_count() noexcept {
  return detail::discovered_device_count(Discovery::get_retrying());
}

Result<AttributeValue> RocmBackend::get_attribute(const BackendDevice& device, Attribute attribute) noexcept {
  const Runtime& rt = runtime();
  const HipDevice& d = state_of(device);
  switch (attribute) {
  case Attribute::gcn_arch: return AttributeValue(detail::gcn_arch_number(d.gcn_arch_name));
  case Attribute::api_version: return AttributeValue(std::int64_t{rt.driver_version});
  case Attribute::driver_version: return AttributeValue(std::to_string(rt.driver_version));
  case Attribute::available_global_memory: {
    DEVRT_RETURN_IF_ERROR(activate(rt.api, device.index));
    std::size_t free_bytes = 0, total_bytes = 0;
    DEVRT_HIP_CHECK(rt.api, "hipMemGetInfo", rt.api.hipMemGetInfo(&free_bytes, &total_bytes));
    return AttributeValue(static_cast<std::int64_t>(free_bytes));
  }
  default: return detail::gpu_attribute(d, attribute);
  }
}

Result<Target> RocmBackend::detect_target(const BackendDevice& device) noexcept {
  const HipDevice& d = state_of(device);
  Target target("rocm");
  target.set("keys", std::vector<std::string>{"rocm", "gpu"});
  target.set("mtriple", std::string("amdgcn-amd-amdhsa-hcc"));
  target.set("mcpu", d.processor);
  detail::set_gpu_target_limits(d, target);
  return target;
}

// ---- Memory ----------------------------------------------------------------------------------

// ---- Modules ---------------------------------------------------------------------------------

Status RocmBackend::launch(const BackendDevice& device, void* handle, const LaunchDesc& desc) noexcept {
  const Api& api = runtime().api;
  const HipDevice& d = state_of(device);
  auto& f = *static_cast<HipFunction*>(handle);
  DEVRT_RETURN_IF_ERROR(detail::check_gpu_extents(desc, f.limits));
  std::size_t shared_limit = static_cast<std::size_t>(d.shared_per_block) - static_cast<std::size_t>(f.static_shared);
  if (desc.dynamic_shared_bytes > shared_limit) {
    return make_error(ErrorCode::invalid_argument, desc.dynamic_shared_bytes,
                      " bytes of dynamic shared memory exceed the ", shared_limit, " this kernel has left (",
                      d.shared_per_block, " per block less ", f.static_shared, " static)");
  }
  detail::PackedGpuArgs packed;
  DEVRT_RETURN_IF_ERROR(detail::pack_gpu_args(desc, false, {}, packed));
  DEVRT_RETURN_IF_ERROR(activate(api, device.index));
  DEVRT_HIP_CHECK(api, "hipModuleLaunchKernel",
                  api.hipModuleLaunchKernel(f.function, desc.grid[0], desc.grid[1], desc.grid[2], desc.block[0],
                                            desc.block[1], desc.block[2],
                                            static_cast<unsigned>(desc.dynamic_shared_bytes), stream_of(desc.stream),
                                            desc.num_args > 0 ? packed.params : nullptr, nullptr));
  return Status();
}

} // namespace devrt::rocm

DEVRT_REGISTER_BACKEND(rocm, devrt::rocm::RocmBackend)
