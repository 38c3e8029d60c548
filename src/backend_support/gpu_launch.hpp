// SPDX-License-Identifier: Apache-2.0
// Launch helpers shared by the GPU backends: a graph's run issued through a backend's own launch
// and copy; grid and block extents checked against device and function limits (every GPU backend,
// one set of messages), and for CUDA and HIP, whose launch
// calls take the same shape, device attributes and a `void* params[]` array pointing at each
// argument's bytes. Not public API.
#ifndef DEVRT_SRC_BACKEND_SUPPORT_GPU_LAUNCH_HPP
#define DEVRT_SRC_BACKEND_SUPPORT_GPU_LAUNCH_HPP

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <devrt/backend/backend.hpp>
#include <devrt/dtype.hpp>
#include <devrt/target.hpp>

namespace devrt::detail {

// Issues a graph's run through backend B's own launch and copy on `stream` (the stream a backend
// bakes the run from: Vulkan's recorder, CUDA's capturing stream). Stops at the first error.
template <class B>
Status issue_graph_nodes(B& backend, const BackendDevice& device, void* stream,
                         std::span<const devrt_graph_node> nodes) noexcept {
  for (const devrt_graph_node& node : nodes) {
    if (node.type == DEVRT_GRAPH_NODE_LAUNCH) {
      devrt_launch_desc desc = node.launch;
      desc.stream = stream;
      DEVRT_RETURN_IF_ERROR(backend.launch(device, node.function, desc));
    } else {
      devrt_copy_desc desc = node.copy;
      desc.stream = stream;
      desc.src_device = desc.dst_device = &device;
      DEVRT_RETURN_IF_ERROR(backend.copy(desc));
    }
  }
  return Status();
}

// What CUDA and HIP report alike about a device, read once at discovery.
struct GpuDeviceInfo {
  std::string name;
  int max_threads = 0, warp = 0, shared_per_block = 0, clock_khz = 0, processors = 0, registers = 0;
  int l2_bytes = 0, pitch_alignment = 0;
  int max_block[3] = {0, 0, 0}, max_grid[3] = {0, 0, 0};
  std::size_t total_memory = 0;
};

// The attributes a GpuDeviceInfo answers; monostate for the rest (the backend answers those).
inline AttributeValue gpu_attribute(const GpuDeviceInfo& d, Attribute attribute) {
  auto integer = [](auto value) { return AttributeValue(static_cast<std::int64_t>(value)); };
  switch (attribute) {
  case Attribute::exist: return AttributeValue(true);
  case Attribute::max_threads_per_block: return integer(d.max_threads);
  case Attribute::warp_size: return integer(d.warp);
  case Attribute::max_shared_memory_per_block: return integer(d.shared_per_block);
  case Attribute::device_name: return AttributeValue(d.name);
  case Attribute::max_clock_rate: return d.clock_khz > 0 ? integer(d.clock_khz) : AttributeValue();
  case Attribute::multi_processor_count: return integer(d.processors);
  case Attribute::max_thread_dimensions: return AttributeValue(Dim3{d.max_block[0], d.max_block[1], d.max_block[2]});
  case Attribute::max_registers_per_block: return integer(d.registers);
  case Attribute::l2_cache_size_bytes: return integer(d.l2_bytes);
  case Attribute::total_global_memory: return integer(d.total_memory);
  case Attribute::image_pitch_alignment: return integer(d.pitch_alignment);
  case Attribute::buffer_offset_alignment: return integer(1); // device pointers: any offset
  default: return AttributeValue();
  }
}

// The target attributes CUDA and ROCm share (TVM's names).
inline void set_gpu_target_limits(const GpuDeviceInfo& d, Target& target) {
  target.set("device_name", d.name);
  target.set("max_shared_memory_per_block", static_cast<std::int64_t>(d.shared_per_block));
  target.set("max_threads_per_block", static_cast<std::int64_t>(d.max_threads));
  target.set("max_num_threads", static_cast<std::int64_t>(d.max_threads));
  target.set("thread_warp_size", static_cast<std::int64_t>(d.warp));
}

struct GpuLimits {
  std::uint32_t max_block[3] = {0, 0, 0};
  std::uint32_t max_grid[3] = {0, 0, 0};
  std::uint32_t max_threads_per_block = 0; // of this function (registers may lower it)

  // Limits from any integer arrays (block and grid extents per axis) and a thread limit.
  template <class Block, class Grid>
  static GpuLimits from(const Block& max_block, const Grid& max_grid, std::uint64_t max_threads) noexcept {
    GpuLimits limits;
    for (int i = 0; i < 3; ++i) {
      limits.max_block[i] = static_cast<std::uint32_t>(std::min<std::uint64_t>(max_block[i], UINT32_MAX));
      limits.max_grid[i] = static_cast<std::uint32_t>(std::min<std::uint64_t>(max_grid[i], UINT32_MAX));
    }
    limits.max_threads_per_block = static_cast<std::uint32_t>(std::min<std::uint64_t>(max_threads, UINT32_MAX));
    return limits;
  }
  // The device's limits with the function's thread limit (0: the device's).
  static GpuLimits of(const GpuDeviceInfo& d, int function_max_threads) noexcept {
    GpuLimits limits;
    for (int i = 0; i < 3; ++i) {
      limits.max_block[i] = static_cast<std::uint32_t>(d.max_block[i]);
      limits.max_grid[i] = static_cast<std::uint32_t>(d.max_grid[i]);
    }
    limits.max_threads_per_block =
        static_cast<std::uint32_t>(function_max_threads > 0 ? function_max_threads : d.max_threads);
    return limits;
  }
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
    return make_error(ErrorCode::invalid_argument, "a block of ", threads,
                      " threads exceeds this kernel's max_threads_per_block of ", limits.max_threads_per_block,
                      " (the device's, or less for the kernel's resource use)");
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

// ok when `image` (inspected) can run on a CUDA device of compute capability major.minor: a
// cubin for sm_XY needs the same major and minor <= the device's; PTX for compute_XY needs XY <=
// the device's; a fatbin needs one entry that fits. invalid_argument says what was there
// otherwise. Thread-safe.
Status check_cuda_image_fits(const ModuleImageInfo& image, int major, int minor) noexcept;

// ok when `image` (inspected) holds code for the AMD `processor` ("gfx90a"; code objects run only
// on the processor they were built for). Thread-safe.
Status check_rocm_image_fits(const ModuleImageInfo& image, std::string_view processor) noexcept;

// "gfx90a:sramecc+:xnack-" -> 910, "gfx1100" -> 1100: TVM's gcn_arch number (the hex digit of a
// stepping counts as its value). 0 when the name is not gfx-something. Thread-safe.
std::int64_t gcn_arch_number(std::string_view gcn_arch_name) noexcept;

} // namespace devrt::detail

#endif // DEVRT_SRC_BACKEND_SUPPORT_GPU_LAUNCH_HPP
