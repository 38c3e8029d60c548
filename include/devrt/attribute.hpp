// SPDX-License-Identifier: Apache-2.0
// Device attributes: the seventeen kinds TVM's DeviceAPI answers and devrt's own
// buffer_offset_alignment, each with one value type.
#ifndef DEVRT_ATTRIBUTE_HPP
#define DEVRT_ATTRIBUTE_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <devrt/device.hpp>
#include <devrt/status.hpp>

namespace devrt {

// Numeric values are part of the backend C ABI (devrt/backend/backend_abi.h); append only.
enum class Attribute : std::int32_t {
  exist = 0,                       // bool
  max_threads_per_block = 1,       // int64
  warp_size = 2,                   // int64
  max_shared_memory_per_block = 3, // int64, bytes
  compute_version = 4,             // string, e.g. "9.0"
  device_name = 5,                 // string
  max_clock_rate = 6,              // int64, kHz
  multi_processor_count = 7,       // int64
  max_thread_dimensions = 8,       // Dim3
  max_registers_per_block = 9,     // int64
  gcn_arch = 10,                   // int64, e.g. 906 for gfx906
  api_version = 11,                // int64
  driver_version = 12,             // string
  l2_cache_size_bytes = 13,        // int64, bytes
  total_global_memory = 14,        // int64, bytes
  available_global_memory = 15,    // int64, bytes
  image_pitch_alignment = 16,      // int64, bytes
  // int64, bytes: a buffer kernel argument's byte offset must be a multiple of this (OpenCL's
  // CL_DEVICE_MEM_BASE_ADDR_ALIGN, Vulkan's minStorageBufferOffsetAlignment); 1 where device
  // memory is addressed by pointers and any offset works.
  buffer_offset_alignment = 17,
};

inline constexpr std::int32_t kAttributeCount = 18;

// Three extents (x, y, z), as in max_thread_dimensions.
struct Dim3 {
  std::int64_t x = 0, y = 0, z = 0;
  friend constexpr bool operator==(const Dim3&, const Dim3&) = default;
};

enum class AttributeType : std::int32_t { boolean, integer, string, dim3 };

// The C++ type of each attribute, for the typed get_attribute<A>().
template <Attribute A>
struct AttributeTraits {
  using type = std::int64_t;
  static constexpr AttributeType kind = AttributeType::integer;
};
template <>
struct AttributeTraits<Attribute::exist> {
  using type = bool;
  static constexpr AttributeType kind = AttributeType::boolean;
};
template <>
struct AttributeTraits<Attribute::compute_version> {
  using type = std::string;
  static constexpr AttributeType kind = AttributeType::string;
};
template <>
struct AttributeTraits<Attribute::device_name> {
  using type = std::string;
  static constexpr AttributeType kind = AttributeType::string;
};
template <>
struct AttributeTraits<Attribute::driver_version> {
  using type = std::string;
  static constexpr AttributeType kind = AttributeType::string;
};
template <>
struct AttributeTraits<Attribute::max_thread_dimensions> {
  using type = Dim3;
  static constexpr AttributeType kind = AttributeType::dim3;
};

template <Attribute A>
using attribute_t = typename AttributeTraits<A>::type;

// The value type of an attribute chosen at run time. Thread-safe.
AttributeType attribute_type(Attribute attribute) noexcept;
// Stable snake_case name ("max_threads_per_block"), "" for an out-of-range value. Thread-safe.
std::string_view attribute_name(Attribute attribute) noexcept;

// Number of devices of a kind; 0 when the backend is missing or unavailable. Thread-safe.
std::int32_t device_count(DeviceKind kind) noexcept;

// True when the backend is registered and available and the device exists. Never fails.
bool device_exists(Device device) noexcept;

namespace detail {
// The attribute into *out, left empty when the backend does not report it or reports another
// type. One per value type, so that the typed get_attribute<A>() needs no std::variant.
Status read_attribute(Device device, Attribute attribute, std::optional<bool>* out) noexcept;
Status read_attribute(Device device, Attribute attribute, std::optional<std::int64_t>* out) noexcept;
Status read_attribute(Device device, Attribute attribute, std::optional<std::string>* out) noexcept;
Status read_attribute(Device device, Attribute attribute, std::optional<Dim3>* out) noexcept;
} // namespace detail

// One attribute with its static type: std::nullopt when the backend does not report it (not an
// error). `exist` never fails. The run-time form, get_attribute(device, attribute), is in
// <devrt/backend/attribute_value.hpp>. Thread-safe.
template <Attribute A>
Result<std::optional<attribute_t<A>>> get_attribute(Device device) noexcept {
  if constexpr (A == Attribute::exist) {
    return std::optional<bool>(device_exists(device));
  } else {
    std::optional<attribute_t<A>> value;
    DEVRT_RETURN_IF_ERROR(detail::read_attribute(device, A, &value));
    return value;
  }
}

} // namespace devrt

#endif // DEVRT_ATTRIBUTE_HPP
