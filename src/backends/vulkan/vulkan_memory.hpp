// SPDX-License-Identifier: Apache-2.0
// Choosing Vulkan memory types by purpose, as pure functions of VkPhysicalDeviceMemoryProperties
// (tested against real drivers' tables in test/backends/vulkan/memory_test.cpp).
//
// "Device-local and host-visible" does not mean unified memory: on a discrete GPU with resizable
// BAR (the H100's type 4) it is a PCIe window over video memory, write-combined and uncached for
// the CPU, where host reads run at tens of MB/s. So buffers live in plain device-local memory,
// host reads go through host-cached staging memory, and only unified-memory devices (every heap
// device-local: lavapipe, integrated GPUs) map buffers directly, and then only cached ones.
// The usage classes follow VulkanMemoryAllocator's GPU_ONLY, CPU_TO_GPU and GPU_TO_CPU.
#ifndef DEVRT_SRC_BACKENDS_VULKAN_VULKAN_MEMORY_HPP
#define DEVRT_SRC_BACKENDS_VULKAN_VULKAN_MEMORY_HPP

#include <cstdint>

#include <vulkan/vulkan.h>

namespace devrt::vulkan {

inline constexpr std::uint32_t kNoMemoryType = UINT32_MAX;

enum class MemoryUsage {
  device,   // buffers kernels read and write (GPU_ONLY)
  upload,   // staging the host writes and the device reads (CPU_TO_GPU)
  readback, // staging the device writes and the host reads (GPU_TO_CPU): host-cached if any
};

// True when every heap is device-local: the device uses the host's memory (or the host sees all
// of the device's), so a mapped buffer is as fast for the host as for the device.
bool is_unified_memory(const VkPhysicalDeviceMemoryProperties& memory) noexcept;

// The best memory type for `usage` among `allowed_types` (a VkMemoryRequirements bit mask), or
// kNoMemoryType. Required flags must all be present; among the rest the type missing the fewest
// preferred flags and carrying the fewest unwanted ones wins, the lowest index on a tie.
std::uint32_t choose_memory_type(const VkPhysicalDeviceMemoryProperties& memory, std::uint32_t allowed_types,
                                 MemoryUsage usage) noexcept;

// What a device uses, decided once when it is opened.
struct MemoryPlan {
  std::uint32_t device_type = kNoMemoryType;
  std::uint32_t upload_type = kNoMemoryType;
  std::uint32_t readback_type = kNoMemoryType;
  // Buffers stay mapped and host copies are memcpy: unified memory whose device type is
  // host-visible and host-cached, unless mapping is disallowed (DEVRT_VULKAN_FORCE_STAGING=1).
  bool map_buffers = false;
};

MemoryPlan plan_memory(const VkPhysicalDeviceMemoryProperties& memory, bool allow_mapping) noexcept;

} // namespace devrt::vulkan

#endif // DEVRT_SRC_BACKENDS_VULKAN_VULKAN_MEMORY_HPP
