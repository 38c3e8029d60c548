// SPDX-License-Identifier: Apache-2.0
// An application of devrt, linked the plain way (the README's subproject recipe, pkg-config): lists
// the backends with the application headers alone (<devrt/discovery.hpp>) and fails unless exactly
// the backends named on its command line are registered, which proves registration survives
// static linking without --whole-archive; then round-trips bytes through the CPU.
#include <devrt/devrt.hpp>
#include <devrt/discovery.hpp>

#include <cstdio>
#include <cstring>
#include <string_view>

int main(int argc, char** argv) {
  int failures = 0;
  const std::vector<devrt::BackendInfo> backends = devrt::backends();
  for (const devrt::BackendInfo& backend : backends) {
    std::printf("backend %.*s: %s\n", static_cast<int>(backend.name.size()), backend.name.data(),
                backend.available ? "available" : backend.reason.c_str());
  }
  for (int i = 1; i < argc; ++i) {
    bool found = false;
    for (const devrt::BackendInfo& backend : backends) found |= backend.name == std::string_view(argv[i]);
    if (!found) {
      std::printf("FAIL: backend '%s' is not registered\n", argv[i]);
      ++failures;
    }
  }
  if (backends.size() != static_cast<std::size_t>(argc - 1)) {
    std::printf("FAIL: %zu backends registered, %d expected\n", backends.size(), argc - 1);
    ++failures;
  }
  const char text[] = "round trip through devrt";
  char back[sizeof text] = {};
  devrt::Result<devrt::Buffer> buffer = devrt::Buffer::allocate(devrt::kHostDevice, sizeof text);
  if (!buffer.ok() || !devrt::copy(devrt::host_span(text, sizeof text), *buffer).ok() ||
      !devrt::copy(*buffer, devrt::host_span(back, sizeof back)).ok() || std::strcmp(text, back) != 0) {
    std::printf("FAIL: round trip on cpu:0\n");
    ++failures;
  }
  if (failures == 0) std::printf("PASS\n");
  return failures == 0 ? 0 : 1;
}
