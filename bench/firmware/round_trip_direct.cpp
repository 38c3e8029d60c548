// SPDX-License-Identifier: Apache-2.0
// Size point (d): (b)'s round trip through the compile-time path (devrt/backend/direct.hpp): the CPU
// backend called directly, with the run-time path's checks, no table and no registry.
#include <devrt/backend/cpu.hpp>
#include <devrt/backend/direct.hpp>

#include <cstdint>

namespace {
std::uint32_t g_input[64];
std::uint32_t g_output[64];
using Cpu = devrt::cpu::CpuBackend;
} // namespace

int main() {
  for (std::uint32_t i = 0; i < 64; ++i) g_input[i] = i * 2654435761u;
  devrt::Result<devrt::direct::Buffer<Cpu>> buffer =
      devrt::direct::Buffer<Cpu>::allocate(devrt::kHostDevice, sizeof g_input);
  if (!buffer.ok()) return 1;
  if (!devrt::direct::copy<Cpu>(devrt::host_span(g_input, sizeof g_input), *buffer).ok()) return 1;
  if (!devrt::direct::copy<Cpu>(*buffer, devrt::host_span(g_output, sizeof g_output)).ok()) return 1;
  for (std::uint32_t i = 0; i < 64; ++i) {
    if (g_output[i] != g_input[i]) return 1;
  }
  return 0;
}
