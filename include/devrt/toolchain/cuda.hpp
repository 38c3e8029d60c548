// SPDX-License-Identifier: Apache-2.0
// The CUDA toolkit: finding it and its version, compiling CUDA C++ with nvcc or NVRTC, compute
// capability rules, NVSHMEM discovery. Part of devrt_toolchain (TVM's tvm.contrib.nvcc).
#ifndef DEVRT_TOOLCHAIN_CUDA_HPP
#define DEVRT_TOOLCHAIN_CUDA_HPP

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <devrt/status.hpp>

namespace devrt::toolchain {

// $CUDA_PATH, $CUDA_HOME, the directory above nvcc's on PATH, /usr/local/cuda (each must hold
// bin/nvcc or include/cuda.h); `unavailable` listing what was tried. Thread-safe.
Result<std::string> find_cuda_path() noexcept;

struct CudaVersion {
  int major = 0;
  int minor = 0;
  friend constexpr auto operator<=>(const CudaVersion&, const CudaVersion&) = default;
};
// From <path>/version.json ("cuda": {"version": "13.0.48"}), version.txt, else `nvcc --version`.
Result<CudaVersion> cuda_version(const std::string& cuda_path) noexcept;

enum class CudaOutput : std::uint8_t { ptx, cubin, fatbin };
enum class CudaCompiler : std::uint8_t { nvcc, nvrtc };

struct CudaCompileOptions {
  CudaOutput output = CudaOutput::ptx;
  // "sm_90", "compute_80"...; several build a fatbin for each (nvcc). Empty: cuda:0's, which
  // needs a device (NVRTC), or nvcc's default.
  std::vector<std::string> arch;
  std::vector<std::string> options;
  CudaCompiler compiler = CudaCompiler::nvcc;
};

// Compiles CUDA C++ source to PTX, a cubin or a fatbin. nvcc runs in a temporary directory; NVRTC
// (devrt/nvrtc.hpp, cached) makes PTX and cubins, one architecture at a time. The compiler's log
// is in the error (`tool_failed`); a missing compiler is `unavailable`. Thread-safe.
Result<std::vector<std::byte>> compile_cuda(std::string_view source, const CudaCompileOptions& options) noexcept;

struct ComputeVersion {
  int major = 0;
  int minor = 0;
};
// Every form TVM's get_target_compute_version returns or a target's arch holds: "8.6" -> {8, 6},
// "9.0.a" / "10.0.f" -> {9, 0} / {10, 0}, "sm_86" / "compute_86" -> {8, 6}, "sm_90a" -> {9, 0},
// "sm_100" -> {10, 0}. invalid_argument for anything else. Thread-safe.
Result<ComputeVersion> parse_compute_version(std::string_view text) noexcept;

// TVM's rules: fp16 on 5.3 and >= 6.0; int8 (dp4a) on >= 6.x; tensor cores on >= 7.x; bf16 on
// >= 8.x; fp8 on 8.9 and later; fp4 on 10.0 only. Thread-safe.
Result<bool> have_fp16(std::string_view compute_version) noexcept;
Result<bool> have_int8(std::string_view compute_version) noexcept;
Result<bool> have_tensorcore(std::string_view compute_version) noexcept;
Result<bool> have_bf16(std::string_view compute_version) noexcept;
Result<bool> have_fp8(std::string_view compute_version) noexcept;
Result<bool> have_fp4(std::string_view compute_version) noexcept;
// CUDA graphs need a toolkit of 10.0 or later; false when no toolkit is found.
bool have_cudagraph() noexcept;

struct NvshmemPaths {
  std::string include_dir; // holds nvshmem.h
  std::string lib_dir;     // holds libnvshmem*
};
// $NVSHMEM_HOME, $NVSHMEM_PREFIX, /usr/local/nvshmem, /opt/nvidia/nvshmem, Debian/Ubuntu's
// /usr/include/nvshmem_<N> with /usr/lib/<triple>/nvshmem/<N>; `unavailable` listing them.
Result<NvshmemPaths> find_nvshmem() noexcept;

} // namespace devrt::toolchain

#endif // DEVRT_TOOLCHAIN_CUDA_HPP
