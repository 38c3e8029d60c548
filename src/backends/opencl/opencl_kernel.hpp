// SPDX-License-Identifier: Apache-2.0
// OpenCL kernels as launches and graphs both use them: the function and module objects, and the
// checks and argument setting of a launch (opencl_module.cpp), which graph recording
// (opencl_graph.cpp) repeats per node. Not public API.
#ifndef DEVRT_SRC_BACKENDS_OPENCL_OPENCL_KERNEL_HPP
#define DEVRT_SRC_BACKENDS_OPENCL_OPENCL_KERNEL_HPP

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend_support/kernel_signature.hpp"
#include "opencl_state.hpp"

namespace devrt::opencl {

struct ClFunction {
  cl_kernel kernel = nullptr;
  std::string name;
  detail::KernelSignature signature; // user-visible parameters (the __local one excluded)
  cl_uint total_args = 0;
  std::int32_t local_arg = -1; // index of the __local pointer parameter, if any
  std::size_t work_group_limit = 0;
  std::mutex mutex; // clSetKernelArg + enqueue are not thread-safe on one cl_kernel
};

struct ClModule {
  cl_program program = nullptr;
  std::mutex mutex;
  std::vector<std::unique_ptr<ClFunction>> functions;
};

// The sub-buffers a launch created for offset arguments, released once it is enqueued.
struct OwnedBuffers {
  explicit OwnedBuffers(const Api& library) noexcept : api(library) {}
  OwnedBuffers(const OwnedBuffers&) = delete;
  OwnedBuffers& operator=(const OwnedBuffers&) = delete;
  const Api& api;
  cl_mem buffers[kMaxKernelArgs];
  std::uint32_t count = 0;
  ~OwnedBuffers() {
    for (std::uint32_t i = 0; i < count; ++i) static_cast<void>(api.clReleaseMemObject(buffers[i]));
  }
};

// Checks a launch against the kernel and the device, and says which parameter receives the
// dynamic local memory: the __local one, or (without argument info) the one the launch did not
// fill; -1 for none.
Result<std::int32_t> check_launch(const ClFunction& f, const ClDevice& d, const LaunchDesc& desc);
// Sets every argument of `kernel` (a function's, or a graph's copy of it), the __local one at
// `local_arg`. Caller holds the function's mutex when it is the function's.
Status set_arguments(cl_kernel kernel, const ClDevice& d, const LaunchDesc& desc, std::int32_t local_arg,
                     OwnedBuffers& owned);

} // namespace devrt::opencl

#endif // DEVRT_SRC_BACKENDS_OPENCL_OPENCL_KERNEL_HPP
