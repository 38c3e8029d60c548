// SPDX-License-Identifier: Apache-2.0
// A JSON document as devrt::tvm reads MLC's files (ndarray-cache.json, a model's `_metadata`):
// RFC 8259 values, numbers kept as int64 where they are integers and as double otherwise, nesting
// at most 64 deep. Not public API.
#ifndef DEVRT_SRC_TVM_TVM_JSON_HPP
#define DEVRT_SRC_TVM_TVM_JSON_HPP

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <devrt/status.hpp>

namespace devrt::tvm::detail {

struct JsonField;

struct Json {
  enum class Kind : std::uint8_t { null, boolean, integer, real, string, array, object } kind = Kind::null;
  bool boolean = false;
  std::int64_t integer = 0;
  double real = 0;
  std::string text;
  std::vector<Json> items;       // an array's
  std::vector<JsonField> fields; // an object's, in the document's order

  // The field `key` of an object, or nullptr.
  const Json* find(std::string_view key) const noexcept;
};

struct JsonField {
  std::string key;
  Json value;
};

inline const Json* Json::find(std::string_view key) const noexcept {
  for (const JsonField& field : fields) {
    if (field.key == key) return &field.value;
  }
  return nullptr;
}

// Parses `text` whole; errors are invalid_argument opening with `prefix` and saying where.
Result<Json> parse_json(std::string_view text, const char* prefix) noexcept;

} // namespace devrt::tvm::detail

#endif // DEVRT_SRC_TVM_TVM_JSON_HPP
