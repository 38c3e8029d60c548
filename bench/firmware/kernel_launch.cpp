// SPDX-License-Identifier: Apache-2.0
// Size point (c): (b) plus a CPU kernel launched through a module loaded from a kernel table.
#include <devrt/backend/cpu_kernels.hpp>
#include <devrt/memory.hpp>
#include <devrt/module.hpp>

#include <cstdint>

namespace {
std::int32_t g_data[64];

std::int32_t increment(const devrt_cpu_kernel_context* c, devrt_error*) {
  auto* data = static_cast<std::int32_t*>(devrt_cpu_arg_pointer(c, 0));
  for (std::uint32_t t = 0; t < c->block[0]; ++t) data[c->block_index[0] * c->block[0] + t] += 1;
  return 0;
}
constexpr devrt_cpu_kernel_entry kKernels[] = {{"increment", &increment, "buffer"}};
} // namespace

int main() {
  devrt::Result<devrt::Buffer> buffer = devrt::Buffer::allocate(devrt::kHostDevice, sizeof g_data);
  if (!buffer.ok()) return 1;
  if (!devrt::copy(devrt::host_span(g_data, sizeof g_data), *buffer).ok()) return 1;
  if (!devrt::cpu::register_kernel_table("size", kKernels).ok()) return 1;
  devrt::Result<devrt::Module> module =
      devrt::Module::load(devrt::kHostDevice, devrt::ModuleFormat::host_table, "size");
  if (!module.ok()) return 1;
  devrt::Result<devrt::Function> function = module->function("increment");
  if (!function.ok()) return 1;
  const devrt::KernelArg args[] = {*buffer};
  devrt::LaunchConfig config;
  config.grid.x = 2;
  config.block.x = 32;
  if (!function->launch(config, args).ok()) return 1;
  if (!devrt::copy(*buffer, devrt::host_span(g_data, sizeof g_data)).ok()) return 1;
  for (std::int32_t value : g_data) {
    if (value != 1) return 1;
  }
  return 0;
}
