// SPDX-License-Identifier: Apache-2.0
// The Vulkan backend's decisions about queues and timestamps, as pure functions of what the driver
// reports (tested against recorded vulkaninfo output in test/fixtures/). Not public API.
#ifndef DEVRT_SRC_BACKENDS_VULKAN_VULKAN_TIMING_HPP
#define DEVRT_SRC_BACKENDS_VULKAN_VULKAN_TIMING_HPP

#include <vulkan/vulkan_core.h>

#include <cmath>
#include <cstdint>
#include <span>

namespace devrt::vulkan {

// The queue family devrt submits to: one with compute, preferring one without graphics (a
// dedicated compute engine); UINT32_MAX when none computes.
inline std::uint32_t compute_family_of(std::span<const VkQueueFamilyProperties> families) noexcept {
  std::uint32_t chosen = UINT32_MAX;
  for (std::uint32_t i = 0; i < families.size(); ++i) {
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) == 0) continue;
    if (chosen == UINT32_MAX || (families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) == 0) chosen = i;
  }
  return chosen;
}

// Nanoseconds from timestamp `from` to `to` of a queue family with `valid_bits` (1 to 64) and a
// device with `period_ns` per tick. Below 64 bits the counter wraps, so the difference is taken
// modulo its range (an end before the start then reads as a long interval); with 64 bits it is
// signed.
inline std::int64_t timestamp_interval_ns(std::uint64_t from, std::uint64_t to, std::uint32_t valid_bits,
                                          float period_ns) noexcept {
  double ticks = 0;
  if (valid_bits >= 64) {
    ticks = static_cast<double>(static_cast<std::int64_t>(to - from));
  } else {
    const std::uint64_t mask = (std::uint64_t{1} << valid_bits) - 1;
    ticks = static_cast<double>((to - from) & mask);
  }
  return static_cast<std::int64_t>(std::llround(ticks * static_cast<double>(period_ns)));
}

} // namespace devrt::vulkan

#endif // DEVRT_SRC_BACKENDS_VULKAN_VULKAN_TIMING_HPP
