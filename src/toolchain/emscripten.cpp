// SPDX-License-Identifier: Apache-2.0
#include <devrt/toolchain/emscripten.hpp>
#include <devrt/toolchain/process.hpp>

#include "support/environment.hpp"
#include "toolchain_internal.hpp"

#include <cstdlib>

namespace devrt::toolchain {

Result<std::string> find_emcc() noexcept {
  if (const char* env = devrt::detail::read_program_env("EMCC")) return find_program(env);
  return find_program("emcc");
}

Status create_wasm(const std::string& output, const std::vector<std::string>& inputs,
                   const std::vector<std::string>& options) noexcept {
  if (inputs.empty()) return make_error(ErrorCode::invalid_argument, "create_wasm(", output, "): no inputs");
  DEVRT_ASSIGN_OR_RETURN(std::string emcc, find_emcc());
  return detail::run_build({emcc, "-O3", "-std=c++17", "-Wno-ignored-attributes", "-s", "ALLOW_MEMORY_GROWTH=1", "-s",
                            "STANDALONE_WASM=1", "-s", "ERROR_ON_UNDEFINED_SYMBOLS=0", "--no-entry"},
                           options, output, inputs, "create_wasm: emcc");
}

} // namespace devrt::toolchain
