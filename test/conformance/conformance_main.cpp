// SPDX-License-Identifier: Apache-2.0
// Selects the backend from DEVRT_CONFORMANCE_BACKEND; exits 77 (meson: SKIP) with the reason when
// it is not available here.
#include "conformance.hpp"

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {
devrt::BackendRef g_backend;
std::vector<devrt::Device> g_devices;
} // namespace

namespace conformance {
devrt::BackendRef backend() { return g_backend; }
std::vector<devrt::Device> devices() { return g_devices; }
} // namespace conformance

// Catch2's main, renamed (test/meson.build, test/catch_runner.cpp).
extern "C" int devrt_catch_session_main(int argc, char** argv);

int main(int argc, char** argv) {
  const char* name = std::getenv("DEVRT_CONFORMANCE_BACKEND");
  if (name == nullptr) name = "cpu";
  g_backend = devrt::Registry::global().find(name);
  if (!g_backend) {
    std::printf("FAIL: backend '%s' is not registered in this build\n", name);
    return 1;
  }
  devrt::Status available = g_backend.availability();
  // tools/gpu-lane/run.sh: on the GPU machine a backend that cannot run is a failure, not a skip.
  const char* require = std::getenv("DEVRT_REQUIRE_GPU");
  bool required = require != nullptr && require[0] == '1' &&
                  (std::string_view(name) == "cuda" || std::string_view(name) == "cuda_host");
  if (!available.ok() && required) {
    std::printf("FAIL conformance-%s: DEVRT_REQUIRE_GPU=1 but %.*s\n", name,
                static_cast<int>(available.message().size()), available.message().data());
    return 1;
  }
  if (!available.ok()) {
    std::printf("SKIP conformance-%s: %.*s\n", name, static_cast<int>(available.message().size()),
                available.message().data());
    return 77;
  }
  devrt::Result<std::int32_t> count = g_backend.device_count();
  if (!count.ok() || *count == 0) {
    std::printf("SKIP conformance-%s: no devices\n", name);
    return 77;
  }
  for (std::int32_t id = 0; id < *count; ++id) g_devices.push_back(devrt::Device{g_backend.kind(), id});
  std::printf("conformance-%s: %d device(s)\n", name, static_cast<int>(*count));
  int failed = devrt_catch_session_main(argc, argv);
  if (failed == 0 && conformance::every_case_skipped()) return 77; // nothing could run here
  return failed;
}
