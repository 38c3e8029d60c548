// SPDX-License-Identifier: Apache-2.0
// Runs the core conformance cases (core_cases.hpp) through the run-time path and the compile-time
// path, on every device of each backend this build knows at compile time: the CPU backend, and the
// Hexagon backend in a Hexagon DSP build. Prints one line per failed check and a summary; exits
// 0 only when every check held. Runs on hosts and under QEMU (Cortex-M4, Hexagon).
#include "core_cases.hpp"

#include <devrt/backend/cpu.hpp>
#include <devrt/backend/cpu_kernels.hpp>
#include <devrt/backend/registry.hpp>
#include <devrt/config.hpp>

#if DEVRT_WITH_HEXAGON
#include <devrt/backend/hexagon.hpp>
#endif

#include <cstdio>

namespace {

// Both paths over every device of backend B.
template <class B>
void run_backend(conformance::Report& report, const conformance::Limits& limits) {
  devrt::Result<std::int32_t> count = devrt::direct::backend<B>().device_count();
  if (!count.ok() || *count == 0) {
    std::printf("SKIP %.*s: no devices\n", static_cast<int>(B::name.size()), B::name.data());
    return;
  }
  for (std::int32_t id = 0; id < *count; ++id) {
    devrt::Device device{B::kind, id};
    conformance::run_core_cases<conformance::RuntimePath>(report, device, *count, devrt::AddressableMemory<B>, limits);
    conformance::run_core_cases<conformance::DirectPath<B>>(report, device, *count, devrt::AddressableMemory<B>,
                                                            limits);
  }
  std::printf("%.*s: %d device(s), both paths\n", static_cast<int>(B::name.size()), B::name.data(),
              static_cast<int>(*count));
}

} // namespace

int main() {
  conformance::Limits limits;
#if DEVRT_BARE_METAL
  // Every buffer comes from the firmware heap (devrt/firmware_heap.h); a case holds two large ones.
  limits.large_bytes = DEVRT_FIRMWARE_HEAP_BYTES / 4 + 3;
#endif
  if (!devrt::cpu::register_kernel_table(conformance::kCoreKernelTable, conformance::kCoreKernels).ok()) {
    std::printf("FAIL: cannot register the core-cases kernel table\n");
    return 1;
  }
  conformance::Report report;
  run_backend<devrt::cpu::CpuBackend>(report, limits);
#if DEVRT_WITH_HEXAGON
  run_backend<devrt::hexagon::HexagonBackend>(report, limits);
#endif
  std::printf("core conformance: %d checks, %d failed\n", report.checks(), report.failures());
  return report.failures() == 0 ? 0 : 1;
}
