// SPDX-License-Identifier: Apache-2.0
// A firmware integrator's first program, built against an installed devrt (run.sh): a round trip
// through a Buffer, a kernel from a kernel table, the compile-time path, and two mistakes that
// must come back as error codes. Exits 0 when all of it held.
#include <devrt/backend/cpu.hpp>
#include <devrt/backend/cpu_kernels.hpp>
#include <devrt/backend/direct.hpp>
#include <devrt/devrt.hpp>

#include <cstdint>
#include <cstdio>

namespace {

std::int32_t g_data[64];

std::int32_t add_one(const devrt_cpu_kernel_context* c, devrt_error*) {
  auto* data = static_cast<std::int32_t*>(devrt_cpu_arg_pointer(c, 0));
  for (std::uint32_t t = 0; t < c->block[0]; ++t) data[c->block_index[0] * c->block[0] + t] += 1;
  return 0;
}
constexpr devrt_cpu_kernel_entry kKernels[] = {{"add_one", &add_one, "buffer"}};

int fail(const char* step) {
  std::printf("consumer: %s failed\n", step);
  return 1;
}

} // namespace

int main() {
  for (std::int32_t i = 0; i < 64; ++i) g_data[i] = i;
  devrt::Result<devrt::Buffer> buffer = devrt::Buffer::allocate(devrt::kHostDevice, sizeof g_data);
  if (!buffer.ok()) return fail("Buffer::allocate");
  if (!devrt::copy(devrt::host_span(g_data, sizeof g_data), *buffer).ok()) return fail("copy in");

  if (!devrt::cpu::register_kernel_table("consumer", kKernels).ok()) return fail("register_kernel_table");
  devrt::Result<devrt::Module> module =
      devrt::Module::load(devrt::kHostDevice, devrt::ModuleFormat::host_table, "consumer");
  if (!module.ok()) return fail("Module::load");
  devrt::Result<devrt::Function> function = module->function("add_one");
  if (!function.ok()) return fail("Module::function");
  const devrt::KernelArg args[] = {*buffer};
  devrt::LaunchConfig config;
  config.grid.x = 2;
  config.block.x = 32;
  if (!function->launch(config, args).ok()) return fail("launch");
  if (!devrt::copy(*buffer, devrt::host_span(g_data, sizeof g_data)).ok()) return fail("copy out");
  for (std::int32_t i = 0; i < 64; ++i) {
    if (g_data[i] != i + 1) return fail("the kernel's result");
  }

  using Cpu = devrt::cpu::CpuBackend;
  auto direct = devrt::direct::Buffer<Cpu>::allocate(devrt::kHostDevice, sizeof g_data);
  if (!direct.ok() || !devrt::direct::copy<Cpu>(devrt::host_span(g_data, sizeof g_data), *direct).ok()) {
    return fail("the compile-time path");
  }

  devrt::Status too_far = devrt::copy(devrt::host_span(g_data, sizeof g_data), 0, *buffer, 8, sizeof g_data);
  if (too_far.ok()) return fail("refusing an out-of-range copy");
  devrt::Result<devrt::Buffer> huge = devrt::Buffer::allocate(devrt::kHostDevice, SIZE_MAX / 2);
  if (huge.ok() || huge.status().code() != devrt::ErrorCode::out_of_memory) return fail("refusing a huge allocation");
  std::printf("consumer: round trip, kernel, compile-time path and both refusals held\n");
  return 0;
}
