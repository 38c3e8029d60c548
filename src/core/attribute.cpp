// SPDX-License-Identifier: Apache-2.0
#include <devrt/attribute.hpp>
#include <devrt/attribute_value.hpp>
#include <devrt/backend.hpp>

#include <cstring>

#include <array>

namespace devrt {
namespace {

constexpr std::array<std::string_view, kAttributeCount> kAttributeNames{
    "exist",
    "max_threads_per_block",
    "warp_size",
    "max_shared_memory_per_block",
    "compute_version",
    "device_name",
    "max_clock_rate",
    "multi_processor_count",
    "max_thread_dimensions",
    "max_registers_per_block",
    "gcn_arch",
    "api_version",
    "driver_version",
    "l2_cache_size_bytes",
    "total_global_memory",
    "available_global_memory",
    "image_pitch_alignment",
    "buffer_offset_alignment",
};

} // namespace

std::string_view attribute_name(Attribute attribute) noexcept {
  auto index = static_cast<std::int32_t>(attribute);
  if (index < 0 || index >= kAttributeCount) return {};
  return kAttributeNames[static_cast<std::size_t>(index)];
}

AttributeType attribute_type(Attribute attribute) noexcept {
  switch (attribute) {
  case Attribute::exist: return AttributeType::boolean;
  case Attribute::compute_version:
  case Attribute::device_name:
  case Attribute::driver_version: return AttributeType::string;
  case Attribute::max_thread_dimensions: return AttributeType::dim3;
  default: return AttributeType::integer;
  }
}

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
    out->type = DEVRT_VALUE_STRING;
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

} // namespace detail
} // namespace devrt
