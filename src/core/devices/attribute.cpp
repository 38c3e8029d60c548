// SPDX-License-Identifier: Apache-2.0
// Device attributes' names and value types (devrt/attribute.hpp), one table indexed by the
// attribute.
#include <devrt/attribute.hpp>

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

} // namespace devrt
