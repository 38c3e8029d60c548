// SPDX-License-Identifier: Apache-2.0
/* The CPU backend's kernel ABI, in C so that kernels can be written in C, C++ or generated code
 * and compiled into the program (a kernel table) or into a shared object loaded as a module.
 *
 * A CPU kernel is called once per block, on one host thread, with the block's index; it runs
 * every thread of the block itself (a loop over block[0..2]), so a barrier between the threads
 * of a block is the end of one loop and the start of the next, and block-shared memory is
 * `shared_memory` (dynamic_shared_bytes of the launch, 64-byte aligned). Blocks run one after
 * another on the launching thread, in x, then y, then z order.
 *
 * Arguments arrive as the launch gave them, already checked against `signature` when the kernel
 * has one: "buffer,buffer,float32,int32" lists each parameter as `buffer` or a scalar type name.
 * A shared object states a kernel's signature by exporting a NUL-terminated string named
 * `<kernel><DEVRT_CPU_SIGNATURE_SUFFIX>`, e.g. `const char vadd_devrt_signature[]`.
 */
#ifndef DEVRT_BACKEND_CPU_KERNEL_H
#define DEVRT_BACKEND_CPU_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include <devrt/backend/backend_abi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DEVRT_CPU_SIGNATURE_SUFFIX "_devrt_signature"

typedef struct devrt_cpu_kernel_context {
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t block_index[3];
  void* shared_memory; /* NULL when the launch asked for none */
  size_t shared_memory_bytes;
  const devrt_kernel_arg* args;
  uint32_t num_args;
} devrt_cpu_kernel_context;

/* Returns 0, or a devrt error code with a reason in err->message (the launch stops there). */
typedef int32_t (*devrt_cpu_kernel)(const devrt_cpu_kernel_context* context, devrt_error* err);

/* One named kernel; signature may be NULL (arguments are then not checked). */
typedef struct devrt_cpu_kernel_entry {
  const char* name;
  devrt_cpu_kernel function;
  const char* signature;
} devrt_cpu_kernel_entry;

/* Argument i as a host pointer (buffers) or value (scalars). */
static inline void* devrt_cpu_arg_pointer(const devrt_cpu_kernel_context* c, uint32_t i) {
  return (char*)c->args[i].buffer + c->args[i].offset;
}
static inline float devrt_cpu_arg_f32(const devrt_cpu_kernel_context* c, uint32_t i) { return c->args[i].value.f32; }
static inline double devrt_cpu_arg_f64(const devrt_cpu_kernel_context* c, uint32_t i) { return c->args[i].value.f64; }
static inline int32_t devrt_cpu_arg_i32(const devrt_cpu_kernel_context* c, uint32_t i) { return c->args[i].value.i32; }
static inline int64_t devrt_cpu_arg_i64(const devrt_cpu_kernel_context* c, uint32_t i) { return c->args[i].value.i64; }

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DEVRT_BACKEND_CPU_KERNEL_H */
