// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: inspect_module_image over arbitrary bytes (cubin, fatbin, PTX, AMD code
// objects and offload bundles, SPIR-V, host ELF). A refusal is invalid_argument with a reason; an
// accepted image names architectures of non-empty printable text.
#include <devrt/backend/module_image.hpp>

#include <cstdint>
#include <span>

#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::byte> image(reinterpret_cast<const std::byte*>(data), size);
  devrt::Result<devrt::ModuleImageInfo> info = devrt::inspect_module_image(image);
  if (!info.ok()) {
    if (info.status().code() != devrt::ErrorCode::invalid_argument) broken("error code");
    if (info.status().message().empty()) broken("a reason");
    return 0;
  }
  for (const std::string& architecture : info->architectures) {
    if (architecture.empty()) broken("non-empty architectures");
    for (char c : architecture) {
      if (c < 0x20 || c > 0x7e) broken("printable architectures");
    }
  }
  static_cast<void>(devrt::module_format_name(info->format));
  return 0;
}
