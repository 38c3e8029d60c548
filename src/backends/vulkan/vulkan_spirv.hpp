// SPDX-License-Identifier: Apache-2.0
// What devrt needs to know about a SPIR-V compute module, read from its words: entry points, the
// storage buffers of descriptor set 0, the push-constant block's scalar members and how the
// workgroup size is set; and the rewrite that defines Pow of a negative base. Not public API;
// fuzzed by test/fuzz/spirv_reflect_fuzz.cpp, and every Vulkan kernel of the conformance suite
// (test/conformance/kernel_test.cpp) goes through both.
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

// A module with its GLSL.std.450 Pow instructions defined (define_pow).
struct SpirvPowRewrite {
  std::vector<std::uint32_t> words; // the rewritten module; empty when nothing was rewritten
  std::uint32_t rewritten = 0;      // the Pow instructions replaced
};

// Defines GLSL.std.450 Pow where SPIR-V leaves it undefined (a negative base; a zero base with an
// exponent <= 0), on 16- and 32-bit floats, scalars and vectors: each Pow becomes C's pow, as
// MLIR's MathToSPIRV lowers powf: pow(|x|, y), negated for x < 0 and an odd integer y, NaN for a
// finite x < 0 and a non-integer y, 1 for y == 0 or |x| == 1, +inf or 0 for a zero base (-0 is
// taken as +0). An exponent that is always 1, 2, 3 or 4 (a constant, or a constant converted)
// becomes multiplications instead. New ids start at the old bound; each Pow's result id, and so
// its decorations, stay; the types and constants it needs are declared before the first function
// (existing bool types reused), and no capability is added. The words must have passed
// reflect_spirv; invalid_argument for a broken instruction stream, unsupported when the new ids
// would pass SPIR-V's bound of 0x3fffff. Thread-safe.
Result<SpirvPowRewrite> define_pow(std::span<const std::uint32_t> words) noexcept;

} // namespace devrt::vulkan

#endif // DEVRT_SRC_BACKENDS_VULKAN_VULKAN_SPIRV_HPP
