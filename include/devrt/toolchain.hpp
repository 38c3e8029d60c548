// SPDX-License-Identifier: Apache-2.0
// devrt_toolchain: what a JIT or a compiler driver needs around the runtime (processes, a worker
// pool, temporary directories and locks, tar, host/CUDA/ROCm/clang/Emscripten/NDK compilers).
// Hosted platforms only; link `devrt-toolchain` (pkg-config) or devrt_toolchain_dep.
#ifndef DEVRT_TOOLCHAIN_HPP
#define DEVRT_TOOLCHAIN_HPP

#include <devrt/toolchain/android_ndk.hpp>
#include <devrt/toolchain/cc.hpp>
#include <devrt/toolchain/clang.hpp>
#include <devrt/toolchain/cuda.hpp>
#include <devrt/toolchain/emscripten.hpp>
#include <devrt/toolchain/files.hpp>
#include <devrt/toolchain/pool.hpp>
#include <devrt/toolchain/process.hpp>
#include <devrt/toolchain/rocm.hpp>
#include <devrt/toolchain/tar.hpp>

#endif // DEVRT_TOOLCHAIN_HPP
