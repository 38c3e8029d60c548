// SPDX-License-Identifier: Apache-2.0
// The runtime half of TVM's C ABI that a library TVM <= 0.20 built reaches (c_runtime_api.h,
// c_backend_api.h): the value union and type codes of packed calls, and the context functions
// the library's data symbols point to. devrt declares them itself (no TVM header, no symbol
// exported from devrt). Not public API.
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

} // namespace devrt::tvm::abi

#endif // DEVRT_SRC_TVM_TVM_ABI_HPP
