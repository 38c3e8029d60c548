// SPDX-License-Identifier: Apache-2.0
// The runtime half of TVM's C ABIs that a TVM-built library reaches: TVM <= 0.20's packed calls
// (c_runtime_api.h, c_backend_api.h: a value union and type codes) and tvm-ffi's (TVM >= 0.21,
// apache/tvm-ffi's c_api.h and extra/c_env_api.h: TVMFFIAny values), with the context functions
// the library's data symbols point to or its imports name. devrt declares them itself (no TVM
// header, no symbol exported from devrt). Not public API.
#ifndef DEVRT_SRC_TVM_TVM_ABI_HPP
#define DEVRT_SRC_TVM_TVM_ABI_HPP

#include <cstdint>

#include <dlpack/dlpack.h>

namespace devrt::tvm::abi {

union Value {
  std::int64_t v_int64;
  double v_float64;
  void* v_handle;
  const char* v_str;
  DLDataType v_type;
  DLDevice v_device;
};

// TVMArgTypeCode.
enum TypeCode : int {
  kInt = 0,
  kUInt = 1,
  kFloat = 2,
  kOpaqueHandle = 3,
  kNullptr = 4,
  kDataType = 5,
  kDevice = 6,
  kDLTensorHandle = 7,
  kObjectHandle = 8,
  kModuleHandle = 9,
  kPackedFuncHandle = 10,
  kStr = 11,
  kBytes = 12,
  kNDArrayHandle = 13,
};

// An exported host function: TVMBackendPackedCFunc.
using PackedCFunc = int (*)(Value* args, int* type_codes, int num_args, Value* ret, int* ret_code, void* resource);

struct ParallelGroupEnv {
  void* sync_handle;
  std::int32_t num_task;
};
using ParallelLambda = int (*)(int task_id, ParallelGroupEnv* env, void* closure);

// The context functions, by the names of the data symbols ("__" + name) that hold them.
using FuncCall = int (*)(void* func, Value* args, int* type_codes, int num_args, Value* ret, int* ret_code);
using APISetLastError = void (*)(const char* message);
using BackendGetFuncFromEnv = int (*)(void* module, const char* name, void** out);
using BackendAllocWorkspace = void* (*)(int device_type, int device_id, std::uint64_t nbytes, int code_hint,
                                        int bits_hint);
using BackendFreeWorkspace = int (*)(int device_type, int device_id, void* ptr);
using BackendParallelLaunch = int (*)(ParallelLambda lambda, void* closure, int num_task);
using BackendParallelBarrier = int (*)(int task_id, ParallelGroupEnv* env);

// ---- tvm-ffi (TVM >= 0.21) -------------------------------------------------------------------

// TVMFFIAny: a type index, 4 bytes of padding, then the value.
struct FfiAny {
  std::int32_t type_index;
  std::uint32_t zero_padding;
  union {
    std::int64_t v_int64;
    double v_float64;
    void* v_ptr;
    const char* v_c_str;
    DLDataType v_dtype;
    DLDevice v_device;
  };
};
static_assert(sizeof(FfiAny) == 16);

// TVMFFITypeIndex: the values devrt passes or accepts. Indices from kFfiStaticObjectBegin on are
// reference-counted objects of tvm-ffi's object system, which devrt does not have.
enum FfiTypeIndex : std::int32_t {
  kFfiNone = 0,
  kFfiInt = 1,
  kFfiBool = 2,
  kFfiFloat = 3,
  kFfiOpaquePtr = 4,
  kFfiDataType = 5,
  kFfiDevice = 6,
  kFfiDLTensorPtr = 7,
  kFfiRawStr = 8,
  kFfiStaticObjectBegin = 64,
};

// An exported host function (TVMFFISafeCallType), and the context functions.
using FfiSafeCall = int (*)(void* self, const FfiAny* args, std::int32_t num_args, FfiAny* result);
using FfiFunctionCall = int (*)(void* func, FfiAny* args, std::int32_t num_args, FfiAny* result);
using FfiModLookup = int (*)(void* library_ctx, const char* name, void** out);
using FfiHandleInitCallback = int (*)(void** result);
using FfiHandleInitOnce = int (*)(void** handle, FfiHandleInitCallback init);
using FfiErrorSetRaisedFromCStr = void (*)(const char* kind, const char* message);
using FfiErrorSetRaisedFromCStrParts = void (*)(const char* kind, const char** parts, std::int32_t count);
using FfiEnvGetStream = void* (*)(std::int32_t device_type, std::int32_t device_id);

} // namespace devrt::tvm::abi

#endif // DEVRT_SRC_TVM_TVM_ABI_HPP
