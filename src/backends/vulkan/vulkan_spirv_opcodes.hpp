// SPDX-License-Identifier: Apache-2.0
// The SPIR-V opcodes devrt's SPIR-V reader and rewriter use, from the SPIR-V specification, and
// the GLSL.std.450 instructions the rewriter writes. Not public API.
#ifndef DEVRT_SRC_BACKENDS_VULKAN_VULKAN_SPIRV_OPCODES_HPP
#define DEVRT_SRC_BACKENDS_VULKAN_VULKAN_SPIRV_OPCODES_HPP

#include <cstdint>

namespace devrt::vulkan::spirv {

enum Op : std::uint32_t {
  kOpExtInstImport = 11,
  kOpExtInst = 12,
  kOpEntryPoint = 15,
  kOpExecutionMode = 16,
  kOpCapability = 17,
  kOpTypeBool = 20,
  kOpTypeInt = 21,
  kOpTypeFloat = 22,
  kOpTypeVector = 23,
  kOpTypeStruct = 30,
  kOpTypePointer = 32,
  kOpConstant = 43,
  kOpConstantComposite = 44,
  kOpSpecConstant = 50,
  kOpSpecConstantComposite = 51,
  kOpFunction = 54,
  kOpVariable = 59,
  kOpDecorate = 71,
  kOpMemberDecorate = 72,
  kOpCopyObject = 83,
  kOpFConvert = 115,
  kOpFNegate = 127,
  kOpFMul = 133,
  kOpIsInf = 157,
  kOpLogicalOr = 166,
  kOpLogicalAnd = 167,
  kOpLogicalNot = 168,
  kOpSelect = 169,
  kOpFOrdEqual = 180,
  kOpFOrdNotEqual = 182,
  kOpFOrdLessThan = 184,
};

enum GlslInstruction : std::uint32_t { kGlslTrunc = 3, kGlslFAbs = 4, kGlslPow = 26 };

} // namespace devrt::vulkan::spirv

#endif // DEVRT_SRC_BACKENDS_VULKAN_VULKAN_SPIRV_OPCODES_HPP
