// SPDX-License-Identifier: Apache-2.0
// Size point (b): the core and the CPU backend with one host -> device -> host round trip.
#include <devrt/memory.hpp>

#include <cstdint>

namespace {
std::uint32_t g_input[64];
std::uint32_t g_output[64];
} // namespace

int main() {
  for (std::uint32_t i = 0; i < 64; ++i) g_input[i] = i * 2654435761u;
  devrt::Result<devrt::Buffer> buffer = devrt::Buffer::allocate(devrt::kHostDevice, sizeof g_input);
  if (!buffer.ok()) return 1;
  if (!devrt::copy(devrt::host_span(g_input, sizeof g_input), *buffer).ok()) return 1;
  if (!devrt::copy(*buffer, devrt::host_span(g_output, sizeof g_output)).ok()) return 1;
  for (std::uint32_t i = 0; i < 64; ++i) {
    if (g_output[i] != g_input[i]) return 1;
  }
  return 0;
}
