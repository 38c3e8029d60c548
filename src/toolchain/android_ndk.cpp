// SPDX-License-Identifier: Apache-2.0
#include <devrt/toolchain/android_ndk.hpp>
#include <devrt/toolchain/process.hpp>

#include "support/environment.hpp"
#include "toolchain_internal.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace devrt::toolchain {

Result<std::string> find_ndk_compiler() noexcept {
  if (const char* cc = devrt::detail::read_program_env("DEVRT_NDK_CC")) return find_program(cc);
  if (const char* home = devrt::detail::read_path_env("ANDROID_NDK_HOME")) {
    std::string bin = std::string(home) + "/toolchains/llvm/prebuilt/linux-x86_64/bin";
    // The newest API level the NDK has a compiler driver for.
    for (int api = 40; api >= 21; --api) {
      std::string candidate = bin + "/aarch64-linux-android" + std::to_string(api) + "-clang++";
      std::error_code ignored;
      if (std::filesystem::exists(candidate, ignored)) return candidate;
    }
    return make_error(ErrorCode::unavailable, "tool not found: no aarch64-linux-android<api>-clang++ in ", bin);
  }
  return Status(ErrorCode::unavailable, "tool not found: the Android NDK (set DEVRT_NDK_CC or ANDROID_NDK_HOME)");
}

Status create_android_shared(const std::string& output, const std::vector<std::string>& inputs,
                             const std::vector<std::string>& options) noexcept {
  if (inputs.empty()) return make_error(ErrorCode::invalid_argument, "create_android_shared(", output, "): no inputs");
  DEVRT_ASSIGN_OR_RETURN(std::string compiler, find_ndk_compiler());
  return detail::run_build({compiler, "-shared", "-fPIC", "-static-libstdc++"}, options, output, inputs,
                           "create_android_shared");
}

} // namespace devrt::toolchain
