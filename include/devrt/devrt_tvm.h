/* SPDX-License-Identifier: Apache-2.0 */
/* The C API of devrt::tvm: libraries TVM built (devrt/tvm.hpp), their Relax VM (devrt/tvm_vm.hpp),
 * MLC's weights, and timing VM functions. Part of <devrt/devrt.h>, which includes it: its rules
 * hold (devrt_status results, the thread-local devrt_last_error(), out parameters written only on
 * success, handles released with their *_release). The functions are in every libdevrt_c; in
 * builds without -Dtvm they return DEVRT_STATUS_UNSUPPORTED. */
#ifndef DEVRT_DEVRT_TVM_H
#define DEVRT_DEVRT_TVM_H

#include <devrt/devrt.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Libraries TVM built (devrt/tvm.hpp; builds with -Dtvm) --------------------------------- */

typedef struct devrt_tvm_library_t* devrt_tvm_library;

/* An argument of a library function: a devrt_tensor, a DLTensor the caller keeps alive during the
 * call, an int64 or a float64 (TVM's packed values). */
#define DEVRT_TVM_ARG_TENSOR 0
#define DEVRT_TVM_ARG_DLTENSOR 1
#define DEVRT_TVM_ARG_INT 2
#define DEVRT_TVM_ARG_FLOAT 3
typedef struct devrt_tvm_arg {
  int32_t kind;
  int32_t reserved;
  union {
    devrt_tensor tensor;
    const DLTensor* dl_tensor;
    int64_t i64;
    double f64;
  } value;
} devrt_tvm_arg;

/* Loads the library TVM built at `path` for `device` (devrt::tvm::Library::load; TVM <= 0.20's
 * packed functions or tvm-ffi's, TVM >= 0.21): checked before dlopen, its device blob parsed, its
 * kernels loaded. Owned by the caller. Thread-safe. DEVRT_STATUS_UNSUPPORTED in builds without
 * -Dtvm, and for a library importing TVM runtime functions devrt does not provide. */
DEVRT_C_API devrt_status devrt_tvm_library_load(const char* path, devrt_device device, devrt_tvm_library* out);
/* NULL is a no-op. The library's file stays mapped for the process. */
DEVRT_C_API void devrt_tvm_library_release(devrt_tvm_library library);
/* The host functions it exports, sorted; `index` past the count is DEVRT_STATUS_OUT_OF_RANGE.
 * The name is borrowed, valid while the library lives. Thread-safe. */
DEVRT_C_API devrt_status devrt_tvm_library_function(devrt_tvm_library library, size_t index, const char** name,
                                                    size_t* count);
/* Kernel `index` of its blob for this device: its name and launch tags joined by ',' (borrowed
 * while the library lives; tags as a new string to free with devrt_string_free). */
DEVRT_C_API devrt_status devrt_tvm_library_kernel(devrt_tvm_library library, size_t index, const char** name,
                                                  char** launch_tags, size_t* count);
/* What parsing its blob skipped, each with the reason (borrowed). */
DEVRT_C_API devrt_status devrt_tvm_library_skipped(devrt_tvm_library library, size_t index, const char** reason,
                                                   size_t* count);
/* How many instructions devrt rewrote in its kernels at load, over all of them, into *count
 * (devrt::tvm::Library::rewritten_instructions). Thread-safe. */
DEVRT_C_API devrt_status devrt_tvm_library_rewritten_instructions(devrt_tvm_library library, uint32_t* count);
/* Calls host function `name` with `args` (devrt::tvm::Library::call): kernels run asynchronously on
 * the calling thread's current stream of the device. Thread-safe. */
DEVRT_C_API devrt_status devrt_tvm_library_call(devrt_tvm_library library, const char* name, const devrt_tvm_arg* args,
                                                size_t num_args);
/* Waits for what this thread's calls queued on its current stream of the library's device; an
 * asynchronous failure names the last function this thread called. Thread-safe. */
DEVRT_C_API devrt_status devrt_tvm_library_synchronize(devrt_tvm_library library);

/* ---- The Relax VM of a library TVM built (devrt/tvm_vm.hpp; builds with -Dtvm) --------------- */

typedef struct devrt_tvm_vm_t* devrt_tvm_vm;
/* A reference to a VM value (devrt::tvm::Value): each one the caller gets is its own to release;
 * the value inside (a tensor, a tuple, a KV cache) lives while some reference to it does. */
typedef struct devrt_tvm_value_t* devrt_tvm_value;

/* The kinds of VM values, devrt::tvm::Value::Kind's order. */
#define DEVRT_TVM_VALUE_NULL 0
#define DEVRT_TVM_VALUE_INT 1
#define DEVRT_TVM_VALUE_FLOAT 2
#define DEVRT_TVM_VALUE_DTYPE 3
#define DEVRT_TVM_VALUE_STRING 4
#define DEVRT_TVM_VALUE_SHAPE 5
#define DEVRT_TVM_VALUE_TENSOR 6
#define DEVRT_TVM_VALUE_TUPLE 7
#define DEVRT_TVM_VALUE_FUNCTION 8
#define DEVRT_TVM_VALUE_OBJECT 9

/* The VM of `library`'s relax.Executable (devrt::tvm::VirtualMachine::create): parsed, checked and
 * resolved now; `library` must outlive it. not_found for a library without one. Owned by the
 * caller. Thread-safe. */
DEVRT_C_API devrt_status devrt_tvm_vm_create(devrt_tvm_library library, devrt_tvm_vm* out);
DEVRT_C_API void devrt_tvm_vm_release(devrt_tvm_vm vm); /* NULL is a no-op */
/* Its VM functions in the executable's order (borrowed names, valid while the VM lives);
 * `index` past the count is DEVRT_STATUS_OUT_OF_RANGE. Thread-safe. */
DEVRT_C_API devrt_status devrt_tvm_vm_function(devrt_tvm_vm vm, size_t index, const char** name, size_t* count);
/* Runs VM function `name` on `args` into *result, a new reference (devrt::tvm::VirtualMachine::
 * call). One call at a time per VM. */
DEVRT_C_API devrt_status devrt_tvm_vm_call(devrt_tvm_vm vm, const char* name, const devrt_tvm_value* args,
                                           size_t num_args, devrt_tvm_value* result);

/* TVM's vm.time_evaluator (devrt::tvm::time_function): seconds per call of VM function `name` on
 * `args`, one per repeat of `evaluator` (devrt_time_evaluator_create for the VM's device), into
 * results[0 .. repeat); each call the whole function with its host work, the KV caches among
 * `args` put back to their starting length before each. capacity below repeat is
 * DEVRT_STATUS_OUT_OF_RANGE before anything runs; a remote device is DEVRT_STATUS_UNSUPPORTED.
 * One call at a time per VM. */
DEVRT_C_API devrt_status devrt_tvm_vm_time_function(devrt_tvm_vm vm, devrt_time_evaluator_handle evaluator,
                                                    const char* name, const devrt_tvm_value* args, size_t num_args,
                                                    double* results, size_t capacity);

/* MLC's weights (devrt::tvm::load_params): `directory`'s ndarray-cache.json and its shards onto
 * `device`, into *out: a tuple of (name, tensor) tuples in the file's order. Thread-safe. */
DEVRT_C_API devrt_status devrt_tvm_load_params(const char* directory, devrt_device device, devrt_tvm_value* out);
/* Those as `vm`'s model takes them (devrt::tvm::model_params): a tuple of its tensors in its
 * _metadata's order, dtypes and shapes checked. One call at a time per VM. */
DEVRT_C_API devrt_status devrt_tvm_vm_model_params(devrt_tvm_vm vm, devrt_tvm_value params, devrt_tvm_value* out);

/* New values, owned by the caller. A string is `length` bytes of `text`; a shape `ndim` dims; a
 * tensor shares `tensor`'s storage; a tuple takes a reference to each item. Thread-safe. */
DEVRT_C_API devrt_status devrt_tvm_value_from_int(int64_t value, devrt_tvm_value* out);
DEVRT_C_API devrt_status devrt_tvm_value_from_float(double value, devrt_tvm_value* out);
DEVRT_C_API devrt_status devrt_tvm_value_from_string(const char* text, size_t length, devrt_tvm_value* out);
DEVRT_C_API devrt_status devrt_tvm_value_from_shape(const int64_t* dims, size_t ndim, devrt_tvm_value* out);
DEVRT_C_API devrt_status devrt_tvm_value_from_tensor(devrt_tensor tensor, devrt_tvm_value* out);
DEVRT_C_API devrt_status devrt_tvm_value_from_tuple(const devrt_tvm_value* items, size_t count, devrt_tvm_value* out);
DEVRT_C_API void devrt_tvm_value_release(devrt_tvm_value value); /* NULL is a no-op */
/* Its kind (DEVRT_TVM_VALUE_*), and for objects and functions TVM's type key (a static string,
 * "" for other kinds). Thread-safe. */
DEVRT_C_API devrt_status devrt_tvm_value_kind(devrt_tvm_value value, int32_t* kind, const char** type_key);
/* What a value of that kind holds; another kind is invalid_argument naming both. Strings and
 * shapes are borrowed while the value lives; a tensor and a tuple's item are new references.
 * Thread-safe. */
DEVRT_C_API devrt_status devrt_tvm_value_int(devrt_tvm_value value, int64_t* out);
DEVRT_C_API devrt_status devrt_tvm_value_float(devrt_tvm_value value, double* out);
DEVRT_C_API devrt_status devrt_tvm_value_dtype(devrt_tvm_value value, DLDataType* out);
DEVRT_C_API devrt_status devrt_tvm_value_string(devrt_tvm_value value, const char** text, size_t* length);
DEVRT_C_API devrt_status devrt_tvm_value_shape(devrt_tvm_value value, const int64_t** dims, size_t* ndim);
DEVRT_C_API devrt_status devrt_tvm_value_tensor(devrt_tvm_value value, devrt_tensor* out);
/* Item `index` of a tuple, and the tuple's size into *count (either may be NULL); an index past it
 * is DEVRT_STATUS_OUT_OF_RANGE. */
DEVRT_C_API devrt_status devrt_tvm_value_tuple_item(devrt_tvm_value value, size_t index, devrt_tvm_value* out,
                                                    size_t* count);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DEVRT_DEVRT_TVM_H */
