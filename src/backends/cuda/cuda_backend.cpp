// SPDX-License-Identifier: Apache-2.0
#include "cuda_backend.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "backend_support/gpu_driver.hpp"
#include "backend_support/gpu_launch.hpp"
#include "cuda_api.hpp"
#include "support/dynamic_library.hpp"
#include "support/fault_injection.hpp"
#include "support/lazy_runtime.hpp"
#include "support/over_aligned.hpp"

namespace devrt::cuda {

namespace {

// cuMemAlloc returns addresses aligned to at least this; larger requests are over-allocated.
constexpr std::size_t kDeviceAlignment = 256;
// cuMemHostAlloc returns whole pages.
constexpr std::size_t kHostAlignment = 4096;
// Above this, dynamic shared memory needs the function's opt-in attribute.
constexpr std::size_t kDefaultDynamicSharedLimit = 48 * 1024;

// A device as discovery described it; its primary context is retained while devrt has it open
// (by the cuda kind and by cuda_host, which allocates through device 0: `opens` counts both).
struct CuDevice : detail::GpuDeviceInfo {
  CUdevice handle = 0;
  std::mutex open_mutex;
  int opens = 0;               // under open_mutex
  CUcontext context = nullptr; // the retained primary context while opens > 0
  int major = 0, minor = 0, shared_optin = 0;
};

struct Runtime {
  Status status;
  Api api;
  detail::DynamicLibrary library;
  int driver_version = 0;
  std::vector<std::unique_ptr<CuDevice>> devices;
  detail::OverAlignedMap over_aligned_device, over_aligned_host;
};

std::string_view error_name(const Api& api, CUresult code) {
  const char* text = nullptr;
  if (api.cuGetErrorName != nullptr && api.cuGetErrorName(code, &text) == CUDA_SUCCESS && text != nullptr) return text;
  return "an unlisted CUDA error";
}

[[gnu::cold]] Status cu_error(const Api& api, const char* call, CUresult code) {
  ErrorCode devrt_code = ErrorCode::driver_error;
  if (code == CUDA_ERROR_OUT_OF_MEMORY) devrt_code = ErrorCode::out_of_memory;
  if (code == CUDA_ERROR_INVALID_VALUE || code == CUDA_ERROR_INVALID_IMAGE || code == CUDA_ERROR_INVALID_PTX ||
      code == CUDA_ERROR_NO_BINARY_FOR_GPU) {
    devrt_code = ErrorCode::invalid_argument;
  }
  return make_error(devrt_code, call, " failed: ", error_name(api, code), " (", static_cast<int>(code), ")");
}

#define DEVRT_CU_CHECK(api, call_text, expr)                                                                           \
  do {                                                                                                                 \
    CUresult devrt_cu_code = (expr);                                                                                   \
    if (devrt_cu_code != CUDA_SUCCESS) [[unlikely]]                                                                    \
      return cu_error(api, call_text, devrt_cu_code);                                                                  \
  } while (0)

int device_attribute(const Api& api, CUdevice device, CUdevice_attribute attribute) {
  int value = 0;
  if (api.cuDeviceGetAttribute(&value, attribute, device) != CUDA_SUCCESS) return 0;
  return value;
}

Status discover(Runtime& rt) {
  DEVRT_RETURN_IF_ERROR(rt.library.open(kDriver));
  DEVRT_RESOLVE_SYMBOLS(rt.library, rt.api, DEVRT_CUDA_SYMBOLS, " (the driver is too old for devrt)");
  DEVRT_RESOLVE_OPTIONAL_SYMBOLS(rt.library, rt.api, DEVRT_CUDA_OPTIONAL_SYMBOLS);
  DEVRT_FAULT_WRAP_SYMBOLS("cuda", rt.api, DEVRT_CUDA_SYMBOLS);
  DEVRT_FAULT_WRAP_SYMBOLS("cuda", rt.api, DEVRT_CUDA_OPTIONAL_SYMBOLS);
  const Api& api = rt.api;
  CUresult code = api.cuInit(0);
  if (code == CUDA_ERROR_STUB_LIBRARY) {
    return make_error(ErrorCode::unavailable, "no CUDA driver: the libcuda.so.1 found is the CUDA toolkit's stub ",
                      "library (CUDA_ERROR_STUB_LIBRARY); install the NVIDIA driver");
  }
  static_cast<void>(api.cuDriverGetVersion(&rt.driver_version));
  if (code == CUDA_ERROR_NO_DEVICE) {
    return make_error(ErrorCode::unavailable, "no CUDA device: cuInit reports CUDA_ERROR_NO_DEVICE (driver ",
                      rt.driver_version / 1000, ".", rt.driver_version % 1000 / 10, ")");
  }
  if (code != CUDA_SUCCESS) {
    return make_error(ErrorCode::unavailable,
                      "the CUDA driver did not initialise: cuInit failed: ", error_name(api, code), " (",
                      static_cast<int>(code), ")");
  }
  int count = 0;
  DEVRT_CU_CHECK(api, "cuDeviceGetCount", api.cuDeviceGetCount(&count));
  if (count == 0) return make_error(ErrorCode::unavailable, "no CUDA device: cuDeviceGetCount reports 0");
  for (int i = 0; i < count; ++i) {
    auto d = std::make_unique<CuDevice>();
    DEVRT_CU_CHECK(api, "cuDeviceGet", api.cuDeviceGet(&d->handle, i));
    char name[256] = {};
    static_cast<void>(api.cuDeviceGetName(name, sizeof name - 1, d->handle));
    d->name = name;
    auto attr = [&](CUdevice_attribute a) { return device_attribute(api, d->handle, a); };
    d->major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    d->minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    d->max_threads = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    d->warp = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    d->shared_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    d->shared_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    d->clock_khz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    d->processors = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    d->registers = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
    d->l2_bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    d->pitch_alignment = attr(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT);
    d->max_block[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
    d->max_block[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
    d->max_block[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
    d->max_grid[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
    d->max_grid[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
    d->max_grid[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
    static_cast<void>(api.cuDeviceTotalMem(&d->total_memory, d->handle));
    rt.devices.push_back(std::move(d));
  }
  return Status();
}

using Discovery = detail::LazyRuntime<Runtime, discover>;
Runtime& runtime() noexcept { return Discovery::get(); }

CuDevice& device_of(std::int32_t id) noexcept { return *runtime().devices[static_cast<std::size_t>(id)]; }

// The context devrt last found or made current on this thread. Code outside devrt (the CUDA
// runtime's cudaSetDevice, say) may change the current context behind devrt's back, so this is
// trusted only where a stale value is detected: launches and synchronizes of created streams,
// whose handles belong to one context and fail (invalid context or handle) when it is not
// current; those retry once after a full activate(). Everything else queries the driver.
thread_local CUcontext t_current_context = nullptr;

// The open device's state (CudaDriver::open).
CuDevice& state_of(const BackendDevice& device) noexcept { return backend_state<CuDevice>(device); }

// Makes the open device's primary context current on this thread.
Status activate(const Api& api, CuDevice& d) noexcept {
  CUcontext current = nullptr;
  if (api.cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != d.context) {
    DEVRT_CU_CHECK(api, "cuCtxSetCurrent", api.cuCtxSetCurrent(d.context));
  }
  t_current_context = d.context;
  return Status();
}

// A stale t_current_context shows as one of these from a call on a context-bound handle.
bool wrong_context(CUresult code) noexcept {
  return code == CUDA_ERROR_INVALID_CONTEXT || code == CUDA_ERROR_INVALID_HANDLE ||
         code == CUDA_ERROR_CONTEXT_IS_DESTROYED;
}

// Runs `call` (a driver call on a handle bound to d's context) with no context query when this
// thread made d's context current last; if the driver says the context is wrong, activates and
// runs it once more.
template <class Call>
CUresult with_context(const Api& api, CuDevice& d, Status& status, Call call) noexcept {
  if (t_current_context == d.context && d.context != nullptr) [[likely]] {
    CUresult code = call();
    if (!wrong_context(code)) [[likely]]
      return code;
  }
  status = activate(api, d);
  return status.ok() ? call() : CUDA_SUCCESS;
}

Status activate(const BackendDevice& device) noexcept { return activate(runtime().api, state_of(device)); }

// Opens device `index`: its primary context retained on the first open.
Result<void*> open_device(std::int32_t index) noexcept {
  const Api& api = runtime().api;
  CuDevice& d = device_of(index);
  std::lock_guard<std::mutex> lock(d.open_mutex);
  if (d.opens == 0) DEVRT_CU_CHECK(api, "cuDevicePrimaryCtxRetain", api.cuDevicePrimaryCtxRetain(&d.context, d.handle));
  ++d.opens;
  return static_cast<void*>(&d);
}

// Closes what open_device opened: the last close releases the primary context (the driver then
// destroys it, with what devrt made in it, once no one else holds it).
Status close_device(void* state) noexcept {
  const Api& api = runtime().api;
  auto& d = *static_cast<CuDevice*>(state);
  std::lock_guard<std::mutex> lock(d.open_mutex);
  if (d.opens == 0 || --d.opens > 0) return Status();
  if (t_current_context == d.context) t_current_context = nullptr;
  d.context = nullptr;
  DEVRT_CU_CHECK(api, "cuDevicePrimaryCtxRelease", api.cuDevicePrimaryCtxRelease(d.handle));
  return Status();
}

// ---- Modules -------------------------------------------------------------------------------

struct CuFunction {
  CUfunction function = nullptr;
  std::string name;
  detail::GpuLimits limits;
  int static_shared = 0;
  std::uint32_t param_sizes[kMaxKernelArgs] = {};
  std::uint32_t param_count = 0;
  bool params_known = false;
  std::mutex shared_mutex;
  std::size_t dynamic_shared_limit = kDefaultDynamicSharedLimit; // guarded by shared_mutex
};

// The kernel's parameter sizes (driver 12.4+: cuFuncGetParamInfo); false when unknown.
bool read_parameters(const Api& api, CuFunction& f) {
  if (api.cuFuncGetParamInfo == nullptr) return false;
  for (std::size_t i = 0;; ++i) {
    std::size_t offset = 0, size = 0;
    CUresult code = api.cuFuncGetParamInfo(f.function, i, &offset, &size);
    if (code == CUDA_ERROR_INVALID_VALUE) break; // past the last parameter
    if (code != CUDA_SUCCESS || i == kMaxKernelArgs) return false;
    f.param_sizes[i] = static_cast<std::uint32_t>(size);
    f.param_count = static_cast<std::uint32_t>(i + 1);
  }
  return true;
}

} // namespace

// ---- The driver traits of the operations CUDA shares with HIP (backend_support/gpu_driver.hpp) ------------

struct CudaDriver {
  using Api = cuda::Api;
  using Error = CUresult;
  using Stream = CUstream;
  using Event = CUevent;
  using DevicePointer = CUdeviceptr;
  static constexpr Error kSuccess = CUDA_SUCCESS;
  static constexpr Error kNotReady = CUDA_ERROR_NOT_READY;
  static constexpr unsigned kStreamFlags = CU_STREAM_NON_BLOCKING;
  static constexpr unsigned kEventFlags = CU_EVENT_DISABLE_TIMING;
  static constexpr unsigned kTimedEventFlags = CU_EVENT_DEFAULT;
  static constexpr Error kInvalidHandle = CUDA_ERROR_INVALID_HANDLE;
  static constexpr std::size_t kAllocationAlignment = kDeviceAlignment;
  static const Api& api() noexcept { return runtime().api; }
  static detail::OverAlignedMap& over_aligned() noexcept { return runtime().over_aligned_device; }
  static Status activate(const BackendDevice& device) noexcept { return cuda::activate(device); }
  static Result<void*> open(std::int32_t index) noexcept { return cuda::open_device(index); }
  static Status close(void* state) noexcept { return cuda::close_device(state); }
  static Status error(const char* call, Error code) noexcept { return cu_error(runtime().api, call, code); }
  static constexpr detail::DriverCall malloc{"cuMemAlloc", &Api::cuMemAlloc};
  static constexpr detail::DriverCall release{"cuMemFree", &Api::cuMemFree};
  static constexpr detail::DriverCall stream_create{"cuStreamCreate", &Api::cuStreamCreate};
  static constexpr detail::DriverCall stream_destroy{"cuStreamDestroy", &Api::cuStreamDestroy};
  static constexpr detail::DriverCall stream_synchronize{"cuStreamSynchronize", &Api::cuStreamSynchronize};
  static constexpr detail::DriverCall device_synchronize{"cuCtxSynchronize", &Api::cuCtxSynchronize};
  static constexpr detail::DriverCall event_create{"cuEventCreate", &Api::cuEventCreate};
  static constexpr detail::DriverCall event_destroy{"cuEventDestroy", &Api::cuEventDestroy};
  static constexpr detail::DriverCall event_record{"cuEventRecord", &Api::cuEventRecord};
  static constexpr detail::DriverCall event_synchronize{"cuEventSynchronize", &Api::cuEventSynchronize};
  static constexpr detail::DriverCall event_query{"cuEventQuery", &Api::cuEventQuery};
  static constexpr detail::DriverCall stream_wait_event{"cuStreamWaitEvent", &Api::cuStreamWaitEvent};
  static constexpr detail::DriverCall event_elapsed{"cuEventElapsedTime", &Api::cuEventElapsedTime};
  static constexpr detail::DriverCall memcpy_htod{"cuMemcpyHtoDAsync", &Api::cuMemcpyHtoDAsync};
  static constexpr detail::DriverCall memcpy_dtoh{"cuMemcpyDtoHAsync", &Api::cuMemcpyDtoHAsync};
  static constexpr detail::DriverCall memcpy_dtod{"cuMemcpyDtoDAsync", &Api::cuMemcpyDtoDAsync};
  static constexpr detail::DriverCall module_unload{"cuModuleUnload", &Api::cuModuleUnload};

  static constexpr DeviceKind kind = CudaBackend::kind;
  static constexpr std::string_view kName = CudaBackend::name;
  static constexpr std::string_view kLoadOptionsAdvice = "; pass compiler options to devrt::nvrtc::compile";
  using ModuleHandle = CUmodule;
  using Function = CuFunction;
  // Across two devices: both contexts current in turn, then a copy between the two contexts.
  static Status peer_copy(const CopyDesc& desc, CUdeviceptr dst, CUdeviceptr src, CUstream stream) noexcept {
    const Api& api = runtime().api;
    CuDevice& source = state_of(*desc.src_device);
    CuDevice& destination = state_of(*desc.dst_device);
    DEVRT_RETURN_IF_ERROR(cuda::activate(api, source));
    DEVRT_RETURN_IF_ERROR(cuda::activate(api, destination));
    DEVRT_CU_CHECK(api, "cuMemcpyPeerAsync",
                   api.cuMemcpyPeerAsync(dst, destination.context, src, source.context, desc.nbytes, stream));
    return Status();
  }
  static Status check_image(const BackendDevice& device, const ModuleImageInfo& image) noexcept {
    const CuDevice& d = state_of(device);
    return detail::check_cuda_image_fits(image, d.major, d.minor);
  }
  static Result<CUmodule> load_image(ModuleFormat format, std::span<const std::byte> data, BuildLog& log) noexcept;
  static Result<std::unique_ptr<CuFunction>> make_function(const BackendDevice& device, CUmodule module,
                                                           const char* name) noexcept;
};

// The JIT's error and info logs go to `log`; PTX is given a NUL, up to which the driver reads it.
Result<CUmodule> CudaDriver::load_image(ModuleFormat format, std::span<const std::byte> data, BuildLog& log) noexcept {
  const Api& api = runtime().api;
  std::string text;
  const void* bytes = data.data();
  if (format == ModuleFormat::ptx) {
    text.assign(reinterpret_cast<const char*>(data.data()), data.size());
    bytes = text.c_str();
  }
  char error_log[8192] = {};
  char info_log[4096] = {};
  CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                         CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log, reinterpret_cast<void*>(std::uintptr_t{sizeof error_log}), info_log,
                    reinterpret_cast<void*>(std::uintptr_t{sizeof info_log})};
  CUmodule module = nullptr;
  CUresult code = api.cuModuleLoadDataEx(&module, bytes, 4, keys, values);
  log.append(info_log);
  if (error_log[0] != '\0' && info_log[0] != '\0') log.append("\n");
  log.append(error_log);
  if (code != CUDA_SUCCESS) return cu_error(api, "cuModuleLoadDataEx", code);
  return module;
}

// The kernel, its limits and (driver 12.4+) its parameters' sizes.
Result<std::unique_ptr<CuFunction>> CudaDriver::make_function(const BackendDevice& device, CUmodule module,
                                                              const char* name) noexcept {
  const Api& api = runtime().api;
  const CuDevice& d = state_of(device);
  CUfunction function = nullptr;
  CUresult code = api.cuModuleGetFunction(&function, module, name);
  if (code == CUDA_ERROR_NOT_FOUND) {
    return make_error(ErrorCode::not_found, "the module has no kernel '", name,
                      "' (C++ kernels need extern \"C\" or their mangled name)");
  }
  DEVRT_CU_CHECK(api, "cuModuleGetFunction", code);
  auto f = std::make_unique<CuFunction>();
  f->function = function;
  f->name = name;
  int max_threads = d.max_threads;
  static_cast<void>(api.cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function));
  static_cast<void>(api.cuFuncGetAttribute(&f->static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function));
  f->limits = detail::GpuLimits::of(d, max_threads);
  f->params_known = read_parameters(api, *f);
  return f;
}

// ---- Discovery -------------------------------------------------------------------------------

// A discovery that failed in cuDeviceGetCount or cuDeviceGet (not `unavailable`) runs again on
// the next call; a failed cuInit is final (the driver answers every later cuInit the same).
Status CudaBackend::availability() noexcept { return Discovery::get_retrying().status; }

Result<std::int32_t> CudaBackend::device_count() noexcept {
  return detail::discovered_device_count(Discovery::get_retrying());
}

Result<AttributeValue> CudaBackend::get_attribute(const BackendDevice& device, Attribute attribute) noexcept {
  const Runtime& rt = runtime();
  CuDevice& d = state_of(device);
  switch (attribute) {
  case Attribute::compute_version: return AttributeValue(std::to_string(d.major) + "." + std::to_string(d.minor));
  case Attribute::api_version: return AttributeValue(std::int64_t{rt.driver_version});
  case Attribute::driver_version:
    return AttributeValue(std::to_string(rt.driver_version / 1000) + "." +
                          std::to_string(rt.driver_version % 1000 / 10));
  case Attribute::available_global_memory: {
    DEVRT_RETURN_IF_ERROR(activate(device));
    std::size_t free_bytes = 0, total_bytes = 0;
    DEVRT_CU_CHECK(rt.api, "cuMemGetInfo", rt.api.cuMemGetInfo(&free_bytes, &total_bytes));
    return AttributeValue(static_cast<std::int64_t>(free_bytes));
  }
  default: return detail::gpu_attribute(d, attribute);
  }
}

Result<Target> CudaBackend::detect_target(const BackendDevice& device) noexcept {
  const CuDevice& d = state_of(device);
  Target target("cuda");
  target.set("keys", std::vector<std::string>{"cuda", "gpu"});
  target.set("arch", "sm_" + std::to_string(d.major) + std::to_string(d.minor));
  detail::set_gpu_target_limits(d, target);
  target.set("registers_per_block", static_cast<std::int64_t>(d.registers));
  target.set("l2_cache_size_bytes", static_cast<std::int64_t>(d.l2_bytes));
  target.set("multi_processor_count", static_cast<std::int64_t>(d.processors));
  return target;
}

// ---- Memory ----------------------------------------------------------------------------------

// ---- Streams and events ----------------------------------------------------------------------

Status CudaBackend::stream_synchronize(const BackendDevice& device, void* stream) noexcept {
  const Api& api = runtime().api;
  if (stream == nullptr) {
    // The legacy default stream is the current context's: a stale context would be no error.
    DEVRT_RETURN_IF_ERROR(activate(device));
    DEVRT_CU_CHECK(api, "cuStreamSynchronize", api.cuStreamSynchronize(nullptr));
    return Status();
  }
  Status status;
  CUresult code =
      with_context(api, state_of(device), status, [&] { return api.cuStreamSynchronize(stream_of(stream)); });
  DEVRT_RETURN_IF_ERROR(status);
  DEVRT_CU_CHECK(api, "cuStreamSynchronize", code);
  return Status();
}

// ---- Modules ---------------------------------------------------------------------------------

Status CudaBackend::launch(const BackendDevice& device, void* handle, const LaunchDesc& desc) noexcept {
  const Api& api = runtime().api;
  CuDevice& d = state_of(device);
  auto& f = *static_cast<CuFunction*>(handle);
  DEVRT_RETURN_IF_ERROR(detail::check_gpu_extents(desc, f.limits));
  detail::PackedGpuArgs packed;
  DEVRT_RETURN_IF_ERROR(detail::pack_gpu_args(desc, f.params_known,
                                              std::span<const std::uint32_t>(f.param_sizes, f.param_count), packed));
  if (desc.dynamic_shared_bytes > kDefaultDynamicSharedLimit - static_cast<std::size_t>(f.static_shared)) {
    DEVRT_RETURN_IF_ERROR(activate(api, d));
    std::size_t limit = static_cast<std::size_t>(d.shared_optin) - static_cast<std::size_t>(f.static_shared);
    if (desc.dynamic_shared_bytes > limit) {
      return make_error(ErrorCode::invalid_argument, desc.dynamic_shared_bytes,
                        " bytes of dynamic shared memory exceed the device's opt-in limit of ", limit,
                        " for this kernel (", d.shared_optin, " per block less ", f.static_shared, " static)");
    }
    std::lock_guard<std::mutex> lock(f.shared_mutex);
    if (desc.dynamic_shared_bytes > f.dynamic_shared_limit) {
      DEVRT_CU_CHECK(api, "cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)",
                     api.cuFuncSetAttribute(f.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                            static_cast<int>(desc.dynamic_shared_bytes)));
      f.dynamic_shared_limit = desc.dynamic_shared_bytes;
    }
  }
  // No context query on this path (with_context): the function belongs to d's primary context.
  Status status;
  CUresult code = with_context(api, d, status, [&] {
    return api.cuLaunchKernel(f.function, desc.grid[0], desc.grid[1], desc.grid[2], desc.block[0], desc.block[1],
                              desc.block[2], static_cast<unsigned>(desc.dynamic_shared_bytes), stream_of(desc.stream),
                              desc.num_args > 0 ? packed.params : nullptr, nullptr);
  });
  DEVRT_RETURN_IF_ERROR(status);
  DEVRT_CU_CHECK(api, "cuLaunchKernel", code);
  return Status();
}

// ---- Graphs ----------------------------------------------------------------------------------

namespace {

bool has_graph_api(const Api& api) noexcept {
  return api.cuStreamBeginCapture != nullptr && api.cuStreamEndCapture != nullptr &&
         api.cuGraphInstantiate != nullptr && api.cuGraphLaunch != nullptr && api.cuGraphExecDestroy != nullptr &&
         api.cuGraphDestroy != nullptr;
}

} // namespace

Result<void*> CudaBackend::graph_create(const BackendDevice& device, void*,
                                        std::span<const devrt_graph_node> nodes) noexcept {
  const Api& api = runtime().api;
  if (!has_graph_api(api)) return make_error(ErrorCode::unsupported, "the driver has no stream capture (CUDA 11.4)");
  CuDevice& d = state_of(device);
  DEVRT_RETURN_IF_ERROR(activate(api, d));
  CUstream stream = nullptr;
  DEVRT_CU_CHECK(api, "cuStreamCreate", api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUresult code = api.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  Status status = code == CUDA_SUCCESS ? detail::issue_graph_nodes(*this, device, stream, nodes)
                                       : cu_error(api, "cuStreamBeginCapture", code);
  CUgraph graph = nullptr;
  if (code == CUDA_SUCCESS) { // the capture ends whatever happened inside it
    CUresult ended = api.cuStreamEndCapture(stream, &graph);
    if (status.ok() && ended != CUDA_SUCCESS) status = cu_error(api, "cuStreamEndCapture", ended);
  }
  CUgraphExec exec = nullptr;
  if (status.ok()) {
    CUresult made = api.cuGraphInstantiate(&exec, graph, 0);
    if (made != CUDA_SUCCESS) status = cu_error(api, "cuGraphInstantiateWithFlags", made);
  }
  if (graph != nullptr) static_cast<void>(api.cuGraphDestroy(graph));
  static_cast<void>(api.cuStreamDestroy(stream));
  if (!status.ok()) return status;
  return static_cast<void*>(exec);
}

Status CudaBackend::graph_launch(const BackendDevice& device, void* graph, void* stream) noexcept {
  const Api& api = runtime().api;
  Status status;
  CUresult code = with_context(api, state_of(device), status,
                               [&] { return api.cuGraphLaunch(static_cast<CUgraphExec>(graph), stream_of(stream)); });
  DEVRT_RETURN_IF_ERROR(status);
  DEVRT_CU_CHECK(api, "cuGraphLaunch", code);
  return Status();
}

Status CudaBackend::graph_destroy(const BackendDevice& device, void* graph) noexcept {
  // In-flight replays are not cut short: the driver frees the graph once they have finished.
  const Api& api = runtime().api;
  DEVRT_RETURN_IF_ERROR(activate(device));
  DEVRT_CU_CHECK(api, "cuGraphExecDestroy", api.cuGraphExecDestroy(static_cast<CUgraphExec>(graph)));
  return Status();
}

// ---- cuda_host -------------------------------------------------------------------------------

Status CudaHostBackend::availability() noexcept { return Discovery::get_retrying().status; }

Result<std::int32_t> CudaHostBackend::device_count() noexcept {
  const Runtime& rt = Discovery::get_retrying();
  if (rt.status.ok()) return 1;
  return detail::discovered_device_count(rt);
}

Result<AttributeValue> CudaHostBackend::get_attribute(const BackendDevice& device, Attribute attribute) noexcept {
  switch (attribute) {
  case Attribute::exist: return AttributeValue(true);
  case Attribute::device_name: return AttributeValue(std::string("CUDA page-locked host memory"));
  case Attribute::driver_version: return CudaBackend().get_attribute(device, attribute);
  case Attribute::api_version: return CudaBackend().get_attribute(device, attribute);
  default: return AttributeValue();
  }
}

// cuda_host's one device is CUDA device 0's primary context, opened (retained) for it.
Status CudaHostBackend::open_device(BackendDevice& device) noexcept {
  DEVRT_ASSIGN_OR_RETURN(device.state, cuda::open_device(0));
  return Status();
}

Status CudaHostBackend::close_device(BackendDevice& device) noexcept {
  if (device.state == nullptr) return Status();
  Status closed = cuda::close_device(device.state);
  device.state = nullptr;
  return closed;
}

Result<void*> CudaHostBackend::allocate(const BackendDevice& device, std::size_t nbytes,
                                        std::size_t alignment) noexcept {
  Runtime& rt = runtime();
  DEVRT_RETURN_IF_ERROR(activate(device));
  std::size_t extra = alignment > kHostAlignment ? alignment - 1 : 0;
  if (nbytes > SIZE_MAX - extra) return make_error(ErrorCode::out_of_memory, "cuMemHostAlloc: size overflows");
  void* base = nullptr;
  DEVRT_CU_CHECK(rt.api, "cuMemHostAlloc", rt.api.cuMemHostAlloc(&base, nbytes + extra, CU_MEMHOSTALLOC_PORTABLE));
  std::uintptr_t address = reinterpret_cast<std::uintptr_t>(base);
  if (extra != 0) address = rt.over_aligned_host.align(address, alignment);
  return reinterpret_cast<void*>(address);
}

Status CudaHostBackend::free(const BackendDevice& device, void* ptr) noexcept {
  Runtime& rt = runtime();
  DEVRT_RETURN_IF_ERROR(activate(device));
  std::uintptr_t base = rt.over_aligned_host.release(reinterpret_cast<std::uintptr_t>(ptr));
  DEVRT_CU_CHECK(rt.api, "cuMemFreeHost", rt.api.cuMemFreeHost(reinterpret_cast<void*>(base)));
  return Status();
}

Status CudaHostBackend::copy(const CopyDesc& desc) noexcept {
  std::memcpy(static_cast<std::byte*>(desc.dst) + desc.dst_offset,
              static_cast<const std::byte*>(desc.src) + desc.src_offset, desc.nbytes);
  return Status();
}

Result<void*> CudaHostBackend::stream_create(const BackendDevice&) noexcept {
  static std::atomic<std::uintptr_t> next{1};
  return reinterpret_cast<void*>(next.fetch_add(1, std::memory_order_relaxed));
}

} // namespace devrt::cuda

DEVRT_REGISTER_BACKEND(cuda, devrt::cuda::CudaBackend)
DEVRT_REGISTER_BACKEND(cuda_host, devrt::cuda::CudaHostBackend)
