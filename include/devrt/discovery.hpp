// SPDX-License-Identifier: Apache-2.0
// What this process can use: every backend registered (compiled in or loaded from a plugin) with
// its availability and device count, and every present device. For applications; the same walk
// devrt-info makes, without the backend-author headers (<devrt/backend/registry.hpp>).
#ifndef DEVRT_DISCOVERY_HPP
#define DEVRT_DISCOVERY_HPP

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <devrt/device.hpp>

namespace devrt {

// One registered backend. A plain value.
struct BackendInfo {
  // "cpu", "opencl", ...: valid for the process (plugins stay loaded).
  std::string_view name;
  // The device kind it serves.
  DeviceKind kind{};
  // Its driver answered and it can be used.
  bool available = false;
  // Why it is not available ("no libcuda.so.1 ...", "plugin ... not installed"); empty when it is.
  std::string reason;
  // Present devices; 0 when unavailable.
  std::int32_t device_count = 0;
};

// Every registered backend in registration order (the CPU first), each asked for its availability
// and device count once: the first call loads the drivers, as any first use does. Allocates the
// vector; thread-safe.
std::vector<BackendInfo> backends() noexcept;

// Every present device of every available backend, in the order of backends(), indices ascending.
// Allocates the vector; thread-safe.
std::vector<Device> devices() noexcept;

} // namespace devrt

#endif // DEVRT_DISCOVERY_HPP
