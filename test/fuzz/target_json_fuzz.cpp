// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: Target::from_json over arbitrary bytes. Whatever parses must serialise and
// parse back to an equal target, and serialising that must give the same text.
#include <devrt/target.hpp>

#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  devrt::Result<devrt::Target> target = devrt::Target::from_json(text);
  if (!target.ok()) {
    if (target.status().code() != devrt::ErrorCode::invalid_argument) __builtin_trap();
    if (target.status().message().find("target JSON: ") != 0) __builtin_trap();
    return 0;
  }
  std::string json = target->to_json();
  devrt::Result<devrt::Target> again = devrt::Target::from_json(json);
  if (!again.ok() || !(*again == *target) || again->to_json() != json) __builtin_trap();
  static_cast<void>(target->to_string());
  return 0;
}
