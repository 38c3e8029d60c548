// SPDX-License-Identifier: Apache-2.0
// The conformance CPU kernels as a table (for devrt::cpu::register_kernel_table).
#ifndef DEVRT_TEST_KERNELS_CPU_KERNELS_HPP
#define DEVRT_TEST_KERNELS_CPU_KERNELS_HPP

#include <devrt/backend/cpu_kernel.h>

#include <cstddef>

#define DEVRT_TEST_EXPORT __attribute__((visibility("default")))

const devrt_cpu_kernel_entry* conformance_cpu_kernels(std::size_t* count);

#endif // DEVRT_TEST_KERNELS_CPU_KERNELS_HPP
