// SPDX-License-Identifier: Apache-2.0
// The OpenCL entry points devrt uses, resolved from libOpenCL.so.1 at first use (never linked).
#ifndef DEVRT_SRC_BACKENDS_OPENCL_OPENCL_API_HPP
#define DEVRT_SRC_BACKENDS_OPENCL_OPENCL_API_HPP

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <string_view>

#include "support/dynamic_library.hpp"

namespace devrt::opencl {

// Every function, once: X(name). Only declarations from CL/cl.h are used (through decltype), so
// nothing here creates a link-time reference.
#define DEVRT_OPENCL_SYMBOLS(X)                                                                                        \
  X(clGetPlatformIDs)                                                                                                  \
  X(clGetPlatformInfo)                                                                                                 \
  X(clGetDeviceIDs)                                                                                                    \
  X(clGetDeviceInfo)                                                                                                   \
  X(clCreateContext)                                                                                                   \
  X(clReleaseContext)                                                                                                  \
  X(clCreateCommandQueue)                                                                                              \
  X(clReleaseCommandQueue)                                                                                             \
  X(clFinish)                                                                                                          \
  X(clFlush)                                                                                                           \
  X(clCreateBuffer)                                                                                                    \
  X(clCreateSubBuffer)                                                                                                 \
  X(clReleaseMemObject)                                                                                                \
  X(clEnqueueReadBuffer)                                                                                               \
  X(clEnqueueWriteBuffer)                                                                                              \
  X(clEnqueueCopyBuffer)                                                                                               \
  X(clCreateImage)                                                                                                     \
  X(clGetSupportedImageFormats)                                                                                        \
  X(clEnqueueReadImage)                                                                                                \
  X(clEnqueueWriteImage)                                                                                               \
  X(clEnqueueCopyBufferToImage)                                                                                        \
  X(clEnqueueCopyImageToBuffer)                                                                                        \
  X(clCreateProgramWithSource)                                                                                         \
  X(clCreateProgramWithBinary)                                                                                         \
  X(clBuildProgram)                                                                                                    \
  X(clGetProgramBuildInfo)                                                                                             \
  X(clGetProgramInfo)                                                                                                  \
  X(clReleaseProgram)                                                                                                  \
  X(clCreateKernel)                                                                                                    \
  X(clReleaseKernel)                                                                                                   \
  X(clSetKernelArg)                                                                                                    \
  X(clGetKernelInfo)                                                                                                   \
  X(clGetKernelArgInfo)                                                                                                \
  X(clGetKernelWorkGroupInfo)                                                                                          \
  X(clEnqueueNDRangeKernel)                                                                                            \
  X(clEnqueueMarkerWithWaitList)                                                                                       \
  X(clEnqueueBarrierWithWaitList)                                                                                      \
  X(clWaitForEvents)                                                                                                   \
  X(clGetEventInfo)                                                                                                    \
  X(clGetEventProfilingInfo)                                                                                           \
  X(clRetainEvent)                                                                                                     \
  X(clReleaseEvent)

struct Api {
#define DEVRT_OPENCL_SLOT(name) decltype(&::name) name = nullptr;
  DEVRT_OPENCL_SYMBOLS(DEVRT_OPENCL_SLOT)
#undef DEVRT_OPENCL_SLOT
};

// cl_khr_command_buffer's entry points (graphs), from clGetExtensionFunctionAddressForPlatform.
#define DEVRT_OPENCL_COMMAND_BUFFER_SYMBOLS(X)                                                                         \
  X(clCreateCommandBufferKHR)                                                                                          \
  X(clCommandNDRangeKernelKHR)                                                                                         \
  X(clCommandCopyBufferKHR)                                                                                            \
  X(clFinalizeCommandBufferKHR)                                                                                        \
  X(clEnqueueCommandBufferKHR)                                                                                         \
  X(clReleaseCommandBufferKHR)

struct CommandBufferApi {
#define DEVRT_OPENCL_COMMAND_BUFFER_SLOT(name) name##_fn name = nullptr;
  DEVRT_OPENCL_COMMAND_BUFFER_SYMBOLS(DEVRT_OPENCL_COMMAND_BUFFER_SLOT)
#undef DEVRT_OPENCL_COMMAND_BUFFER_SLOT
};

// "CL_OUT_OF_RESOURCES" for -5, "CL error -9999" style text for unknown codes (static storage for
// known ones; unknown ones print the number). Thread-safe.
std::string_view error_name(cl_int code) noexcept;

// The library the backend opens, and the raw side of its benchmarks too (support/dynamic_library.hpp).
inline constexpr const char* kLoaderNames[] = {"libOpenCL.so.1", "libOpenCL.so"};
inline constexpr detail::VendorLibrary kLoader{
    "OpenCL loader", kLoaderNames, "DEVRT_OPENCL_LIBRARY",
    "install an OpenCL ICD loader (Debian: apt-get install ocl-icd-libopencl1)"};

} // namespace devrt::opencl

#endif // DEVRT_SRC_BACKENDS_OPENCL_OPENCL_API_HPP
