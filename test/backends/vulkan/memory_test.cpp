// SPDX-License-Identifier: Apache-2.0
// Vulkan memory-type choice against real drivers' memory tables (vulkaninfo dumps in
// test/fixtures/: an NVIDIA H100 with resizable BAR, and lavapipe) and two described layouts.
#include "backends/vulkan/vulkan_memory.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

using devrt::vulkan::choose_memory_type;
using devrt::vulkan::is_unified_memory;
using devrt::vulkan::MemoryPlan;
using devrt::vulkan::MemoryUsage;
using devrt::vulkan::plan_memory;

namespace {

constexpr VkMemoryPropertyFlags kLocal = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
constexpr VkMemoryPropertyFlags kVisible = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
constexpr VkMemoryPropertyFlags kCoherent = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
constexpr VkMemoryPropertyFlags kCached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;

// The VkPhysicalDeviceMemoryProperties section of `vulkaninfo` text output.
VkPhysicalDeviceMemoryProperties parse_vulkaninfo(const std::string& path) {
  std::ifstream file(path);
  REQUIRE(file.good());
  VkPhysicalDeviceMemoryProperties memory{};
  std::string line;
  bool in_section = false;
  enum { none, heap, type } current = none;
  std::uint32_t index = 0;
  while (std::getline(file, line)) {
    if (line.rfind("VkPhysicalDeviceMemoryProperties:", 0) == 0) {
      in_section = true;
      continue;
    }
    if (!in_section) continue;
    if (line.rfind("Vk", 0) == 0) break; // the next section
    const std::size_t start = line.find_first_not_of('\t');
    if (start == std::string::npos) continue;
    const std::string text = line.substr(start);
    if (text.rfind("memoryHeaps[", 0) == 0) {
      current = heap;
      index = static_cast<std::uint32_t>(std::stoul(text.substr(12)));
      memory.memoryHeapCount = index + 1;
    } else if (text.rfind("memoryTypes[", 0) == 0) {
      current = type;
      index = static_cast<std::uint32_t>(std::stoul(text.substr(12)));
      memory.memoryTypeCount = index + 1;
    } else if (current == heap && text.rfind("size", 0) == 0) {
      memory.memoryHeaps[index].size = std::stoull(text.substr(text.find('=') + 1));
    } else if (current == heap && text == "MEMORY_HEAP_DEVICE_LOCAL_BIT") {
      memory.memoryHeaps[index].flags |= VK_MEMORY_HEAP_DEVICE_LOCAL_BIT;
    } else if (current == type && text.rfind("heapIndex", 0) == 0) {
      memory.memoryTypes[index].heapIndex = static_cast<std::uint32_t>(std::stoul(text.substr(text.find('=') + 1)));
    } else if (current == type && text.rfind("propertyFlags", 0) == 0) {
      memory.memoryTypes[index].propertyFlags =
          static_cast<VkMemoryPropertyFlags>(std::stoul(text.substr(text.find('=') + 1), nullptr, 16));
    }
  }
  REQUIRE(memory.memoryTypeCount > 0);
  REQUIRE(memory.memoryHeapCount > 0);
  return memory;
}

std::string fixture(const char* name) { return std::string(DEVRT_TEST_FIXTURES) + "/" + name + "/vulkaninfo.txt"; }

VkPhysicalDeviceMemoryProperties described(std::initializer_list<VkMemoryHeapFlags> heaps,
                                           std::initializer_list<VkMemoryType> types) {
  VkPhysicalDeviceMemoryProperties memory{};
  for (VkMemoryHeapFlags flags : heaps) memory.memoryHeaps[memory.memoryHeapCount++] = {std::uint64_t{1} << 30, flags};
  for (const VkMemoryType& t : types) memory.memoryTypes[memory.memoryTypeCount++] = t;
  return memory;
}

} // namespace

TEST_CASE("NVIDIA H100: device-local buffers, cached read-back, nothing mapped", "[vulkan][memory]") {
  const VkPhysicalDeviceMemoryProperties h100 = parse_vulkaninfo(fixture("nvidia-h100"));
  // The dump as read: five types over a device-local heap and system RAM; type 4 is the BAR.
  REQUIRE(h100.memoryTypeCount == 5);
  CHECK(h100.memoryTypes[1].propertyFlags == kLocal);
  CHECK(h100.memoryTypes[2].propertyFlags == (kVisible | kCoherent));
  CHECK(h100.memoryTypes[3].propertyFlags == (kVisible | kCoherent | kCached));
  CHECK(h100.memoryTypes[4].propertyFlags == (kLocal | kVisible | kCoherent));
  CHECK_FALSE(is_unified_memory(h100));

  const MemoryPlan plan = plan_memory(h100, true);
  CHECK(plan.device_type == 1);   // video memory, not the BAR window
  CHECK(plan.upload_type == 2);   // coherent system memory
  CHECK(plan.readback_type == 3); // the only host-cached type
  CHECK_FALSE(plan.map_buffers);  // host reads of type 4 run at ~0.03 GB/s

  // Restricted by a resource's memoryTypeBits, the choice stays within them.
  CHECK(choose_memory_type(h100, 1u << 4, MemoryUsage::device) == 4);
  CHECK(choose_memory_type(h100, (1u << 2) | (1u << 4), MemoryUsage::readback) == 2);
  CHECK(choose_memory_type(h100, 1u << 1, MemoryUsage::readback) == devrt::vulkan::kNoMemoryType);
}

TEST_CASE("lavapipe: one cached unified type, buffers mapped", "[vulkan][memory]") {
  const VkPhysicalDeviceMemoryProperties lvp = parse_vulkaninfo(fixture("lavapipe"));
  REQUIRE(lvp.memoryTypeCount == 1);
  CHECK(lvp.memoryTypes[0].propertyFlags == (kLocal | kVisible | kCoherent | kCached));
  CHECK(is_unified_memory(lvp));
  const MemoryPlan plan = plan_memory(lvp, true);
  CHECK(plan.device_type == 0);
  CHECK(plan.upload_type == 0);
  CHECK(plan.readback_type == 0);
  CHECK(plan.map_buffers);
  // DEVRT_VULKAN_FORCE_STAGING=1: the same types, staged.
  CHECK_FALSE(plan_memory(lvp, false).map_buffers);
}

TEST_CASE("an integrated GPU maps its cached device-local type", "[vulkan][memory]") {
  // The shape Intel's and Apple-like integrated GPUs report: one device-local heap.
  const auto memory =
      described({VK_MEMORY_HEAP_DEVICE_LOCAL_BIT},
                {{kLocal, 0}, {kLocal | kVisible | kCoherent, 0}, {kLocal | kVisible | kCoherent | kCached, 0}});
  const MemoryPlan plan = plan_memory(memory, true);
  CHECK(plan.device_type == 2);
  CHECK(plan.map_buffers);
  CHECK(plan.readback_type == 2);
}

TEST_CASE("a unified device without cached memory stages instead of reading uncached memory", "[vulkan][memory]") {
  const auto memory = described({VK_MEMORY_HEAP_DEVICE_LOCAL_BIT}, {{kLocal | kVisible | kCoherent, 0}});
  const MemoryPlan plan = plan_memory(memory, true);
  CHECK(plan.device_type == 0);
  CHECK_FALSE(plan.map_buffers);
}

TEST_CASE("a discrete GPU with a 256 MiB BAR heap keeps buffers out of it", "[vulkan][memory]") {
  // AMD's classic layout: VRAM, system RAM, and a small device-local host-visible heap.
  const auto memory = described({VK_MEMORY_HEAP_DEVICE_LOCAL_BIT, 0, VK_MEMORY_HEAP_DEVICE_LOCAL_BIT},
                                {{kLocal, 0},
                                 {kVisible | kCoherent, 1},
                                 {kLocal | kVisible | kCoherent, 2},
                                 {kVisible | kCoherent | kCached, 1}});
  const MemoryPlan plan = plan_memory(memory, true);
  CHECK(plan.device_type == 0);
  CHECK(plan.upload_type == 1);
  CHECK(plan.readback_type == 3);
  CHECK_FALSE(plan.map_buffers);
}

TEST_CASE("lazily allocated and protected types are never chosen", "[vulkan][memory]") {
  const auto memory =
      described({VK_MEMORY_HEAP_DEVICE_LOCAL_BIT, 0}, {{kLocal | VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT, 0},
                                                       {kLocal | VK_MEMORY_PROPERTY_PROTECTED_BIT, 0},
                                                       {kLocal, 0},
                                                       {kVisible | kCoherent | kCached, 1}});
  CHECK(plan_memory(memory, true).device_type == 2);
}
