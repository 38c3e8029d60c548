// SPDX-License-Identifier: Apache-2.0
// Typed attribute reads (get_attribute<A>) over the run-time form.
#include <devrt/attribute.hpp>
#include <devrt/backend/attribute_value.hpp>

#include <optional>
#include <string>
#include <variant>

namespace devrt {
namespace detail {
namespace {

template <class T>
Status read_typed_attribute(Device device, Attribute attribute, std::optional<T>* out) noexcept {
  *out = std::nullopt;
  Result<AttributeValue> value = get_attribute(device, attribute);
  if (!value.ok()) return std::move(value).status();
  if (const T* typed = std::get_if<T>(&*value)) *out = *typed;
  return {};
}

} // namespace

Status read_attribute(Device device, Attribute attribute, std::optional<bool>* out) noexcept {
  return read_typed_attribute(device, attribute, out);
}
Status read_attribute(Device device, Attribute attribute, std::optional<std::int64_t>* out) noexcept {
  return read_typed_attribute(device, attribute, out);
}
Status read_attribute(Device device, Attribute attribute, std::optional<std::string>* out) noexcept {
  return read_typed_attribute(device, attribute, out);
}
Status read_attribute(Device device, Attribute attribute, std::optional<Dim3>* out) noexcept {
  return read_typed_attribute(device, attribute, out);
}

} // namespace detail
} // namespace devrt
