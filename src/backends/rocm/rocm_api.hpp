// SPDX-License-Identifier: Apache-2.0
// The HIP runtime entry points devrt uses, resolved from libamdhip64 at first use (never linked).
#ifndef DEVRT_SRC_BACKENDS_ROCM_ROCM_API_HPP
#define DEVRT_SRC_BACKENDS_ROCM_ROCM_API_HPP

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#include <hip/hip_runtime_api.h>

#include <type_traits>

#include "support/dynamic_library.hpp"

namespace devrt::rocm {

// Every function, once; only declarations from hip_runtime_api.h are used.
#define DEVRT_HIP_SYMBOLS(X)                                                                                           \
  X(hipGetErrorName)                                                                                                   \
  X(hipDriverGetVersion)                                                                                               \
  X(hipGetDeviceCount)                                                                                                 \
  X(hipGetDevice)                                                                                                      \
  X(hipSetDevice)                                                                                                      \
  X(hipGetDeviceProperties)                                                                                            \
  X(hipDeviceGetAttribute)                                                                                             \
  X(hipMemGetInfo)                                                                                                     \
  X(hipFree)                                                                                                           \
  X(hipHostFree)                                                                                                       \
  X(hipMemcpyHtoDAsync)                                                                                                \
  X(hipMemcpyDtoHAsync)                                                                                                \
  X(hipMemcpyDtoDAsync)                                                                                                \
  X(hipMemcpyPeerAsync)                                                                                                \
  X(hipStreamCreateWithFlags)                                                                                          \
  X(hipStreamDestroy)                                                                                                  \
  X(hipStreamSynchronize)                                                                                              \
  X(hipDeviceSynchronize)                                                                                              \
  X(hipStreamWaitEvent)                                                                                                \
  X(hipEventCreateWithFlags)                                                                                           \
  X(hipEventDestroy)                                                                                                   \
  X(hipEventRecord)                                                                                                    \
  X(hipEventSynchronize)                                                                                               \
  X(hipEventQuery)                                                                                                     \
  X(hipEventElapsedTime)                                                                                               \
  X(hipModuleLoadData)                                                                                                 \
  X(hipModuleUnload)                                                                                                   \
  X(hipModuleGetFunction)                                                                                              \
  X(hipFuncGetAttribute)                                                                                               \
  X(hipModuleLaunchKernel)

// hip_runtime_api.h adds C++ template overloads to these; the slots name the C entry points.
#define DEVRT_HIP_TYPED_SYMBOLS(X)                                                                                     \
  X(hipMalloc, hipError_t (*)(void**, size_t))                                                                         \
  X(hipHostMalloc, hipError_t (*)(void**, size_t, unsigned int))

struct Api {
#define DEVRT_HIP_SLOT(name) decltype(&::name) name = nullptr;
#define DEVRT_HIP_TYPED_SLOT(name, ...) std::type_identity_t<__VA_ARGS__> name = nullptr;
  DEVRT_HIP_SYMBOLS(DEVRT_HIP_SLOT)
  DEVRT_HIP_TYPED_SYMBOLS(DEVRT_HIP_TYPED_SLOT)
#undef DEVRT_HIP_TYPED_SLOT
#undef DEVRT_HIP_SLOT
};

// The library the backend opens, and the raw side of its benchmarks too (support/dynamic_library.hpp).
inline constexpr const char* kRuntimeNames[] = {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"};
inline constexpr detail::VendorLibrary kRuntime{"HIP runtime", kRuntimeNames, "DEVRT_HIP_LIBRARY",
                                                "install ROCm's HIP runtime (Debian: apt-get install libamdhip64-5)"};

} // namespace devrt::rocm

#endif // DEVRT_SRC_BACKENDS_ROCM_ROCM_API_HPP
