/* SPDX-License-Identifier: Apache-2.0 */
/* The host half of a TVM-layout test library, shaped as TVM's LLVM host code generator emits it
 * for a shared library (codegen_cpu.cc), in either of its ABIs:
 *  - TVM <= 0.20 (FIXTURE_FFI 0): each operator a packed function
 *      int f(TVMValue* args, int* type_codes, int num_args, TVMValue* ret, int* ret_code, void* resource)
 *    that checks its arguments (TVM's own assertion texts, through __TVMAPISetLastError), sets the
 *    device with __tvm_set_device, looks its kernels up once through __TVMBackendGetFuncFromEnv
 *    (cached in static globals) and calls them through __TVMFuncCall with the buffers' data
 *    pointers, the scalars, then one extent per launch tag;
 *  - TVM 0.21 (FIXTURE_FFI 2; tvm-ffi's calling convention, TVM's names): each operator exported
 *    under its own name as a tvm-ffi safe call, kernels looked up through __TVMBackendGetFuncFromEnv
 *    with __tvm_ffi_library_ctx and called through __TVMFFIFunctionCall, errors raised through
 *    __TVMFFIErrorSetRaisedFromCStr;
 *  - TVM >= 0.22 (FIXTURE_FFI 1; tvm-ffi): each operator exported as __tvm_ffi_<name>,
 *      int f(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result)
 *    its kernels looked up through __TVMFFIHandleInitOnce and __TVMFFIEnvModLookupFromImports with
 *    __tvm_ffi__library_ctx, called through __TVMFFIFunctionCall with TVMFFIAny values; assertion
 *    failures raised through TVMFFIErrorSetRaisedFromCStrParts, which TVM's code imports by name
 *    from libtvm_ffi (this library is linked against a link-time stub of it: DT_NEEDED
 *    libtvm_ffi.so, which exists nowhere at run time). `stable_add_one` is tvm-ffi's own example
 *    (examples/stable_c_abi: TVMFFIErrorSetRaisedFromCStr imported by name).
 * Otherwise the runtime reaches it only through the weak data symbols below, which the loader
 * fills. FIXTURE_DEVICE_TYPE is the DLPack device type of the blob's kernels (1: a CPU library,
 * whose operators compute on the host with __TVMBackendAllocWorkspace and
 * __TVMBackendParallelLaunch). FIXTURE_LANGUAGE_MODEL adds the CPU operators of the generate
 * example's bigram language model (test/tvm/tvm_vm_fixture.py's bigram_lm). */
#include <math.h>
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

TVM_CONTEXT void* (*__TVMBackendAllocWorkspace)(int, int, uint64_t, int, int) = NULL;
TVM_CONTEXT int (*__TVMBackendFreeWorkspace)(int, int, void*) = NULL;
TVM_CONTEXT int (*__TVMBackendParallelLaunch)(FTVMParallelLambda, void*, int) = NULL;
TVM_CONTEXT int (*__TVMBackendParallelBarrier)(int, TVMParallelGroupEnv*) = NULL;

enum { kTVMArgInt = 0, kTVMArgFloat = 2, kTVMOpaqueHandle = 3, kTVMDLTensorHandle = 7, kTVMNDArrayHandle = 13 };

#ifndef FIXTURE_FFI
#define FIXTURE_FFI 0
#endif

#if FIXTURE_FFI
/* tvm-ffi's c_api.h, as much as TVM's generated code uses. */
typedef struct {
  int32_t type_index;
  uint32_t zero_padding;
  union {
    int64_t v_int64;
    double v_float64;
    void* v_ptr;
    const char* v_c_str;
  };
} TVMFFIAny;
typedef struct {
  uint64_t combined_ref_count;
  int32_t type_index;
  uint32_t padding;
  void* deleter;
} TVMFFIObject;
enum {
  kTVMFFINone = 0,
  kTVMFFIInt = 1,
  kTVMFFIFloat = 3,
  kTVMFFIOpaquePtr = 4,
  kTVMFFIDLTensorPtr = 7,
  kTVMFFITensor = 70
};
void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** parts, int32_t n);
void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* message);

TVM_CONTEXT int (*__TVMFFIFunctionCall)(void*, TVMFFIAny*, int32_t, TVMFFIAny*) = NULL;
TVM_CONTEXT void (*__TVMFFIErrorSetRaisedFromCStr)(const char*, const char*) = NULL;
#if FIXTURE_FFI == 1
TVM_CONTEXT void* __tvm_ffi__library_ctx = NULL;
TVM_CONTEXT int (*__TVMFFIEnvModLookupFromImports)(void*, const char*, void**) = NULL;
TVM_CONTEXT int (*__TVMFFIHandleInitOnce)(void**, int (*)(void**)) = NULL;
#define OPERATOR(name)                                                                                                 \
  TVM_DLL int __tvm_ffi_##name(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result)
#else
TVM_CONTEXT void* __tvm_ffi_library_ctx = NULL;
TVM_CONTEXT int (*__TVMBackendGetFuncFromEnv)(void*, const char*, void**) = NULL;
#define OPERATOR(name) TVM_DLL int name(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result)
#endif

/* An operator's arguments: TVMFFIAny values. */
#define UNUSED_OPERATOR_ARGS (void)self, (void)result
#define ARG_CODE(i) ffi_code(&args[i])
#define ARG_TENSOR(i) ffi_tensor(&args[i])
#define ARG_INT(i) args[i].v_int64
#define ARG_FLOAT(i) args[i].v_float64

/* tvm-ffi type indices as TVM <= 0.20's codes, for the shared checks below. */
static int ffi_code(const TVMFFIAny* a) {
  switch (a->type_index) {
  case kTVMFFIInt: return kTVMArgInt;
  case kTVMFFIFloat: return kTVMArgFloat;
  case kTVMFFIDLTensorPtr: return kTVMDLTensorHandle;
  case kTVMFFITensor: return kTVMNDArrayHandle;
  default: return -1;
  }
}
static DLTensor* ffi_tensor(const TVMFFIAny* a) {
  return a->type_index == kTVMFFITensor ? (DLTensor*)((char*)a->v_ptr + sizeof(TVMFFIObject)) : (DLTensor*)a->v_ptr;
}

static int assert_fail(const char* message) {
#if FIXTURE_FFI == 1
  const char* parts[] = {message};
  TVMFFIErrorSetRaisedFromCStrParts("RuntimeError", parts, 1);
#else
  __TVMFFIErrorSetRaisedFromCStr("RuntimeError", message);
#endif
  return -1;
}
#else
TVM_CONTEXT void* __tvm_module_ctx = NULL;
TVM_CONTEXT int (*__TVMFuncCall)(void*, TVMValue*, int*, int, TVMValue*, int*) = NULL;
TVM_CONTEXT int (*__TVMBackendGetFuncFromEnv)(void*, const char*, void**) = NULL;
TVM_CONTEXT void (*__TVMAPISetLastError)(const char*) = NULL;

#define OPERATOR(name)                                                                                                 \
  TVM_DLL int name(TVMValue* args, int* type_codes, int num_args, TVMValue* ret, int* ret_code, void* resource)
#define UNUSED_OPERATOR_ARGS (void)ret, (void)ret_code, (void)resource
#define ARG_CODE(i) type_codes[i]
#define ARG_TENSOR(i) ((DLTensor*)args[i].v_handle)
#define ARG_INT(i) args[i].v_int64
#define ARG_FLOAT(i) args[i].v_float64

static int assert_fail(const char* message) {
  __TVMAPISetLastError(message);
  return -1;
}
#endif

#ifndef VADD_KERNEL
#define VADD_KERNEL "vadd_kernel"
#endif

/* TVM's checks of a compact `ndim`-D tensor argument `name` of function `f`, but its extents. */
static int check_array(const char* f, const char* name, int code, const DLTensor* t, uint8_t type_code, int ndim) {
  static __thread char message[256];
  if (code != kTVMDLTensorHandle && code != kTVMNDArrayHandle && code != 4) {
    snprintf(message, sizeof message, "%s: Expect arg[%s] to be pointer", f, name);
    return assert_fail(message);
  }
  if (t->ndim != ndim) {
    snprintf(message, sizeof message, "Assert fail: %d == %s.ndim, %s.%s.ndim is expected to equal %d", ndim, f, f,
             name, ndim);
    return assert_fail(message);
  }
  if (t->dtype.code != type_code || t->dtype.bits != 32 || t->dtype.lanes != 1) {
    snprintf(message, sizeof message, "Assert fail: %s.%s.dtype is expected to be %s", f, name,
             type_code == kDLFloat ? "float32" : "int32");
    return assert_fail(message);
  }
  if (t->strides != NULL && ndim > 0 && t->strides[ndim - 1] != 1) {
    snprintf(message, sizeof message, "Assert fail: %s.%s.strides: expected to be compact array", f, name);
    return assert_fail(message);
  }
  if (t->byte_offset != 0) {
    snprintf(message, sizeof message, "Assert fail: %s.%s.byte_offset: expected 0", f, name);
    return assert_fail(message);
  }
  if (t->device.device_type != FIXTURE_DEVICE_TYPE) {
    snprintf(message, sizeof message,
             "Assert fail: %d == %s.device_type, Argument %s.%s.device_type has an unsatisfied constraint",
             FIXTURE_DEVICE_TYPE, name, f, name);
    return assert_fail(message);
  }
  return 0;
}

/* check_array of a 1-D tensor, its extent n when n_known. */
static int check_tensor(const char* f, const char* name, int code, const DLTensor* t, uint8_t type_code, int64_t n,
                        int n_known) {
  static __thread char message[256];
  if (check_array(f, name, code, t, type_code, 1) != 0) return -1;
  if (n_known && t->shape[0] != n) {
    snprintf(message, sizeof message,
             "Argument %s.%s.shape[0] has an unsatisfied constraint: n == T.Cast(\"int32\", %s.%s.shape[0])", f, name,
             f, name);
    return assert_fail(message);
  }
  return 0;
}

static void* set_device_packed = NULL;

#if FIXTURE_FFI == 1
/* CreatePackedFuncInit: one init function per looked-up name. */
#define HANDLE_INIT(handle, name)                                                                                      \
  static int handle##_init(void** out) { return __TVMFFIEnvModLookupFromImports(__tvm_ffi__library_ctx, name, out); }
#define INIT_ONCE(handle) __TVMFFIHandleInitOnce(&handle, handle##_init)
#elif FIXTURE_FFI == 2
/* TVM 0.21: the handle looked up once through the environment, cached in a static global. */
#define HANDLE_INIT(handle, name)                                                                                      \
  static int handle##_init(void** out) {                                                                               \
    return *out != NULL ? 0 : __TVMBackendGetFuncFromEnv(__tvm_ffi_library_ctx, name, out);                            \
  }
#define INIT_ONCE(handle) handle##_init(&handle)
#endif

#if FIXTURE_FFI
HANDLE_INIT(set_device_packed, "__tvm_set_device")

/* The kernel call as TVM's host code packs it: buffers as opaque pointers, the rest as ints and floats. */
static int ffi_call(void* function, const TVMValue* args, const int* codes, int count) {
  TVMFFIAny packed[24];
  TVMFFIAny ret;
  for (int i = 0; i < count; ++i) {
    packed[i].zero_padding = 0;
    packed[i].type_index = codes[i] == kTVMOpaqueHandle ? kTVMFFIOpaquePtr
                           : codes[i] == kTVMArgFloat   ? kTVMFFIFloat
                                                        : kTVMFFIInt;
    packed[i].v_int64 = args[i].v_int64;
  }
  ret.type_index = kTVMFFINone;
  return __TVMFFIFunctionCall(function, packed, count, &ret);
}

static int set_device(int device_id) {
  TVMValue args[2];
  int codes[2] = {kTVMArgInt, kTVMArgInt};
  args[0].v_int64 = FIXTURE_DEVICE_TYPE;
  args[1].v_int64 = device_id;
  if (INIT_ONCE(set_device_packed) != 0) return -1;
  return ffi_call(set_device_packed, args, codes, 2);
}

#define LAUNCH(handle, kernel, args, codes, count) (INIT_ONCE(handle) != 0 ? -1 : ffi_call(handle, args, codes, count))
#else
#define HANDLE_INIT(handle, name)

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
#define LAUNCH(handle, kernel, args, codes, count) launch(&handle, kernel, args, codes, count)
#endif

#if FIXTURE_DEVICE_TYPE != 1

static void* vadd_kernel_packed = NULL;
static void* scale_kernel_packed = NULL;
static void* sum_scalars_kernel_packed = NULL;
static void* missing_kernel_packed = NULL;
HANDLE_INIT(vadd_kernel_packed, VADD_KERNEL)
HANDLE_INIT(scale_kernel_packed, "scale_kernel")
HANDLE_INIT(sum_scalars_kernel_packed, "sum_scalars_kernel")
HANDLE_INIT(missing_kernel_packed, "missing_kernel")

/* c = a + b */
OPERATOR(vadd) {
  UNUSED_OPERATOR_ARGS;
  if (num_args != 3) return assert_fail("vadd: num_args should be 3");
  DLTensor* a = ARG_TENSOR(0);
  DLTensor* b = ARG_TENSOR(1);
  DLTensor* c = ARG_TENSOR(2);
  if (check_tensor("vadd", "A", ARG_CODE(0), a, kDLFloat, 0, 0) != 0) return -1;
  const int64_t n = a->shape[0];
  if (check_tensor("vadd", "B", ARG_CODE(1), b, kDLFloat, n, 1) != 0 ||
      check_tensor("vadd", "C", ARG_CODE(2), c, kDLFloat, n, 1) != 0) {
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
  return LAUNCH(vadd_kernel_packed, VADD_KERNEL, k, codes, 6);
}

/* x *= factor (a float64 argument, a float32 kernel scalar) */
OPERATOR(scale) {
  UNUSED_OPERATOR_ARGS;
  if (num_args != 2) return assert_fail("scale: num_args should be 2");
  DLTensor* x = ARG_TENSOR(0);
  if (check_tensor("scale", "X", ARG_CODE(0), x, kDLFloat, 0, 0) != 0) return -1;
  if (ARG_CODE(1) != kTVMArgFloat) return assert_fail("scale: Expect arg[1] to be float");
  const int64_t n = x->shape[0];
  if (set_device(x->device.device_id) != 0) return -1;
  TVMValue k[5];
  int codes[5] = {kTVMOpaqueHandle, kTVMArgFloat, kTVMArgInt, kTVMArgInt, kTVMArgInt};
  k[0].v_handle = x->data;
  k[1].v_float64 = ARG_FLOAT(1);
  k[2].v_int64 = n;
  k[3].v_int64 = (n + 63) / 64;
  k[4].v_int64 = 64;
  return LAUNCH(scale_kernel_packed, "scale_kernel", k, codes, 5);
}

/* out[i] = s0 + ... + s16: 17 int scalars, then n: 18 scalars, past TVM's 128-byte push-constant
 * budget, so a Vulkan kernel takes them in a uniform buffer. */
OPERATOR(sum_scalars) {
  UNUSED_OPERATOR_ARGS;
  if (num_args != 18) return assert_fail("sum_scalars: num_args should be 18");
  DLTensor* out = ARG_TENSOR(0);
  if (check_tensor("sum_scalars", "Out", ARG_CODE(0), out, kDLInt, 0, 0) != 0) return -1;
  for (int i = 1; i < 18; ++i) {
    if (ARG_CODE(i) != kTVMArgInt) return assert_fail("sum_scalars: Expect the scalars to be int");
  }
  const int64_t n = out->shape[0];
  if (set_device(out->device.device_id) != 0) return -1;
  TVMValue k[21];
  int codes[21];
  k[0].v_handle = out->data;
  codes[0] = kTVMOpaqueHandle;
  for (int i = 1; i < 18; ++i) {
    k[i].v_int64 = ARG_INT(i);
    codes[i] = kTVMArgInt;
  }
  k[18].v_int64 = n;
  k[19].v_int64 = (n + 63) / 64;
  k[20].v_int64 = 64;
  for (int i = 18; i < 21; ++i) codes[i] = kTVMArgInt;
  return LAUNCH(sum_scalars_kernel_packed, "sum_scalars_kernel", k, codes, 21);
}

/* Asks for a kernel the blob does not hold: the runtime's refusal comes back as the call's error. */
OPERATOR(missing) {
  UNUSED_OPERATOR_ARGS;
  (void)args, (void)num_args;
#if !FIXTURE_FFI
  (void)type_codes;
#endif
  TVMValue k[1];
  int codes[1] = {kTVMArgInt};
  k[0].v_int64 = 0;
  return LAUNCH(missing_kernel_packed, "missing_kernel", k, codes, 1);
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
OPERATOR(cpu_vadd) {
  UNUSED_OPERATOR_ARGS;
  if (num_args != 3) return assert_fail("cpu_vadd: num_args should be 3");
  DLTensor* a = ARG_TENSOR(0);
  DLTensor* b = ARG_TENSOR(1);
  DLTensor* c = ARG_TENSOR(2);
  if (check_tensor("cpu_vadd", "A", ARG_CODE(0), a, kDLFloat, 0, 0) != 0) return -1;
  const int64_t n = a->shape[0];
  if (check_tensor("cpu_vadd", "B", ARG_CODE(1), b, kDLFloat, n, 1) != 0 ||
      check_tensor("cpu_vadd", "C", ARG_CODE(2), c, kDLFloat, n, 1) != 0) {
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

#ifdef FIXTURE_LANGUAGE_MODEL
/* A bigram language model's forward step (the fixture model of the generate example):
 * logits[0][0][v] = table[ids[0][n - 1]][v]; ids (1, n) int32, table (vocab, vocab) and logits
 * (1, 1, vocab) float32. A token outside the table is TVM's out-of-range assertion. */
OPERATOR(cpu_bigram_logits) {
  UNUSED_OPERATOR_ARGS;
  if (num_args != 3) return assert_fail("cpu_bigram_logits: num_args should be 3");
  DLTensor* ids = ARG_TENSOR(0);
  DLTensor* table = ARG_TENSOR(1);
  DLTensor* logits = ARG_TENSOR(2);
  if (check_array("cpu_bigram_logits", "ids", ARG_CODE(0), ids, kDLInt, 2) != 0 ||
      check_array("cpu_bigram_logits", "table", ARG_CODE(1), table, kDLFloat, 2) != 0 ||
      check_array("cpu_bigram_logits", "logits", ARG_CODE(2), logits, kDLFloat, 3) != 0) {
    return -1;
  }
  const int64_t vocab = table->shape[1];
  if (ids->shape[0] != 1 || ids->shape[1] < 1 || table->shape[0] != vocab || logits->shape[2] != vocab) {
    return assert_fail("cpu_bigram_logits: shapes are (1, n), (vocab, vocab), (1, 1, vocab)");
  }
  const int32_t last = ((const int32_t*)ids->data)[ids->shape[1] - 1];
  if (last < 0 || last >= vocab) return assert_fail("cpu_bigram_logits: Assert fail: token id out of range");
  memcpy(logits->data, (const float*)table->data + last * vocab, (size_t)vocab * sizeof(float));
  return 0;
}

/* MLC's softmax_with_temperature: probs = softmax(logits / temperature) over the last axis;
 * logits and probs (1, 1, vocab) float32, temperature a float32 0-d tensor. */
OPERATOR(cpu_softmax_temperature) {
  UNUSED_OPERATOR_ARGS;
  if (num_args != 3) return assert_fail("cpu_softmax_temperature: num_args should be 3");
  DLTensor* logits = ARG_TENSOR(0);
  DLTensor* temperature = ARG_TENSOR(1);
  DLTensor* probs = ARG_TENSOR(2);
  if (check_array("cpu_softmax_temperature", "logits", ARG_CODE(0), logits, kDLFloat, 3) != 0 ||
      check_array("cpu_softmax_temperature", "temperature", ARG_CODE(1), temperature, kDLFloat, 0) != 0 ||
      check_array("cpu_softmax_temperature", "probs", ARG_CODE(2), probs, kDLFloat, 3) != 0) {
    return -1;
  }
  const int64_t vocab = logits->shape[2];
  if (probs->shape[2] != vocab) return assert_fail("cpu_softmax_temperature: probs.shape[2] != logits.shape[2]");
  const float t = *(const float*)temperature->data;
  const float* x = (const float*)logits->data;
  float* p = (float*)probs->data;
  float top = x[0];
  for (int64_t i = 1; i < vocab; ++i) top = x[i] > top ? x[i] : top;
  float sum = 0.0f;
  for (int64_t i = 0; i < vocab; ++i) {
    p[i] = expf((x[i] - top) / t);
    sum += p[i];
  }
  for (int64_t i = 0; i < vocab; ++i) p[i] /= sum;
  return 0;
}
#endif /* FIXTURE_LANGUAGE_MODEL */

#endif

#if FIXTURE_FFI == 1
/* tvm-ffi's examples/stable_c_abi/src/add_one_cpu.c, its body unchanged: y = x + 1 on the host. */
TVM_DLL int __tvm_ffi_stable_add_one(void* handle, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)handle, (void)num_args, (void)result;
  DLTensor* x;
  if (args[0].type_index == kTVMFFIDLTensorPtr)
    x = (DLTensor*)(args[0].v_ptr);
  else if (args[0].type_index == kTVMFFITensor)
    x = (DLTensor*)(args[0].v_c_str + sizeof(TVMFFIObject));
  else {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "Expects a Tensor input");
    return -1;
  }
  DLTensor* y;
  if (args[1].type_index == kTVMFFIDLTensorPtr)
    y = (DLTensor*)(args[1].v_ptr);
  else if (args[1].type_index == kTVMFFITensor)
    y = (DLTensor*)(args[1].v_c_str + sizeof(TVMFFIObject));
  else {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "Expects a Tensor output");
    return -1;
  }
  for (int64_t i = 0; i < x->shape[0]; ++i) {
    ((float*)y->data)[i] = ((float*)x->data)[i] + 1.0f;
  }
  return 0;
}
#endif
