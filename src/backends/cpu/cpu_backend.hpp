// SPDX-License-Identifier: Apache-2.0
// The CPU backend's internals: target-detection helpers (the type is in devrt/backend/cpu.hpp).
#ifndef DEVRT_SRC_BACKENDS_CPU_CPU_BACKEND_HPP
#define DEVRT_SRC_BACKENDS_CPU_CPU_BACKEND_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <devrt/backend/cpu.hpp>

namespace devrt::cpu {

// The SIMD width in 32-bit lanes that LLVM-style features give (TVM's get_simd_32bit_lanes):
// 16 with +avx512f and +avx512bw, 8 with +avx2, else 4; for SVE, the vector length in lanes when
// `sve_vector_bytes` is known. Thread-safe.
std::int64_t simd_32bit_lanes(std::span<const std::string> mattr, std::int64_t sve_vector_bytes = 0) noexcept;

// LLVM's -mcpu name for an x86 CPU from its cpuid vendor/family/model/stepping, or "" when
// unknown. `level` is the x86-64 micro-architecture level (1..4) the features reach; a name
// implying more than that (a hypervisor hid AVX-512, say) is not returned. Thread-safe.
std::string_view x86_cpu_name(std::string_view vendor, unsigned family, unsigned model, unsigned stepping,
                              int level) noexcept;

} // namespace devrt::cpu

#endif // DEVRT_SRC_BACKENDS_CPU_CPU_BACKEND_HPP
