// SPDX-License-Identifier: Apache-2.0
// A program that includes <devrt/devrt.hpp> and <devrt/registry.hpp> (to list the registered
// backends) and links libdevrt the plain way. Its arguments
// are the backends the build enabled; it fails unless every one of them is registered, which is
// what proves registration survives static linking without --whole-archive.
#include <devrt/devrt.hpp>
#include <devrt/registry.hpp>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  devrt::Registry& registry = devrt::Registry::global();
  std::printf("registered:");
  for (std::size_t i = 0; i < registry.size(); ++i) {
    std::printf(" %.*s", static_cast<int>(registry.at(i).name().size()), registry.at(i).name().data());
  }
  std::printf("\n");
  int missing = 0;
  for (int i = 1; i < argc; ++i) {
    if (!registry.find(argv[i])) {
      std::printf("FAIL: backend '%s' is enabled in the build but not registered\n", argv[i]);
      ++missing;
    }
  }
  if (registry.size() != static_cast<std::size_t>(argc - 1)) {
    std::printf("FAIL: %zu backends registered, %d expected\n", registry.size(), argc - 1);
    ++missing;
  }
  const char text[] = "round trip through devrt";
  char back[sizeof text] = {};
  devrt::Result<devrt::Buffer> buffer = devrt::Buffer::allocate(devrt::kHostDevice, sizeof text);
  if (!buffer.ok() || !devrt::copy(devrt::host_span(text, sizeof text), *buffer).ok() ||
      !devrt::copy(*buffer, devrt::host_span(back, sizeof back)).ok() || std::strcmp(text, back) != 0) {
    std::printf("FAIL: round trip on cpu:0\n");
    ++missing;
  }
  if (missing == 0) std::printf("PASS\n");
  return missing == 0 ? 0 : 1;
}
