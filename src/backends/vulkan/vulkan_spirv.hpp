// SPDX-License-Identifier: Apache-2.0
// What devrt needs to know about a SPIR-V compute module, read from its words: entry points, the
// storage buffers of descriptor set 0, the push-constant block's scalar members and how the
// workgroup size is set. Not public API; fuzzed by test/fuzz/spirv_reflect_fuzz.cpp, and every
// Vulkan kernel of the conformance suite (test/conformance/kernel_test.cpp) goes through it.
#ifndef DEVRT_SRC_BACKENDS_VULKAN_VULKAN_SPIRV_HPP
#define DEVRT_SRC_BACKENDS_VULKAN_VULKAN_SPIRV_HPP

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <devrt/status.hpp>

namespace devrt::vulkan {

struct SpirvEntryPoint {
  std::string name;
  std::uint32_t local_size[3] = {1, 1, 1}; // from LocalSize (or the WorkgroupSize built-in)
};

struct SpirvPushMember {
  std::uint32_t offset = 0;
  std::uint8_t code = 0; // DLPack type code
  std::uint8_t bits = 0;
};

struct SpirvModuleInfo {
  std::vector<SpirvEntryPoint> entry_points;   // GLCompute ones only
  std::vector<std::uint32_t> storage_bindings; // set 0, ascending
  std::vector<SpirvPushMember> push_members;   // in member order
  std::uint32_t push_constant_bytes = 0;
  // Scalars in a uniform buffer instead (TVM's form past its 128-byte push-constant budget): a
  // Block-decorated uniform struct of scalars in set 0 at `uniform_binding`, its members in order.
  bool has_uniform_block = false;
  std::uint32_t uniform_binding = 0;
  std::vector<SpirvPushMember> uniform_members;
  std::uint32_t uniform_bytes = 0;
  // Specialisation constant ids sizing the workgroup (local_size_x_id ...); -1 where fixed.
  std::int32_t local_size_spec_id[3] = {-1, -1, -1};
};

// Validates the header (magic, version, word count) and reflects the module. invalid_argument
// with the reason for malformed words; unsupported for resources devrt cannot bind (uniform
// buffers other than one block of scalars, images, other descriptor sets, non-scalar push
// constants, scalars both pushed and in a uniform block). Thread-safe.
Result<SpirvModuleInfo> reflect_spirv(std::span<const std::uint32_t> words) noexcept;

} // namespace devrt::vulkan

#endif // DEVRT_SRC_BACKENDS_VULKAN_VULKAN_SPIRV_HPP
