// SPDX-License-Identifier: Apache-2.0
// The Vulkan backend's queue and timestamp decisions (vulkan_timing.hpp) against recorded
// vulkaninfo output (test/fixtures/): an NVIDIA H100 and lavapipe.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "backends/vulkan/vulkan_timing.hpp"

using devrt::vulkan::compute_family_of;
using devrt::vulkan::timestamp_interval_ns;

namespace {

struct Recorded {
  std::vector<VkQueueFamilyProperties> families;
  float timestamp_period = 0;
};

// The queue families (flags, timestamp bits) and timestampPeriod of `vulkaninfo` text output.
Recorded parse_queues(const std::string& path) {
  std::ifstream file(path);
  REQUIRE(file.good());
  Recorded out;
  std::string line;
  while (std::getline(file, line)) {
    const std::size_t start = line.find_first_not_of('\t');
    if (start == std::string::npos) continue;
    const std::string text = line.substr(start);
    const std::string value = text.substr(text.find('=') + 1);
    if (text.rfind("queueProperties[", 0) == 0) {
      out.families.emplace_back();
    } else if (!out.families.empty() && text.rfind("queueFlags", 0) == 0) {
      VkQueueFlags& flags = out.families.back().queueFlags;
      if (value.find("QUEUE_GRAPHICS") != std::string::npos) flags |= VK_QUEUE_GRAPHICS_BIT;
      if (value.find("QUEUE_COMPUTE") != std::string::npos) flags |= VK_QUEUE_COMPUTE_BIT;
      if (value.find("QUEUE_TRANSFER") != std::string::npos) flags |= VK_QUEUE_TRANSFER_BIT;
    } else if (!out.families.empty() && text.rfind("timestampValidBits", 0) == 0) {
      out.families.back().timestampValidBits = static_cast<std::uint32_t>(std::stoul(value));
    } else if (text.rfind("timestampPeriod", 0) == 0 && out.timestamp_period == 0) {
      out.timestamp_period = std::stof(value);
    }
  }
  REQUIRE_FALSE(out.families.empty());
  return out;
}

std::string recorded_vulkaninfo(const char* name) {
  return std::string(DEVRT_TEST_FIXTURES) + "/" + name + "/vulkaninfo.txt";
}

} // namespace

TEST_CASE("NVIDIA H100: the dedicated compute family, 64-bit timestamps of 1 ns", "[vulkan][timing]") {
  const Recorded h100 = parse_queues(recorded_vulkaninfo("nvidia-h100"));
  REQUIRE(h100.families.size() == 5);
  const std::uint32_t family = compute_family_of(h100.families);
  CHECK(family == 2); // compute and transfer, no graphics
  CHECK(h100.families[family].timestampValidBits == 64);
  CHECK(h100.timestamp_period == 1.0f);
  CHECK(timestamp_interval_ns(5, 1005, 64, h100.timestamp_period) == 1000);
  CHECK(timestamp_interval_ns(1005, 5, 64, h100.timestamp_period) == -1000); // an end before the start
  // Its video-decode family counts 32 bits: never the compute family, and it would wrap.
  CHECK(h100.families[3].timestampValidBits == 32);
}

TEST_CASE("lavapipe: one family for everything, 64-bit timestamps of 1 ns", "[vulkan][timing]") {
  const Recorded lvp = parse_queues(recorded_vulkaninfo("lavapipe"));
  const std::uint32_t family = compute_family_of(lvp.families);
  CHECK(family == 0);
  CHECK(lvp.families[family].timestampValidBits == 64);
  CHECK(lvp.timestamp_period == 1.0f);
}

TEST_CASE("timestamps: a narrow counter wraps, a period scales", "[vulkan][timing]") {
  CHECK(timestamp_interval_ns(0xFFFFFF00u, 0x100u, 32, 1.0f) == 0x200);
  CHECK(timestamp_interval_ns(10, 20, 36, 52.08f) == 521); // a period of 52.08 ns (some mobile GPUs)
  CHECK(timestamp_interval_ns(7, 7, 64, 1.0f) == 0);
  const VkQueueFamilyProperties none[] = {{VK_QUEUE_TRANSFER_BIT, 1, 64, {1, 1, 1}}};
  CHECK(compute_family_of(none) == UINT32_MAX);
}
