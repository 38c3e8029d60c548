// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the Vulkan backend's SPIR-V reflection (src/backends/vulkan/vulkan_spirv.cpp)
// and its Pow rewrite (vulkan_spirv_pow.cpp) over arbitrary words. A refusal is invalid_argument or
// unsupported with a reason; what is accepted is consistent (no fixed workgroup extent of 0,
// bindings ascending and distinct, push members inside the push block); a module the rewrite
// changes keeps its header (its bound never lower) and is whole instructions.
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/vulkan/vulkan_spirv.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::uint32_t> words(size / 4);
  if (!words.empty()) std::memcpy(words.data(), data, words.size() * 4);
  devrt::Result<devrt::vulkan::SpirvModuleInfo> info = devrt::vulkan::reflect_spirv(words);
  if (!info.ok()) {
    devrt::ErrorCode code = info.status().code();
    if (code != devrt::ErrorCode::invalid_argument && code != devrt::ErrorCode::unsupported) broken("error code");
    if (info.status().message().empty()) broken("a reason");
    return 0;
  }
  for (const devrt::vulkan::SpirvEntryPoint& entry : info->entry_points) {
    for (int d = 0; d < 3; ++d) {
      if (entry.local_size[d] == 0 && info->local_size_spec_id[d] < 0) broken("a non-zero fixed local size");
    }
  }
  for (std::size_t i = 1; i < info->storage_bindings.size(); ++i) {
    if (info->storage_bindings[i - 1] >= info->storage_bindings[i]) broken("bindings ascending and distinct");
  }
  for (const devrt::vulkan::SpirvPushMember& member : info->push_members) {
    if (member.bits == 0 || member.offset + member.bits / 8u > info->push_constant_bytes) {
      broken("push members inside the push block");
    }
  }
  devrt::Result<devrt::vulkan::SpirvPowRewrite> rewrite = devrt::vulkan::define_pow(words);
  if (!rewrite.ok()) {
    if (rewrite.status().code() != devrt::ErrorCode::unsupported)
      broken("only the id bound refuses a reflected module");
    return 0;
  }
  if (rewrite->rewritten == 0) {
    if (!rewrite->words.empty()) broken("no words when nothing was rewritten");
    return 0;
  }
  const std::vector<std::uint32_t>& out = rewrite->words;
  if (out.size() < 5 || out[0] != words[0] || out[1] != words[1] || out[3] < words[3]) {
    broken("a rewritten module keeps its header and never lowers its bound");
  }
  // Whole instructions to the last word. (Reflecting it again need not agree: a module whose ids
  // pass its own bound, which the rewrite cannot see, may have them taken by the new ones. The
  // unit test spirv-pow checks that on valid modules.)
  std::size_t i = 5;
  while (i < out.size() && (out[i] >> 16) != 0) i += out[i] >> 16;
  if (i != out.size()) broken("a rewritten module is whole instructions");
  return 0;
}
