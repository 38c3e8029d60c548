// SPDX-License-Identifier: Apache-2.0
// What a backend table's thunks hand back across the C ABI: attribute values, target JSON and
// module bytes, into caller-provided storage (devrt/backend/backend.hpp).
#include <devrt/backend/backend.hpp>

#include <cstring>
#include <string_view>
#include <variant>

namespace devrt::detail {

void export_attribute(const AttributeValue& value, devrt_attribute_value* out) noexcept {
  out->type = DEVRT_VALUE_NONE;
  out->ints[0] = out->ints[1] = out->ints[2] = 0;
  out->string[0] = '\0';
  if (const bool* b = std::get_if<bool>(&value)) {
    out->type = DEVRT_VALUE_BOOL;
    out->ints[0] = *b ? 1 : 0;
  } else if (const std::int64_t* i = std::get_if<std::int64_t>(&value)) {
    out->type = DEVRT_VALUE_INT;
    out->ints[0] = *i;
  } else if (const std::string* s = std::get_if<std::string>(&value)) {
    out->type = DEVRT_VALUE_STRING; // as export_attribute_text, inline: a firmware image's bytes
    std::size_t n = s->size() < DEVRT_ATTRIBUTE_STRING_CAPACITY ? s->size() : DEVRT_ATTRIBUTE_STRING_CAPACITY - 1;
    s->copy(out->string, n);
    out->string[n] = '\0';
  } else if (const Dim3* d = std::get_if<Dim3>(&value)) {
    out->type = DEVRT_VALUE_DIM3;
    out->ints[0] = d->x;
    out->ints[1] = d->y;
    out->ints[2] = d->z;
  }
}

void export_attribute_text(std::string_view text, devrt_attribute_value* out) noexcept {
  out->type = DEVRT_VALUE_STRING;
  out->ints[0] = out->ints[1] = out->ints[2] = 0;
  std::size_t n = text.size() < DEVRT_ATTRIBUTE_STRING_CAPACITY ? text.size() : DEVRT_ATTRIBUTE_STRING_CAPACITY - 1;
  if (n > 0) std::memcpy(out->string, text.data(), n);
  out->string[n] = '\0';
}

std::int32_t export_json(std::string_view json, char* out, std::size_t capacity, std::size_t* needed,
                         devrt_error* err) noexcept {
  *needed = json.size() + 1;
  if (out == nullptr || capacity < json.size() + 1) {
    return export_status(
        make_error(ErrorCode::out_of_range, "target JSON needs ", json.size() + 1, " bytes, ", capacity, " given"),
        err);
  }
  json.copy(out, json.size());
  out[json.size()] = '\0';
  return 0;
}

std::int32_t export_bytes(std::string_view bytes, void* out, std::size_t capacity, std::size_t* needed,
                          devrt_error* err) noexcept {
  *needed = bytes.size();
  if (out == nullptr || capacity < bytes.size()) {
    return export_status(
        make_error(ErrorCode::out_of_range, "module binary needs ", bytes.size(), " bytes, ", capacity, " given"), err);
  }
  bytes.copy(static_cast<char*>(out), bytes.size());
  return 0;
}

} // namespace devrt::detail
