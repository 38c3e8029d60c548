// SPDX-License-Identifier: Apache-2.0
#include "vulkan_memory.hpp"

#include <bit>

namespace devrt::vulkan {
namespace {

struct Preference {
  VkMemoryPropertyFlags required = 0;
  VkMemoryPropertyFlags preferred = 0;
  VkMemoryPropertyFlags unwanted = 0;
};

// Types devrt never uses: lazily allocated (transient attachments) and protected memory.
constexpr VkMemoryPropertyFlags kNever = VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT | VK_MEMORY_PROPERTY_PROTECTED_BIT;

Preference preference_for(MemoryUsage usage, bool unified) noexcept {
  constexpr VkMemoryPropertyFlags local = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  constexpr VkMemoryPropertyFlags visible = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
  constexpr VkMemoryPropertyFlags coherent = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  constexpr VkMemoryPropertyFlags cached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  switch (usage) {
  case MemoryUsage::device:
    // Unified: the mappable cached type, so host copies can be memcpy. Discrete: video memory
    // outside the BAR window (host-visible device-local memory is a scarce or slow aperture).
    if (unified) return {0, local | visible | coherent | cached, 0};
    return {0, local, visible};
  case MemoryUsage::upload:
    // Host writes stream sequentially: coherent system memory, cached or write-combined alike;
    // the BAR window is left to the device's own buffers.
    return {visible, coherent, unified ? 0 : local};
  case MemoryUsage::readback:
    // Host reads must hit the CPU's caches: never uncached or write-combined memory if a cached
    // type exists.
    return {visible, cached | coherent, unified ? 0 : local};
  }
  return {};
}

} // namespace

bool is_unified_memory(const VkPhysicalDeviceMemoryProperties& memory) noexcept {
  if (memory.memoryHeapCount == 0) return false;
  for (std::uint32_t i = 0; i < memory.memoryHeapCount; ++i) {
    if ((memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) == 0) return false;
  }
  return true;
}

std::uint32_t choose_memory_type(const VkPhysicalDeviceMemoryProperties& memory, std::uint32_t allowed_types,
                                 MemoryUsage usage) noexcept {
  const Preference want = preference_for(usage, is_unified_memory(memory));
  // The cached bit outweighs every other preference for read-back: an uncached read is 100x.
  const int cached_weight = usage == MemoryUsage::readback ? 8 : 1;
  std::uint32_t best = kNoMemoryType;
  int best_cost = 0;
  for (std::uint32_t i = 0; i < memory.memoryTypeCount && i < 32; ++i) {
    if ((allowed_types & (1u << i)) == 0) continue;
    const VkMemoryPropertyFlags flags = memory.memoryTypes[i].propertyFlags;
    if ((flags & want.required) != want.required || (flags & kNever) != 0) continue;
    const VkMemoryPropertyFlags missing = want.preferred & ~flags;
    int cost = std::popcount(missing & ~VkMemoryPropertyFlags{VK_MEMORY_PROPERTY_HOST_CACHED_BIT}) +
               std::popcount(flags & want.unwanted);
    if ((missing & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) != 0) cost += cached_weight;
    if (flags == 0) cost += 1; // a type with no properties at all: only when nothing else fits
    if (best == kNoMemoryType || cost < best_cost) {
      best = i;
      best_cost = cost;
    }
  }
  return best;
}

MemoryPlan plan_memory(const VkPhysicalDeviceMemoryProperties& memory, bool allow_mapping) noexcept {
  MemoryPlan plan;
  plan.device_type = choose_memory_type(memory, ~0u, MemoryUsage::device);
  plan.upload_type = choose_memory_type(memory, ~0u, MemoryUsage::upload);
  plan.readback_type = choose_memory_type(memory, ~0u, MemoryUsage::readback);
  if (plan.device_type != kNoMemoryType) {
    const VkMemoryPropertyFlags flags = memory.memoryTypes[plan.device_type].propertyFlags;
    constexpr VkMemoryPropertyFlags mappable = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    plan.map_buffers = allow_mapping && is_unified_memory(memory) && (flags & mappable) == mappable;
  }
  return plan;
}

} // namespace devrt::vulkan
