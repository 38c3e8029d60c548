// SPDX-License-Identifier: Apache-2.0
// Spawned by bench-core to time process start: `registry` makes the registry ready and counts
// the CPU devices (what any devrt program does first); `empty` does nothing.
#include <devrt/backend/registry.hpp>
#include <devrt/devrt.hpp>

#include <cstring>

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "registry") == 0) {
    return devrt::device_count(devrt::DeviceKind::cpu) == 1 && devrt::Registry::global().size() > 0 ? 0 : 1;
  }
  return 0;
}
