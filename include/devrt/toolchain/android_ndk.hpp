// SPDX-License-Identifier: Apache-2.0
// Android shared libraries through the NDK's clang (TVM's tvm.contrib.ndk). Part of devrt_toolchain.
#ifndef DEVRT_TOOLCHAIN_ANDROID_NDK_HPP
#define DEVRT_TOOLCHAIN_ANDROID_NDK_HPP

#include <string>
#include <vector>

#include <devrt/status.hpp>

namespace devrt::toolchain {

// The NDK compiler: $DEVRT_NDK_CC (TVM: TVM_NDK_CC), else
// $ANDROID_NDK_HOME/toolchains/llvm/prebuilt/linux-x86_64/bin/aarch64-linux-android<api>-clang++
// for the newest api there; `unavailable` "tool not found" when neither exists.
Result<std::string> find_ndk_compiler() noexcept;
// Builds an Android shared library (-shared -fPIC, static libc++). `unavailable` without the NDK.
Status create_android_shared(const std::string& output, const std::vector<std::string>& inputs,
                             const std::vector<std::string>& options = {}) noexcept;

} // namespace devrt::toolchain

#endif // DEVRT_TOOLCHAIN_ANDROID_NDK_HPP
