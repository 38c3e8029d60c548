// SPDX-License-Identifier: Apache-2.0
// WebAssembly through Emscripten (TVM's tvm.contrib.emcc). Part of devrt_toolchain.
#ifndef DEVRT_TOOLCHAIN_EMSCRIPTEN_HPP
#define DEVRT_TOOLCHAIN_EMSCRIPTEN_HPP

#include <string>
#include <vector>

#include <devrt/status.hpp>

namespace devrt::toolchain {

// emcc from $EMCC, else on PATH; `unavailable` "tool not found" when there is none.
Result<std::string> find_emcc() noexcept;
// Links objects into a standalone WebAssembly side module (emcc -O3 -s SIDE_MODULE=1
// -s STANDALONE_WASM=1 ...). `unavailable` without emcc. Thread-safe.
Status create_wasm(const std::string& output, const std::vector<std::string>& inputs,
                   const std::vector<std::string>& options = {}) noexcept;

} // namespace devrt::toolchain

#endif // DEVRT_TOOLCHAIN_EMSCRIPTEN_HPP
