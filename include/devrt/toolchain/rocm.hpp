// SPDX-License-Identifier: Apache-2.0
// ROCm helpers: ld.lld, linking AMDGPU code objects, gfx architectures. Part of devrt_toolchain
// (TVM's tvm.contrib.rocm).
#ifndef DEVRT_TOOLCHAIN_ROCM_HPP
#define DEVRT_TOOLCHAIN_ROCM_HPP

#include <string>
#include <string_view>
#include <vector>

#include <devrt/status.hpp>

namespace devrt::toolchain {

// ld.lld, preferring the LLVM major version given (else the one of the clang on PATH):
// ld.lld-<major>.0, ld.lld-<major>, ld.lld, then /opt/rocm/llvm/bin/ld.lld, then any ld.lld-<N>.
// `unavailable` listing them. Thread-safe.
Result<std::string> find_lld(int preferred_major = 0) noexcept;

// Links a relocatable AMDGPU ELF object into a shared code object (`ld.lld --no-undefined
// -shared`), the form hipModuleLoad takes. The linker's output on failure. Thread-safe.
Status rocm_link(const std::string& object, const std::string& code_object, const std::string& lld = {}) noexcept;

// $ROCM_PATH, the directory above hipcc's, /opt/rocm.
Result<std::string> find_rocm_path() noexcept;

// A gfx processor: "gfx90a" -> {9, 0, 10}; "gfx1030" -> {10, 3, 0} (the last two characters are
// hexadecimal digits). invalid_argument otherwise.
struct GfxArch {
  int major = 0;
  int minor = 0;
  int stepping = 0;
  std::string name;
};
Result<GfxArch> parse_gfx_arch(std::string_view text) noexcept;

// Matrix cores: MFMA on gfx908, gfx90a and gfx94x (CDNA), WMMA on gfx11 and later. Also takes
// TVM's "X.Y" compute version, with TVM's rule (major >= 8).
Result<bool> have_matrixcore(std::string_view arch) noexcept;

} // namespace devrt::toolchain

#endif // DEVRT_TOOLCHAIN_ROCM_HPP
