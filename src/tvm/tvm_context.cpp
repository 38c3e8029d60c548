// SPDX-License-Identifier: Apache-2.0
// The runtime half of TVM's host ABIs that devrt provides to a TVM-built library (devrt/tvm.hpp):
// the context functions its data symbols point to or its imports name (TVM <= 0.20's packed
// calls, tvm-ffi's), a call's frame, and the launch of its kernels in TVM's convention
// (FunctionInfo: buffers, scalars, then one extent per launch tag).
#include <atomic>
#include <barrier>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <devrt/backend/registry.hpp>
#include <devrt/stream.hpp>
#include <devrt/workspace.hpp>

#include "tvm/tvm_state.hpp"

namespace devrt::tvm::detail {
namespace {

// Memory a call's kernels may name: the call's tensors and the workspaces its host code took.
struct KnownMemory {
  Device device;
  void* base = nullptr;
  std::size_t bytes = 0;
};

// What one call of a host function has: set on the calling thread while the function runs (and
// on the threads of its parallel launches).
struct CallFrame {
  SharedLibrary* library = nullptr;
  Device device; // the library's, until the host code calls __tvm_set_device
  Device library_device;
  Device presented; // the library's device as its host code sees it (DeviceKernels::presented)
  std::vector<KnownMemory> memory;
  std::mutex mutex;      // guards the errors below: parallel tasks may report them
  Status error;          // devrt's own, from a context function
  std::string tvm_error; // the host code's (TVMAPISetLastError, TVMFFIErrorSetRaisedFromCStr)
};

thread_local CallFrame* t_frame = nullptr;

struct HostWorkspace {
  KnownMemory memory;
  Workspace workspace;
};
std::mutex g_workspaces_mutex;
std::vector<HostWorkspace>* g_workspaces = nullptr; // taken by host code, by address

// The device the host code names by (device_type, device_id): the library's own where it names the
// device it was shown in place of a remote one.
Device named_device(std::int64_t device_type, std::int64_t device_id) noexcept {
  const Device named{static_cast<DeviceKind>(device_type), static_cast<std::int32_t>(device_id)};
  const CallFrame* frame = t_frame;
  return frame != nullptr && named == frame->presented ? frame->library_device : named;
}

int fail(Status status) noexcept {
  if (CallFrame* frame = t_frame) {
    std::lock_guard<std::mutex> lock(frame->mutex);
    if (frame->error.ok()) frame->error = std::move(status);
  }
  return -1;
}

bool by_address(Device device) noexcept {
  BackendRef backend = Registry::global().find(device.kind);
  return backend && backend.spans_are_addresses();
}

bool contains(const KnownMemory& m, Device device, const void* pointer, bool addresses, std::size_t& offset) {
  if (m.device != device) return false;
  const auto p = reinterpret_cast<std::uintptr_t>(pointer);
  const auto base = reinterpret_cast<std::uintptr_t>(m.base);
  if (!addresses) {
    offset = 0;
    return p == base;
  }
  if (p < base || p - base >= (m.bytes == 0 ? 1 : m.bytes)) return false;
  offset = p - base;
  return true;
}

// The memory `pointer` (a kernel's buffer argument) lies in, and its offset there.
bool find_memory(const CallFrame& frame, Device device, const void* pointer, KnownMemory& out, std::size_t& offset) {
  const bool addresses = by_address(device);
  for (const KnownMemory& m : frame.memory) {
    if (contains(m, device, pointer, addresses, offset)) {
      out = m;
      return true;
    }
  }
  std::lock_guard<std::mutex> lock(g_workspaces_mutex);
  if (g_workspaces != nullptr) {
    for (const HostWorkspace& w : *g_workspaces) {
      if (contains(w.memory, device, pointer, addresses, offset)) {
        out = w.memory;
        return true;
      }
    }
  }
  return false;
}

// IEEE binary16 of `value`, rounded to nearest even.
std::uint16_t half_bits(float value) noexcept {
  std::uint32_t f = 0;
  std::memcpy(&f, &value, 4);
  const std::uint32_t sign = (f >> 16) & 0x8000u;
  const int exponent = static_cast<int>((f >> 23) & 0xff) - 127 + 15;
  std::uint32_t mantissa = f & 0x7fffffu;
  if (((f >> 23) & 0xff) == 0xff) return static_cast<std::uint16_t>(sign | 0x7c00u | (mantissa != 0 ? 0x200u : 0));
  if (exponent >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (exponent <= 0) {
    if (exponent < -10) return static_cast<std::uint16_t>(sign);
    mantissa |= 0x800000u;
    const int shift = 14 - exponent;
    std::uint32_t half = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1);
    if (rest > (1u << (shift - 1)) || (rest == (1u << (shift - 1)) && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = sign | static_cast<std::uint32_t>(exponent) << 10 | mantissa >> 13;
  const std::uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<std::uint16_t>(half);
}

// A scalar argument as TVM's packing makes it: the FunctionInfo's type from the value's int64 or
// float64 (TVM casts; so does devrt).
Result<std::uint64_t> scalar_bits(DataType type, const abi::Value& value, int code) noexcept {
  const bool integer_value = code == abi::kInt || code == abi::kUInt;
  if (!integer_value && code != abi::kFloat) {
    return make_error(ErrorCode::invalid_argument, "a scalar argument of type code ", code,
                      " (TVM passes int64 and float64 values)");
  }
  if (type.lanes != 1) return make_error(ErrorCode::unsupported, "a vector scalar argument");
  const bool signed_type = type.code == DataTypeCode::signed_int;
  if (signed_type || type.code == DataTypeCode::unsigned_int) {
    const std::int64_t v = integer_value ? value.v_int64 : static_cast<std::int64_t>(value.v_float64);
    std::uint64_t bits = static_cast<std::uint64_t>(v);
    if (type.bits < 64) bits &= (std::uint64_t{1} << type.bits) - 1;
    return bits;
  }
  if (type.code == DataTypeCode::floating) {
    const double v = integer_value ? static_cast<double>(value.v_int64) : value.v_float64;
    if (type.bits == 64) {
      std::uint64_t bits = 0;
      std::memcpy(&bits, &v, 8);
      return bits;
    }
    const auto f = static_cast<float>(v);
    if (type.bits == 16) return std::uint64_t{half_bits(f)};
    std::uint32_t bits = 0;
    std::memcpy(&bits, &f, 4);
    return std::uint64_t{bits};
  }
  return make_error(ErrorCode::unsupported, "a scalar argument of DLPack type code ", static_cast<int>(type.code));
}

Status kernel_error(const std::string& kernel, Status detail) {
  return make_error(detail.code(), "kernel '", kernel, "': ", detail.message());
}

// A kernel call of the host code: TVM's wrapped function (vulkan_wrapped_func.cc,
// opencl_module.cc): buffers as the device's handles, scalars, then the launch extents.
int call_kernel(const FunctionHandle& handle, abi::Value* args, const int* codes, int count) {
  CallFrame* frame = t_frame;
  if (frame == nullptr) return -1;
  SharedLibrary& library = *handle.library;
  const Device device = frame->device;
  const LoadedKernel* kernel = nullptr;
  {
    std::lock_guard<devrt::detail::Mutex> lock(library.mutex);
    for (const std::unique_ptr<DeviceKernels>& loaded : library.devices) {
      if (loaded->device == device) kernel = loaded->find(handle.name);
    }
  }
  if (kernel == nullptr) {
    return fail(make_error(ErrorCode::invalid_argument, "kernel '", handle.name, "' called on ", device,
                           ", which the library is not loaded for (tvm::Library::load(path, ", device, "))"));
  }
  const KernelInfo& info = *kernel->info;
  const std::size_t arguments = info.arg_types.size();
  if (count < 0 || static_cast<std::size_t>(count) != arguments + info.launch_tags.size()) {
    return fail(kernel_error(handle.name, make_error(ErrorCode::invalid_argument, "called with ", count,
                                                     " values; its FunctionInfo has ", arguments, " arguments and ",
                                                     info.launch_tags.size(), " launch parameters")));
  }
  std::vector<KernelArg> kernel_args;
  kernel_args.reserve(arguments);
  for (std::size_t i = 0; i < arguments; ++i) {
    const DataType type = info.arg_types[i];
    if (type.code == DataTypeCode::opaque_handle) {
      KnownMemory memory;
      std::size_t offset = 0;
      if (args[i].v_handle == nullptr || !find_memory(*frame, device, args[i].v_handle, memory, offset)) {
        return fail(kernel_error(handle.name, make_error(ErrorCode::invalid_argument, "buffer argument ", i, " (",
                                                         args[i].v_handle, ") is no memory of ", device,
                                                         " that this call's tensors or workspaces hold")));
      }
      kernel_args.emplace_back(MemorySpan{memory.device, memory.base, memory.bytes}, offset);
      continue;
    }
    Result<std::uint64_t> bits = scalar_bits(type, args[i], codes[i]);
    if (!bits.ok()) return fail(kernel_error(handle.name, bits.status()));
    kernel_args.push_back(KernelArg::scalar(type, *bits));
  }
  LaunchConfig config;
  std::uint32_t* extents[6] = {&config.grid.x,  &config.grid.y,  &config.grid.z,
                               &config.block.x, &config.block.y, &config.block.z};
  for (std::size_t t = 0; t < info.launch_tags.size(); ++t) {
    const std::string& tag = info.launch_tags[t];
    const std::int64_t value = args[arguments + t].v_int64;
    if (value > std::numeric_limits<std::uint32_t>::max()) {
      return fail(
          kernel_error(handle.name, make_error(ErrorCode::out_of_range, "launch parameter ", tag, " is ", value)));
    }
    if (tag.ends_with(".use_dyn_shared_memory")) { // tir. (TVM <= 0.25), tirx. (later)
      config.dynamic_shared_bytes = value > 0 ? static_cast<std::size_t>(value) : 0;
      continue;
    }
    const int axis = tag.back() - 'x';
    // TVM's LaunchParamConfig: a dynamic shape may make an extent 0; it launches 1.
    *extents[(tag[0] == 't' ? 3 : 0) + axis] = value > 0 ? static_cast<std::uint32_t>(value) : 1;
  }
  Status launched = kernel->function.launch(config, kernel_args, current_stream(device));
  return launched.ok() ? 0 : fail(kernel_error(handle.name, std::move(launched)));
}

// ---- The context functions --------------------------------------------------------------------

int func_call(void* function, abi::Value* args, int* codes, int count, abi::Value* ret, int* ret_code) {
  if (ret_code != nullptr) *ret_code = abi::kNullptr;
  auto* handle = static_cast<FunctionHandle*>(function);
  if (handle == nullptr) return fail(make_error(ErrorCode::invalid_argument, "TVMFuncCall of a null function"));
  switch (handle->kind) {
  case FunctionHandle::Kind::set_device: {
    if (count != 2 || codes[0] != abi::kInt || codes[1] != abi::kInt) {
      return fail(make_error(ErrorCode::invalid_argument, "__tvm_set_device takes (device_type, device_id)"));
    }
    const Device device = named_device(args[0].v_int64, args[1].v_int64);
    if (Status exists = Registry::global().get(device.kind).status(); !exists.ok()) return fail(std::move(exists));
    if (t_frame != nullptr) t_frame->device = device;
    return 0;
  }
  case FunctionHandle::Kind::kernel: return call_kernel(*handle, args, codes, count);
  case FunctionHandle::Kind::host:
    return reinterpret_cast<abi::PackedCFunc>(handle->host)(args, codes, count, ret, ret_code, nullptr);
  }
  return -1;
}

int get_func_from_env(void* module, const char* name, void** out) {
  auto* library = static_cast<SharedLibrary*>(module);
  if (library == nullptr || name == nullptr || out == nullptr) {
    return fail(make_error(ErrorCode::invalid_argument, "TVMBackendGetFuncFromEnv: null module, name or output"));
  }
  if (std::strcmp(name, "__tvm_set_device") == 0) {
    *out = &library->set_device;
    return 0;
  }
  std::lock_guard<devrt::detail::Mutex> lock(library->mutex);
  for (const std::unique_ptr<FunctionHandle>& handle : library->handles) {
    if (handle->name == name) {
      *out = handle.get();
      return 0;
    }
  }
  auto handle = std::make_unique<FunctionHandle>();
  handle->library = library;
  handle->name = name;
  bool kernel = false;
  for (const DeviceModule& m : library->blob.modules) {
    for (const KernelInfo& info : m.kernels) kernel = kernel || info.name == name;
  }
  if (!kernel) {
    handle->kind = FunctionHandle::Kind::host;
    const std::string symbol = library->symbols.function_prefix + name;
    if (!library->library.resolve(symbol.c_str(), handle->host)) {
      return fail(make_error(ErrorCode::not_found, "the host code asked for function '", name,
                             "', which is neither a kernel of the library's blob, nor one of its functions, nor one "
                             "devrt provides (__tvm_set_device)"));
    }
  }
  *out = handle.get();
  library->handles.push_back(std::move(handle));
  return 0;
}

void set_last_error(const char* message) {
  if (CallFrame* frame = t_frame) {
    std::lock_guard<std::mutex> lock(frame->mutex);
    frame->tvm_error = message != nullptr ? message : "";
  }
}

// ---- tvm-ffi's ----------------------------------------------------------------------------------

// TVMFFIFunctionCall: the values as TVM <= 0.20 passed them, for the same handles.
int ffi_function_call(void* function, abi::FfiAny* args, std::int32_t count, abi::FfiAny* result) {
  if (result != nullptr) *result = abi::FfiAny{abi::kFfiNone, 0, {0}};
  auto* handle = static_cast<FunctionHandle*>(function);
  if (handle == nullptr) return fail(make_error(ErrorCode::invalid_argument, "TVMFFIFunctionCall of a null function"));
  if (count < 0 || (count > 0 && args == nullptr)) {
    return fail(make_error(ErrorCode::invalid_argument, "TVMFFIFunctionCall of '", handle->name, "' with ", count,
                           " arguments at ", static_cast<void*>(args)));
  }
  if (handle->kind == FunctionHandle::Kind::host) {
    return reinterpret_cast<abi::FfiSafeCall>(handle->host)(nullptr, args, count, result);
  }
  std::vector<abi::Value> values(static_cast<std::size_t>(count));
  std::vector<int> codes(static_cast<std::size_t>(count));
  for (std::int32_t i = 0; i < count; ++i) {
    const abi::FfiAny& a = args[i];
    switch (a.type_index) {
    case abi::kFfiInt:
    case abi::kFfiBool:
      values[i].v_int64 = a.v_int64;
      codes[i] = abi::kInt;
      break;
    case abi::kFfiFloat:
      values[i].v_float64 = a.v_float64;
      codes[i] = abi::kFloat;
      break;
    case abi::kFfiOpaquePtr:
    case abi::kFfiNone:
      values[i].v_handle = a.type_index == abi::kFfiNone ? nullptr : a.v_ptr;
      codes[i] = abi::kOpaqueHandle;
      break;
    default:
      return fail(make_error(ErrorCode::invalid_argument, "'", handle->name, "' called with argument ", i,
                             " of tvm-ffi type index ", a.type_index,
                             " (devrt passes ints, bools, floats and pointers to kernels)"));
    }
  }
  return func_call(handle, values.data(), codes.data(), count, nullptr, nullptr);
}

// TVMFFIHandleInitOnce: `*handle` set once, by `init`, whichever thread comes first.
int ffi_handle_init_once(void** handle, abi::FfiHandleInitCallback init) {
  if (handle == nullptr || init == nullptr) {
    return fail(make_error(ErrorCode::invalid_argument, "TVMFFIHandleInitOnce: null handle or function"));
  }
  std::atomic_ref<void*> slot(*handle);
  if (slot.load(std::memory_order_acquire) != nullptr) return 0;
  static std::mutex init_mutex;
  std::lock_guard<std::mutex> lock(init_mutex);
  if (slot.load(std::memory_order_relaxed) != nullptr) return 0;
  void* value = nullptr;
  if (const int result = init(&value); result != 0) return result;
  slot.store(value, std::memory_order_release);
  return 0;
}

void ffi_error_set_raised_from_c_str_parts(const char* kind, const char** parts, std::int32_t count) {
  std::string message = kind != nullptr ? kind : "Error";
  message += ": ";
  for (std::int32_t i = 0; parts != nullptr && i < count; ++i) {
    if (parts[i] != nullptr) message += parts[i];
  }
  set_last_error(message.c_str());
}

void ffi_error_set_raised_from_c_str(const char* kind, const char* text) {
  const char* parts[] = {text};
  ffi_error_set_raised_from_c_str_parts(kind, parts, 1);
}

// TVMFFIEnvGetStream: the calling thread's current stream of the device (a CUstream on CUDA).
void* ffi_env_get_stream(std::int32_t device_type, std::int32_t device_id) {
  return current_stream(named_device(device_type, device_id)).handle;
}

void* alloc_workspace(int device_type, int device_id, std::uint64_t nbytes, int, int) {
  const Device device = named_device(device_type, device_id);
  Result<Workspace> workspace = allocate_workspace(device, static_cast<std::size_t>(nbytes == 0 ? 1 : nbytes));
  if (!workspace.ok()) {
    fail(std::move(workspace).status());
    return nullptr;
  }
  void* data = workspace->data();
  std::lock_guard<std::mutex> lock(g_workspaces_mutex);
  if (g_workspaces == nullptr) g_workspaces = new (std::nothrow) std::vector<HostWorkspace>();
  if (g_workspaces == nullptr) return nullptr;
  g_workspaces->push_back(
      HostWorkspace{{device, data, static_cast<std::size_t>(nbytes)}, std::move(workspace).value()});
  return data;
}

int free_workspace(int device_type, int device_id, void* pointer) {
  const Device device = named_device(device_type, device_id);
  Workspace freed;
  {
    std::lock_guard<std::mutex> lock(g_workspaces_mutex);
    for (std::size_t i = 0; g_workspaces != nullptr && i < g_workspaces->size(); ++i) {
      HostWorkspace& w = (*g_workspaces)[i];
      if (w.memory.base == pointer && w.memory.device == device) {
        freed = std::move(w.workspace);
        (*g_workspaces)[i] = std::move(g_workspaces->back());
        g_workspaces->pop_back();
        return 0;
      }
    }
  }
  return fail(make_error(ErrorCode::invalid_argument, "TVMBackendFreeWorkspace(", device, ", ", pointer,
                         "): no workspace of devrt's starts there"));
}

// TVMBackendParallelLaunch: task 0 on the calling thread, the others on threads of their own,
// all sharing the call's frame; TVMBackendParallelBarrier waits for every task.
int parallel_launch(abi::ParallelLambda lambda, void* closure, int num_task) {
  const unsigned hardware = std::thread::hardware_concurrency();
  const int tasks = num_task > 0 ? num_task : static_cast<int>(hardware == 0 ? 1 : hardware);
  std::barrier<> barrier(tasks);
  abi::ParallelGroupEnv env{&barrier, tasks};
  CallFrame* frame = t_frame;
  std::vector<int> results(static_cast<std::size_t>(tasks), 0);
  std::vector<std::thread> workers;
  workers.reserve(static_cast<std::size_t>(tasks - 1));
  for (int task = 1; task < tasks; ++task) {
    workers.emplace_back([&, task] {
      t_frame = frame;
      results[static_cast<std::size_t>(task)] = lambda(task, &env, closure);
    });
  }
  results[0] = lambda(0, &env, closure);
  for (std::thread& worker : workers) worker.join();
  for (int result : results) {
    if (result != 0) return -1;
  }
  return 0;
}

int parallel_barrier(int, abi::ParallelGroupEnv* env) {
  if (env == nullptr || env->sync_handle == nullptr) return -1;
  static_cast<std::barrier<>*>(env->sync_handle)->arrive_and_wait();
  return 0;
}

struct RuntimeFunction {
  std::string_view name;
  void* function;
};
template <class Function>
void* address(Function function) noexcept {
  void* out = nullptr;
  static_assert(sizeof function == sizeof out);
  std::memcpy(&out, &function, sizeof out);
  return out;
}
// What devrt provides of TVM's runtimes, by the C names of TVM's functions.
const RuntimeFunction* runtime_functions(std::size_t& count) noexcept {
  static const RuntimeFunction table[] = {
      {"TVMFuncCall", address<abi::FuncCall>(&func_call)},
      {"TVMAPISetLastError", address<abi::APISetLastError>(&set_last_error)},
      {"TVMBackendGetFuncFromEnv", address<abi::BackendGetFuncFromEnv>(&get_func_from_env)},
      {"TVMBackendAllocWorkspace", address<abi::BackendAllocWorkspace>(&alloc_workspace)},
      {"TVMBackendFreeWorkspace", address<abi::BackendFreeWorkspace>(&free_workspace)},
      {"TVMBackendParallelLaunch", address<abi::BackendParallelLaunch>(&parallel_launch)},
      {"TVMBackendParallelBarrier", address<abi::BackendParallelBarrier>(&parallel_barrier)},
      {"TVMFFIFunctionCall", address<abi::FfiFunctionCall>(&ffi_function_call)},
      {"TVMFFIEnvModLookupFromImports", address<abi::FfiModLookup>(&get_func_from_env)},
      {"TVMFFIHandleInitOnce", address<abi::FfiHandleInitOnce>(&ffi_handle_init_once)},
      {"TVMFFIErrorSetRaisedFromCStr", address<abi::FfiErrorSetRaisedFromCStr>(&ffi_error_set_raised_from_c_str)},
      {"TVMFFIErrorSetRaisedFromCStrParts",
       address<abi::FfiErrorSetRaisedFromCStrParts>(&ffi_error_set_raised_from_c_str_parts)},
      {"TVMFFIEnvGetStream", address<abi::FfiEnvGetStream>(&ffi_env_get_stream)},
  };
  count = std::size(table);
  return table;
}

// The byte extent of a DLTensor's elements from its data pointer.
std::size_t tensor_bytes(const DLTensor& t) noexcept {
  const std::size_t item = (static_cast<std::size_t>(t.dtype.bits) * t.dtype.lanes + 7) / 8;
  std::size_t last = 0;
  bool empty = false;
  for (std::int32_t d = 0; d < t.ndim; ++d) {
    if (t.shape[d] <= 0) empty = true;
    std::int64_t stride = 1;
    if (t.strides != nullptr) {
      stride = t.strides[d];
    } else {
      for (std::int32_t e = d + 1; e < t.ndim; ++e) stride *= t.shape[e];
    }
    if (t.shape[d] > 0 && stride > 0) last += static_cast<std::size_t>((t.shape[d] - 1) * stride);
  }
  return static_cast<std::size_t>(t.byte_offset) + (empty ? 0 : (last + 1) * item);
}

} // namespace

void* runtime_function(std::string_view symbol) noexcept {
  std::size_t count = 0;
  const RuntimeFunction* table = runtime_functions(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (table[i].name == symbol) return table[i].function;
  }
  return nullptr;
}

void install_context(SharedLibrary& library) noexcept {
  std::size_t count = 0;
  const RuntimeFunction* table = runtime_functions(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::string symbol = "__" + std::string(table[i].name);
    if (void* slot = library.library.symbol(symbol.c_str())) std::memcpy(slot, &table[i].function, sizeof(void*));
  }
  const std::string& context_symbol = library.symbols.context_symbol;
  void** context = nullptr;
  if (!context_symbol.empty() && library.library.resolve(context_symbol.c_str(), context) && context != nullptr) {
    *context = &library;
  }
}

namespace {

// Calls host function `function` in its ABI with the call's values (ints, floats, DLTensor
// pointers); tvm-ffi's result lands in `ffi_result`.
int invoke(HostAbi abi, void* function, std::vector<abi::Value>& values, std::vector<int>& codes,
           abi::FfiAny& ffi_result) {
  const std::size_t n = values.size();
  if (abi == HostAbi::ffi) {
    // The same values as tvm-ffi's AnyView: ints, floats, DLTensor pointers.
    std::vector<abi::FfiAny> ffi_args(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::int32_t index = codes[i] == abi::kInt     ? abi::kFfiInt
                                 : codes[i] == abi::kFloat ? abi::kFfiFloat
                                                           : abi::kFfiDLTensorPtr;
      ffi_args[i].type_index = index;
      ffi_args[i].zero_padding = 0;
      std::memcpy(&ffi_args[i].v_int64, &values[i], sizeof(std::int64_t));
    }
    return reinterpret_cast<abi::FfiSafeCall>(function)(nullptr, ffi_args.data(), static_cast<std::int32_t>(n),
                                                        &ffi_result);
  }
  abi::Value ret{};
  int ret_code = abi::kNullptr;
  return reinterpret_cast<abi::PackedCFunc>(function)(values.data(), codes.data(), static_cast<int>(n), &ret, &ret_code,
                                                      nullptr);
}

// A devrt Tensor as the DLTensor the host code gets; its shape, then its strides, written at `dims`.
void fill_dltensor(const Tensor& t, DLTensor& dl, std::int64_t* dims) noexcept {
  const std::size_t rank = t.shape().size();
  std::copy(t.shape().begin(), t.shape().end(), dims);
  std::copy(t.strides().begin(), t.strides().end(), dims + rank);
  dl.data = t.data();
  dl.device = t.device().to_dlpack();
  dl.ndim = t.ndim();
  dl.dtype = DLDataType{static_cast<std::uint8_t>(t.dtype().code), t.dtype().bits, t.dtype().lanes};
  dl.shape = dims;
  dl.strides = t.is_contiguous() ? nullptr : dims + rank;
  dl.byte_offset = t.byte_offset();
}

} // namespace

Status call_host(SharedLibrary& library, const DeviceKernels& kernels, std::string_view name, void* function,
                 std::span<const Argument> args) noexcept {
  const Device device = kernels.device;
  CallFrame frame;
  frame.library = &library;
  frame.device = device;
  frame.library_device = device;
  frame.presented = kernels.presented;
  const std::size_t n = args.size();
  std::vector<abi::Value> values(n);
  std::vector<int> codes(n);
  std::vector<DLTensor> tensors(n);
  std::vector<DLTensor*> given(n, nullptr); // each tensor argument as the host code gets it
  std::vector<std::int64_t> dims;           // every devrt tensor's shape and strides, in one block
  for (const Argument& a : args) {
    if (a.kind() == Argument::Kind::tensor && a.tensor() != nullptr)
      dims.resize(dims.size() + 2 * a.tensor()->shape().size());
  }
  auto refuse = [&](std::size_t i, auto&&... what) {
    return make_error(ErrorCode::invalid_argument, "TVM library ", library.label, ", function ", name, ": argument ", i,
                      what...);
  };
  std::size_t used = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Argument& a = args[i];
    if (a.kind() == Argument::Kind::integer) {
      values[i].v_int64 = a.integer();
      codes[i] = abi::kInt;
      continue;
    }
    if (a.kind() == Argument::Kind::real) {
      values[i].v_float64 = a.real();
      codes[i] = abi::kFloat;
      continue;
    }
    codes[i] = abi::kDLTensorHandle;
    DLTensor& dl = tensors[i];
    if (const Tensor* t = a.tensor()) {
      if (!t->defined()) return refuse(i, " is an undefined Tensor");
      fill_dltensor(*t, dl, dims.data() + used);
      used += 2 * t->shape().size();
      const MemorySpan storage = t->storage_span();
      frame.memory.push_back(KnownMemory{storage.device, storage.data, storage.size});
    } else {
      const DLTensor* from = a.dl_tensor();
      if (from == nullptr) return refuse(i, " is a null DLTensor");
      dl = *from;
      frame.memory.push_back(KnownMemory{Device::from_dlpack(from->device), from->data, tensor_bytes(*from)});
    }
    // TVM's host code asserts each tensor's device; devrt says it first, in its own words. Host
    // memory passes: some host functions read their arguments there (a shape function's heap).
    const Device on = Device::from_dlpack(dl.device);
    if (on != device && on.kind != DeviceKind::cpu) {
      return refuse(i, " is on ", on, "; the library runs on ", device, " (and reads host memory)");
    }
    if (on == device) dl.device = kernels.presented.to_dlpack();
    given[i] = &dl;
    values[i].v_handle = &dl;
  }
  CallFrame* outer = t_frame;
  t_frame = &frame;
  abi::FfiAny ffi_result{abi::kFfiNone, 0, {0}};
  const int result = invoke(library.symbols.abi, function, values, codes, ffi_result);
  t_frame = outer;
  if (result == 0 && ffi_result.type_index >= abi::kFfiStaticObjectBegin) {
    return make_error(ErrorCode::unsupported, "TVM library ", library.label, ", function ", name,
                      ": returned a tvm-ffi object (type index ", ffi_result.type_index,
                      "), which devrt cannot hold (it runs operators that write their outputs)");
  }
  if (result == 0) return Status();
  if (!frame.error.ok()) {
    return make_error(frame.error.code(), "TVM library ", library.label, ", function ", name, ": ",
                      frame.error.message());
  }
  return make_error(ErrorCode::invalid_argument, "TVM library ", library.label, ", function ", name, ": ",
                    frame.tvm_error.empty()
                        ? std::string("failed without a message")
                        : explain_tvm_error(name, frame.tvm_error, given, device, kernels.presented));
}

} // namespace devrt::tvm::detail
