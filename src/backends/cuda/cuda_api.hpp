// SPDX-License-Identifier: Apache-2.0
// The CUDA driver entry points devrt uses, resolved from libcuda.so.1 at first use (never linked).
#ifndef DEVRT_SRC_BACKENDS_CUDA_CUDA_API_HPP
#define DEVRT_SRC_BACKENDS_CUDA_CUDA_API_HPP

#include <cuda.h>

#include <string_view>

#include "support/dynamic_library.hpp"

namespace devrt::cuda {

// Every function, once. cuda.h maps names to their current ABI (cuMemAlloc -> cuMemAlloc_v2), so
// the slot and the symbol looked up are the expanded names; only declarations are used.
#define DEVRT_CUDA_SYMBOLS(X)                                                                                          \
  X(cuInit)                                                                                                            \
  X(cuDriverGetVersion)                                                                                                \
  X(cuGetErrorName)                                                                                                    \
  X(cuDeviceGetCount)                                                                                                  \
  X(cuDeviceGet)                                                                                                       \
  X(cuDeviceGetName)                                                                                                   \
  X(cuDeviceGetAttribute)                                                                                              \
  X(cuDeviceTotalMem)                                                                                                  \
  X(cuDeviceCanAccessPeer)                                                                                             \
  X(cuDevicePrimaryCtxRetain)                                                                                          \
  X(cuDevicePrimaryCtxRelease)                                                                                         \
  X(cuCtxGetCurrent)                                                                                                   \
  X(cuCtxSetCurrent)                                                                                                   \
  X(cuCtxEnablePeerAccess)                                                                                             \
  X(cuCtxSynchronize)                                                                                                  \
  X(cuMemGetInfo)                                                                                                      \
  X(cuMemAlloc)                                                                                                        \
  X(cuMemFree)                                                                                                         \
  X(cuMemHostAlloc)                                                                                                    \
  X(cuMemFreeHost)                                                                                                     \
  X(cuMemcpyHtoDAsync)                                                                                                 \
  X(cuMemcpyDtoHAsync)                                                                                                 \
  X(cuMemcpyDtoDAsync)                                                                                                 \
  X(cuMemcpyPeerAsync)                                                                                                 \
  X(cuStreamCreate)                                                                                                    \
  X(cuStreamDestroy)                                                                                                   \
  X(cuStreamSynchronize)                                                                                               \
  X(cuStreamWaitEvent)                                                                                                 \
  X(cuEventCreate)                                                                                                     \
  X(cuEventDestroy)                                                                                                    \
  X(cuEventRecord)                                                                                                     \
  X(cuEventSynchronize)                                                                                                \
  X(cuEventQuery)                                                                                                      \
  X(cuModuleLoadDataEx)                                                                                                \
  X(cuModuleUnload)                                                                                                    \
  X(cuModuleGetFunction)                                                                                               \
  X(cuFuncGetAttribute)                                                                                                \
  X(cuFuncSetAttribute)                                                                                                \
  X(cuLaunchKernel)

// Newer than the oldest driver devrt runs on; a null slot means "not available".
#define DEVRT_CUDA_OPTIONAL_SYMBOLS(X)                                                                                 \
  X(cuFuncGetParamInfo)   /* 12.4 */                                                                                   \
  X(cuEventElapsedTime)   /* as cuEventElapsedTime_v2: 12.8 */                                                         \
  X(cuStreamBeginCapture) /* as cuStreamBeginCapture_v2: graphs, 10.1 */                                               \
  X(cuStreamEndCapture)                                                                                                \
  X(cuGraphInstantiate) /* as cuGraphInstantiateWithFlags: 11.4 */                                                     \
  X(cuGraphLaunch)                                                                                                     \
  X(cuGraphExecDestroy)                                                                                                \
  X(cuGraphDestroy)

struct Api {
#define DEVRT_CUDA_SLOT(name) decltype(&::name) name = nullptr;
  DEVRT_CUDA_SYMBOLS(DEVRT_CUDA_SLOT)
  DEVRT_CUDA_OPTIONAL_SYMBOLS(DEVRT_CUDA_SLOT)
#undef DEVRT_CUDA_SLOT
};

// The library the backend opens, and the raw side of its benchmarks too (support/dynamic_library.hpp).
inline constexpr const char* kDriverNames[] = {"libcuda.so.1"};
inline constexpr detail::VendorLibrary kDriver{"CUDA driver", kDriverNames, "DEVRT_CUDA_LIBRARY",
                                               "install the NVIDIA driver"};

} // namespace devrt::cuda

#endif // DEVRT_SRC_BACKENDS_CUDA_CUDA_API_HPP
