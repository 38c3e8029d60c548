// SPDX-License-Identifier: Apache-2.0
// In-process CPU kernel tables: named sets of host functions that Module::load(cpu device,
// ModuleFormat::host_table, "<table name>") turns into a module. Works in static and firmware
// builds (no dlopen, no heap in registration).
#ifndef DEVRT_BACKEND_CPU_KERNELS_HPP
#define DEVRT_BACKEND_CPU_KERNELS_HPP

#include <cstddef>
#include <span>
#include <string_view>

#include <devrt/backend/cpu_kernel.h>
#include <devrt/status.hpp>

namespace devrt::cpu {

// How many tables one process may register.
inline constexpr std::size_t kMaxKernelTables = 32;

// Registers `entries` under `name` (1..63 characters). Neither is copied: both must outlive every
// module loaded from them (static storage). Registering the same name and entries again is a
// no-op; another table under a taken name is already_exists; a full registry is out_of_memory;
// malformed signatures are invalid_argument. Thread-safe.
Status register_kernel_table(std::string_view name, std::span<const devrt_cpu_kernel_entry> entries) noexcept;

} // namespace devrt::cpu

#endif // DEVRT_BACKEND_CPU_KERNELS_HPP
