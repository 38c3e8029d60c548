// SPDX-License-Identifier: Apache-2.0
// clang: finding it and emitting LLVM IR. Part of devrt_toolchain (TVM's tvm.contrib.clang).
#ifndef DEVRT_TOOLCHAIN_CLANG_HPP
#define DEVRT_TOOLCHAIN_CLANG_HPP

#include <string>
#include <string_view>
#include <vector>

#include <devrt/status.hpp>

namespace devrt::toolchain {

// clang, preferring the given major version: clang-<major>, clang, then clang-<N> from newest.
Result<std::string> find_clang(int preferred_major = 0) noexcept;

// Compiles sources (paths, or C source text when is_source_path says it is code) to LLVM IR text
// (`clang -S -emit-llvm`), linked into one module with llvm-link when several. Thread-safe.
Result<std::string> emit_llvm_ir(const std::vector<std::string>& inputs, const std::vector<std::string>& options = {},
                                 const std::string& clang = {}) noexcept;

} // namespace devrt::toolchain

#endif // DEVRT_TOOLCHAIN_CLANG_HPP
