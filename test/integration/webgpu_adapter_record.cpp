// SPDX-License-Identifier: Apache-2.0
// Prints the record of every WebGPU adapter devrt opens (webgpu_target.hpp's format): how
// test/fixtures/webgpu-*/adapter.txt are made, here and in the GPU lane. As a test it also checks
// that each record reads back as the same adapter and the same target. Exit 77 (skipped) when no
// WebGPU implementation or adapter is present.
#include <cstdio>
#include <string>

#include "backends/webgpu/webgpu_state.hpp"

int main() {
  using namespace devrt::webgpu;
  const Runtime& rt = runtime();
  if (!rt.status.ok()) {
    std::printf("SKIP: %s\n", std::string(rt.status.message()).c_str());
    return 77;
  }
  int failures = 0;
  for (std::size_t i = 0; i < rt.devices.size(); ++i) {
    const AdapterFacts facts = adapter_facts(*rt.devices[i]);
    const std::string record = adapter_record(facts);
    std::printf("# webgpu:%zu, recorded by test/integration/webgpu_adapter_record.cpp\n%s", i, record.c_str());
    devrt::Result<AdapterFacts> read = parse_adapter_record(record);
    if (!read.ok()) {
      std::printf("FAIL: %s\n", std::string(read.status().message()).c_str());
      ++failures;
    } else if (adapter_record(*read) != record || !(webgpu_target(*read) == webgpu_target(facts))) {
      std::printf("FAIL: the record reads back as another adapter:\n%s", adapter_record(*read).c_str());
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}
