// Launch helpers shared by the CUDA and HIP backends, whose launch calls take the same shape:
// grid and block extents checked against device and function limits, and a `void* params[]`
// array pointing at each argument's bytes. Not public API.
#ifndef DEVRT_SRC_CORE_GPU_LAUNCH_HPP
#define DEVRT_SRC_CORE_GPU_LAUNCH_HPP

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <devrt/backend.hpp>
#include <devrt/dtype.hpp>

namespace devrt::detail {

struct GpuLimits {
  std::uint32_t max_block[3] = {0, 0, 0};
  std::uint32_t max_grid[3] = {0, 0, 0};
  std::uint32_t max_threads_per_block = 0; // of this function (registers may lower it)
};

inline Status check_gpu_extents(const LaunchDesc& desc, const GpuLimits& limits) noexcept {
  static constexpr char kAxis[] = {'x', 'y', 'z'};
  for (int i = 0; i < 3; ++i) {
    if (desc.block[i] > limits.max_block[i]) {
      return make_error(ErrorCode::invalid_argument, "block.", kAxis[i], " = ", desc.block[i],
                        " exceeds max_thread_dimensions.", kAxis[i], " = ", limits.max_block[i]);
    }
    if (desc.grid[i] > limits.max_grid[i]) {
      return make_error(ErrorCode::invalid_argument, "grid.", kAxis[i], " = ", desc.grid[i],
                        " exceeds the device's maximum grid extent ", limits.max_grid[i]);
    }
  }
  std::uint64_t threads = std::uint64_t{desc.block[0]} * desc.block[1] * desc.block[2];
  if (threads > limits.max_threads_per_block) {
    return make_error(ErrorCode::invalid_argument, "a block of ", threads, " threads exceeds this kernel's ",
                      limits.max_threads_per_block, " (max_threads_per_block for its register use)");
  }
  return Status();
}

// The pointer-to-each-argument array that cuLaunchKernel / hipModuleLaunchKernel read. Buffers
// become 64-bit device addresses (allocation + offset); scalars point at their value bytes.
struct PackedGpuArgs {
  std::uint64_t addresses[kMaxKernelArgs];
  void* params[kMaxKernelArgs];
};

// Packs desc.args; when the kernel's parameter sizes are `known` it also checks the count and each
// argument's size against them.
inline Status pack_gpu_args(const LaunchDesc& desc, bool known, std::span<const std::uint32_t> param_sizes,
                            PackedGpuArgs& out) noexcept {
  if (known) {
    if (param_sizes.size() != desc.num_args) {
      return make_error(ErrorCode::invalid_argument, "the kernel takes ", param_sizes.size(),
                        " arguments but was given ", desc.num_args);
    }
  }
  for (std::uint32_t i = 0; i < desc.num_args; ++i) {
    const devrt_kernel_arg& arg = desc.args[i];
    std::uint32_t size = 8;
    if (arg.kind == DEVRT_ARG_BUFFER) {
      out.addresses[i] = reinterpret_cast<std::uintptr_t>(arg.buffer) + arg.offset;
      out.params[i] = &out.addresses[i];
    } else {
      size = arg.type_bits / 8u;
      out.params[i] = const_cast<unsigned char*>(arg.value.bytes);
    }
    if (known && param_sizes[i] != size) {
      std::string what = arg.kind == DEVRT_ARG_BUFFER
                             ? std::string("a device pointer")
                             : to_string(DataType{static_cast<DataTypeCode>(arg.type_code), arg.type_bits, 1});
      return make_error(ErrorCode::invalid_argument, "argument ", i, " is ", what, " (", size,
                        " bytes) but the kernel's parameter ", i, " is ", param_sizes[i], " bytes");
    }
  }
  return Status();
}

} // namespace devrt::detail

#endif // DEVRT_SRC_CORE_GPU_LAUNCH_HPP
