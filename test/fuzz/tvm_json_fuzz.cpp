// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the JSON reader devrt::tvm reads MLC's files with (ndarray-cache.json, a
// model's _metadata), over arbitrary bytes. A refusal is invalid_argument with a position; an
// accepted document holds no more strings' bytes than the input had.
#include <cstdint>
#include <string_view>

#include "fuzz_check.hpp"
#include "tvm/tvm_json.hpp"

namespace {

using devrt::tvm::detail::Json;

std::size_t text_bytes(const Json& json, int depth) {
  if (depth > 65) broken("nesting bounded");
  std::size_t n = json.text.size();
  for (const Json& item : json.items) n += text_bytes(item, depth + 1);
  for (const devrt::tvm::detail::JsonField& field : json.fields)
    n += field.key.size() + text_bytes(field.value, depth + 1);
  return n;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  devrt::Result<Json> json = devrt::tvm::detail::parse_json(text, "fuzz");
  if (!json.ok()) {
    if (json.status().code() != devrt::ErrorCode::invalid_argument) broken("error code");
    if (json.status().message().find("byte") == std::string_view::npos) broken("a position");
    return 0;
  }
  if (text_bytes(*json, 0) > size) broken("no more text than the input");
  return 0;
}
