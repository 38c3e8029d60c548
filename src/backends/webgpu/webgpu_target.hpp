// SPDX-License-Identifier: Apache-2.0
// The WebGPU device as TVM's `webgpu` target, from what the adapter reports: a pure function,
// tested against recorded adapters (test/fixtures/webgpu-*/adapter.txt), and the record's format.
// Not public API.
#ifndef DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_TARGET_HPP
#define DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_TARGET_HPP

#include <cstdint>
#include <string>
#include <string_view>

#include <devrt/status.hpp>
#include <devrt/target.hpp>

namespace devrt::webgpu {

// What target detection reads of an adapter, named as webgpu.h names it. A plain value.
struct AdapterFacts {
  std::string device;  // WGPUAdapterInfo::device
  std::string backend; // "Vulkan", "OpenGL ES", ...
  std::uint32_t max_compute_invocations_per_workgroup = 0;
  std::uint32_t max_compute_workgroup_storage_size = 0;
  std::uint32_t max_compute_workgroup_size[3] = {0, 0, 0};
  std::uint64_t max_storage_buffer_binding_size = 0;
  std::uint32_t max_storage_buffers_per_shader_stage = 0;
  std::uint32_t subgroup_min_size = 0; // 0: not reported
  bool subgroups = false;              // the "subgroups" feature
  bool shader_f16 = false;             // the "shader-f16" feature
};

// TVM's `webgpu` target for the adapter: keys webgpu and gpu, max_num_threads,
// max_shared_memory_per_block, thread_warp_size (the smallest subgroup with the subgroups feature, else 1),
// supports_subgroups, supports_float16 (shader-f16), the block extents, and devrt's own
// storage-buffer limits, device_name and backend.
Target webgpu_target(const AdapterFacts& facts);

// The record of an adapter: one "name: value" line per field (webgpu.h's names; features as
// "features: shader-f16 subgroups"), '#' lines are comments.
std::string adapter_record(const AdapterFacts& facts);
// The facts a record holds; invalid_argument naming the line that is not one, or a field missing.
Result<AdapterFacts> parse_adapter_record(std::string_view record);

} // namespace devrt::webgpu

#endif // DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_TARGET_HPP
