// SPDX-License-Identifier: Apache-2.0
/* The values and plain structs that the application API (devrt::ErrorCode, devrt::ModuleFormat,
 * devrt::KernelArg) shares with the backend C ABI (devrt/backend/backend_abi.h): status codes, module
 * formats and kernel arguments. No functions and no tables: applications see this header, backend
 * authors see it through backend_abi.h. Append only; the numbers are ABI. */
#ifndef DEVRT_KERNEL_ABI_H
#define DEVRT_KERNEL_ABI_H

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
#else
#include <stddef.h>
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes, the values of devrt::ErrorCode (devrt/status.hpp checks that they agree). A code
 * above DEVRT_STATUS_LAST is reported as `internal` ("unknown status"). */
#define DEVRT_STATUS_OK 0
#define DEVRT_STATUS_INVALID_ARGUMENT 1
#define DEVRT_STATUS_OUT_OF_RANGE 2
#define DEVRT_STATUS_UNAVAILABLE 3
#define DEVRT_STATUS_UNSUPPORTED 4
#define DEVRT_STATUS_OUT_OF_MEMORY 5
#define DEVRT_STATUS_DRIVER_ERROR 6
#define DEVRT_STATUS_INTERNAL 7
#define DEVRT_STATUS_NOT_FOUND 8
#define DEVRT_STATUS_ALREADY_EXISTS 9
#define DEVRT_STATUS_ABI_MISMATCH 10
#define DEVRT_STATUS_TOOL_FAILED 11
#define DEVRT_STATUS_TIMED_OUT 12
#define DEVRT_STATUS_PERMISSION_DENIED 13
#define DEVRT_STATUS_LAST DEVRT_STATUS_PERMISSION_DENIED

/* devrt_module_format: what the bytes given to module_load are. */
#define DEVRT_MODULE_HOST_TABLE 1    /* CPU: the name of a kernel table registered in-process */
#define DEVRT_MODULE_SHARED_OBJECT 2 /* CPU: an ELF shared object exporting devrt_cpu_kernel functions */
#define DEVRT_MODULE_OPENCL_C 3      /* OpenCL C source text */
#define DEVRT_MODULE_OPENCL_BINARY 4 /* an OpenCL program binary (clGetProgramInfo(CL_PROGRAM_BINARIES)) */
#define DEVRT_MODULE_SPIRV 5         /* SPIR-V words (Vulkan compute shaders) */
#define DEVRT_MODULE_PTX 6           /* CUDA PTX text */
#define DEVRT_MODULE_CUBIN 7         /* CUDA cubin ELF */
#define DEVRT_MODULE_FATBIN 8        /* CUDA fat binary */
#define DEVRT_MODULE_HSACO 9         /* AMD GPU code object */
#define DEVRT_MODULE_WGSL 10         /* WebGPU Shading Language source text */
#define DEVRT_MODULE_FORMAT_COUNT 11

/* devrt_kernel_arg.kind */
#define DEVRT_ARG_BUFFER 1  /* device memory: buffer (allocation handle) + offset, size bytes visible from offset */
#define DEVRT_ARG_SCALAR 2  /* a scalar of DLPack type (type_code, type_bits), little-endian in value.bytes */
#define DEVRT_ARG_TEXTURE 3 /* a texture (devrt/device.hpp): buffer = its handle, size = its bytes */

typedef struct devrt_kernel_arg {
  int32_t kind;
  uint8_t type_code; /* scalars: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLBool 6 */
  uint8_t type_bits; /* scalars: 8, 16, 32 or 64 */
  uint16_t reserved;
  int32_t device_kind; /* buffers: the device the memory lives on */
  int32_t device_id;
  void* buffer;  /* buffers: what allocate() returned (an address or a handle); NULL only when size is 0 */
  size_t offset; /* buffers: bytes from the allocation's start */
  size_t size;   /* buffers: bytes the kernel may touch from offset */
  union {
    int64_t i64;
    uint64_t u64;
    double f64;
    float f32;
    int32_t i32;
    uint32_t u32;
    unsigned char bytes[8];
  } value;
} devrt_kernel_arg;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DEVRT_KERNEL_ABI_H */
