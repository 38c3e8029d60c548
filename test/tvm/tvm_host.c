/* SPDX-License-Identifier: Apache-2.0 */
/* The host half of a TVM-layout test library, shaped as TVM <= 0.20's LLVM host code generator
 * emits it for a shared library (codegen_cpu.cc): each operator a packed function
 *   int f(TVMValue* args, int* type_codes, int num_args, TVMValue* ret, int* ret_code, void* resource)
 * that checks its arguments (TVM's own assertion texts, through __TVMAPISetLastError), sets the
 * device with __tvm_set_device, looks its kernels up once through __TVMBackendGetFuncFromEnv
 * (cached in static globals) and calls them through __TVMFuncCall with the buffers' data
 * pointers, the scalars, then one extent per launch tag. The runtime reaches it only through the
 * weak data symbols below, which the loader fills. FIXTURE_DEVICE_TYPE is the DLPack device type
 * of the blob's kernels (1: a CPU library, whose operators compute on the host with
 * __TVMBackendAllocWorkspace and __TVMBackendParallelLaunch). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <dlpack/dlpack.h>

typedef union {
  int64_t v_int64;
  double v_float64;
  void* v_handle;
  const char* v_str;
  DLDataType v_type;
  DLDevice v_device;
} TVMValue;

typedef struct {
  void* sync_handle;
  int32_t num_task;
} TVMParallelGroupEnv;
typedef int (*FTVMParallelLambda)(int task_id, TVMParallelGroupEnv* penv, void* cdata);

#define TVM_DLL __attribute__((visibility("default")))
#define TVM_CONTEXT __attribute__((weak, visibility("default")))

TVM_CONTEXT void* __tvm_module_ctx = NULL;
TVM_CONTEXT int (*__TVMFuncCall)(void*, TVMValue*, int*, int, TVMValue*, int*) = NULL;
TVM_CONTEXT int (*__TVMBackendGetFuncFromEnv)(void*, const char*, void**) = NULL;
TVM_CONTEXT void (*__TVMAPISetLastError)(const char*) = NULL;
TVM_CONTEXT void* (*__TVMBackendAllocWorkspace)(int, int, uint64_t, int, int) = NULL;
TVM_CONTEXT int (*__TVMBackendFreeWorkspace)(int, int, void*) = NULL;
TVM_CONTEXT int (*__TVMBackendParallelLaunch)(FTVMParallelLambda, void*, int) = NULL;
TVM_CONTEXT int (*__TVMBackendParallelBarrier)(int, TVMParallelGroupEnv*) = NULL;

enum { kTVMArgInt = 0, kTVMArgFloat = 2, kTVMOpaqueHandle = 3, kTVMDLTensorHandle = 7, kTVMNDArrayHandle = 13 };

static int assert_fail(const char* message) {
  __TVMAPISetLastError(message);
  return -1;
}

/* TVM's checks of a 1-D compact tensor argument `name` of function `f`. */
static int check_tensor(const char* f, const char* name, int code, const DLTensor* t, uint8_t type_code, int64_t n,
                        int n_known) {
  static __thread char message[256];
  if (code != kTVMDLTensorHandle && code != kTVMNDArrayHandle && code != 4) {
    snprintf(message, sizeof message, "%s: Expect arg[%s] to be pointer", f, name);
    return assert_fail(message);
  }
  if (t->ndim != 1) {
    snprintf(message, sizeof message, "Assert fail: 1 == %s.ndim, %s.%s.ndim is expected to equal 1", f, f, name);
    return assert_fail(message);
  }
  if (t->dtype.code != type_code || t->dtype.bits != 32 || t->dtype.lanes != 1) {
    snprintf(message, sizeof message, "Assert fail: %s.%s.dtype is expected to be %s", f, name,
             type_code == kDLFloat ? "float32" : "int32");
    return assert_fail(message);
  }
  if (n_known && t->shape[0] != n) {
    snprintf(message, sizeof message,
             "Argument %s.%s.shape[0] has an unsatisfied constraint: n == T.Cast(\"int32\", %s.%s.shape[0])", f, name,
             f, name);
    return assert_fail(message);
  }
  if (t->strides != NULL && t->strides[0] != 1) {
    snprintf(message, sizeof message, "Assert fail: %s.%s.strides: expected to be compact array", f, name);
    return assert_fail(message);
  }
  if (t->byte_offset != 0) {
    snprintf(message, sizeof message, "Assert fail: %s.%s.byte_offset: expected 0", f, name);
    return assert_fail(message);
  }
  if (t->device.device_type != FIXTURE_DEVICE_TYPE) {
    snprintf(message, sizeof message, "Assert fail: %d == %s.device_type, Argument %s.%s.device_type has an unsatisfied constraint",
             FIXTURE_DEVICE_TYPE, name, f, name);
    return assert_fail(message);
  }
  return 0;
}

static void* set_device_packed = NULL;

static int set_device(int device_id) {
  TVMValue args[2];
  int codes[2] = {kTVMArgInt, kTVMArgInt};
  TVMValue ret;
  int ret_code;
  args[0].v_int64 = FIXTURE_DEVICE_TYPE;
  args[1].v_int64 = device_id;
  if (set_device_packed == NULL &&
      __TVMBackendGetFuncFromEnv(__tvm_module_ctx, "__tvm_set_device", &set_device_packed) != 0) {
    return -1;
  }
  return __TVMFuncCall(set_device_packed, args, codes, 2, &ret, &ret_code);
}

static int launch(void** cache, const char* kernel, TVMValue* args, int* codes, int count) {
  TVMValue ret;
  int ret_code;
  if (*cache == NULL && __TVMBackendGetFuncFromEnv(__tvm_module_ctx, kernel, cache) != 0) return -1;
  return __TVMFuncCall(*cache, args, codes, count, &ret, &ret_code);
}

#if FIXTURE_DEVICE_TYPE != 1

static void* vadd_kernel_packed = NULL;
static void* scale_kernel_packed = NULL;
static void* sum_scalars_kernel_packed = NULL;
static void* missing_kernel_packed = NULL;

/* c = a + b */
TVM_DLL int vadd(TVMValue* args, int* type_codes, int num_args, TVMValue* ret, int* ret_code, void* resource) {
  (void)ret, (void)ret_code, (void)resource;
  if (num_args != 3) return assert_fail("vadd: num_args should be 3");
  DLTensor* a = (DLTensor*)args[0].v_handle;
  DLTensor* b = (DLTensor*)args[1].v_handle;
  DLTensor* c = (DLTensor*)args[2].v_handle;
  if (check_tensor("vadd", "A", type_codes[0], a, kDLFloat, 0, 0) != 0) return -1;
  const int64_t n = a->shape[0];
  if (check_tensor("vadd", "B", type_codes[1], b, kDLFloat, n, 1) != 0 ||
      check_tensor("vadd", "C", type_codes[2], c, kDLFloat, n, 1) != 0) {
    return -1;
  }
  if (set_device(a->device.device_id) != 0) return -1;
  TVMValue k[6];
  int codes[6] = {kTVMOpaqueHandle, kTVMOpaqueHandle, kTVMOpaqueHandle, kTVMArgInt, kTVMArgInt, kTVMArgInt};
  k[0].v_handle = a->data;
  k[1].v_handle = b->data;
  k[2].v_handle = c->data;
  k[3].v_int64 = n;
  k[4].v_int64 = (n + 63) / 64; /* blockIdx.x */
  k[5].v_int64 = 64;            /* threadIdx.x */
  return launch(&vadd_kernel_packed, "vadd_kernel", k, codes, 6);
}

/* x *= factor (a float64 argument, a float32 kernel scalar) */
TVM_DLL int scale(TVMValue* args, int* type_codes, int num_args, TVMValue* ret, int* ret_code, void* resource) {
  (void)ret, (void)ret_code, (void)resource;
  if (num_args != 2) return assert_fail("scale: num_args should be 2");
  DLTensor* x = (DLTensor*)args[0].v_handle;
  if (check_tensor("scale", "X", type_codes[0], x, kDLFloat, 0, 0) != 0) return -1;
  if (type_codes[1] != kTVMArgFloat) return assert_fail("scale: Expect arg[1] to be float");
  const int64_t n = x->shape[0];
  if (set_device(x->device.device_id) != 0) return -1;
  TVMValue k[5];
  int codes[5] = {kTVMOpaqueHandle, kTVMArgFloat, kTVMArgInt, kTVMArgInt, kTVMArgInt};
  k[0].v_handle = x->data;
  k[1].v_float64 = args[1].v_float64;
  k[2].v_int64 = n;
  k[3].v_int64 = (n + 63) / 64;
  k[4].v_int64 = 64;
  return launch(&scale_kernel_packed, "scale_kernel", k, codes, 5);
}

/* out[i] = s0 + ... + s16: 17 int scalars, then n: 18 scalars, past TVM's 128-byte push-constant
 * budget, so a Vulkan kernel takes them in a uniform buffer. */
TVM_DLL int sum_scalars(TVMValue* args, int* type_codes, int num_args, TVMValue* ret, int* ret_code, void* resource) {
  (void)ret, (void)ret_code, (void)resource;
  if (num_args != 18) return assert_fail("sum_scalars: num_args should be 18");
  DLTensor* out = (DLTensor*)args[0].v_handle;
  if (check_tensor("sum_scalars", "Out", type_codes[0], out, kDLInt, 0, 0) != 0) return -1;
  for (int i = 1; i < 18; ++i) {
    if (type_codes[i] != kTVMArgInt) return assert_fail("sum_scalars: Expect the scalars to be int");
  }
  const int64_t n = out->shape[0];
  if (set_device(out->device.device_id) != 0) return -1;
  TVMValue k[21];
  int codes[21];
  k[0].v_handle = out->data;
  codes[0] = kTVMOpaqueHandle;
  for (int i = 1; i < 18; ++i) {
    k[i].v_int64 = args[i].v_int64;
    codes[i] = kTVMArgInt;
  }
  k[18].v_int64 = n;
  k[19].v_int64 = (n + 63) / 64;
  k[20].v_int64 = 64;
  for (int i = 18; i < 21; ++i) codes[i] = kTVMArgInt;
  return launch(&sum_scalars_kernel_packed, "sum_scalars_kernel", k, codes, 21);
}

/* Asks for a kernel the blob does not hold: the runtime's refusal comes back as the call's error. */
TVM_DLL int missing(TVMValue* args, int* type_codes, int num_args, TVMValue* ret, int* ret_code, void* resource) {
  (void)args, (void)type_codes, (void)num_args, (void)ret, (void)ret_code, (void)resource;
  TVMValue k[1];
  int codes[1] = {kTVMArgInt};
  k[0].v_int64 = 0;
  return launch(&missing_kernel_packed, "missing_kernel", k, codes, 1);
}

#else /* a CPU library */

typedef struct {
  const float* a;
  const float* b;
  float* c;
  float* partial; /* a workspace: each task's sum of c */
  int64_t n;
} VaddClosure;

static int vadd_task(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  VaddClosure* v = (VaddClosure*)cdata;
  const int64_t chunk = (v->n + penv->num_task - 1) / penv->num_task;
  const int64_t begin = task_id * chunk;
  const int64_t end = begin + chunk < v->n ? begin + chunk : v->n;
  float sum = 0.0f;
  for (int64_t i = begin; i < end; ++i) {
    v->c[i] = v->a[i] + v->b[i];
    sum += v->c[i];
  }
  v->partial[task_id] = sum;
  return __TVMBackendParallelBarrier(task_id, penv);
}

/* c = a + b in parallel tasks, each writing its partial sum into a workspace; returns 0. */
TVM_DLL int cpu_vadd(TVMValue* args, int* type_codes, int num_args, TVMValue* ret, int* ret_code, void* resource) {
  (void)ret, (void)ret_code, (void)resource;
  if (num_args != 3) return assert_fail("cpu_vadd: num_args should be 3");
  DLTensor* a = (DLTensor*)args[0].v_handle;
  DLTensor* b = (DLTensor*)args[1].v_handle;
  DLTensor* c = (DLTensor*)args[2].v_handle;
  if (check_tensor("cpu_vadd", "A", type_codes[0], a, kDLFloat, 0, 0) != 0) return -1;
  const int64_t n = a->shape[0];
  if (check_tensor("cpu_vadd", "B", type_codes[1], b, kDLFloat, n, 1) != 0 ||
      check_tensor("cpu_vadd", "C", type_codes[2], c, kDLFloat, n, 1) != 0) {
    return -1;
  }
  const int tasks = 4;
  float* partial = (float*)__TVMBackendAllocWorkspace(1, 0, tasks * sizeof(float), 2, 32);
  if (partial == NULL) return assert_fail("cpu_vadd: no workspace");
  VaddClosure closure = {(const float*)a->data, (const float*)b->data, (float*)c->data, partial, n};
  const int launched = __TVMBackendParallelLaunch(vadd_task, &closure, tasks);
  float total = 0.0f;
  for (int i = 0; i < tasks; ++i) total += partial[i];
  (void)total;
  if (__TVMBackendFreeWorkspace(1, 0, partial) != 0) return -1;
  return launched;
}

#endif
