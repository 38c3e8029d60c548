// SPDX-License-Identifier: Apache-2.0
#include <devrt/toolchain/process.hpp>
#include <devrt/toolchain/rocm.hpp>

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "support/environment.hpp"
#include "toolchain_internal.hpp"

namespace devrt::toolchain {
namespace {

// The major version of the clang on PATH ("clang version 14.0.6"), or 0.
int clang_major() {
  Result<std::string> out = run_and_capture({"clang", "--version"});
  if (!out.ok()) return 0;
  std::size_t at = out->find("version ");
  if (at == std::string::npos) return 0;
  int major = 0;
  std::from_chars(out->data() + at + 8, out->data() + out->size(), major);
  return major;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

} // namespace

Result<std::string> find_lld(int preferred_major) noexcept {
  int major = preferred_major > 0 ? preferred_major : clang_major();
  std::vector<std::string> names;
  if (major > 0)
    names.insert(names.end(), {"ld.lld-" + std::to_string(major) + ".0", "ld.lld-" + std::to_string(major)});
  names.emplace_back("ld.lld");
  names.emplace_back("/opt/rocm/llvm/bin/ld.lld");
  for (std::string& name : detail::versioned_names("ld.lld")) names.push_back(std::move(name));
  Result<std::string> found = find_first_program(names);
  if (found.ok()) return found;
  return Status(
      ErrorCode::unavailable,
      "tool not found: ld.lld (tried ld.lld-<major>, ld.lld, /opt/rocm/llvm/bin/ld.lld, ld.lld-30 ... ld.lld-7)");
}

Status rocm_link(const std::string& object, const std::string& code_object, const std::string& lld) noexcept {
  std::string linker = lld;
  if (linker.empty()) {
    DEVRT_ASSIGN_OR_RETURN(linker, find_lld());
  }
  // --no-undefined: an unresolved symbol fails here, with a name, rather than at hipModuleLoad.
  ProcessOptions options;
  options.argv = {linker, "--no-undefined", "-shared", object, "-o", code_object};
  DEVRT_ASSIGN_OR_RETURN(ProcessResult result, run_process(options));
  return check_process(result, "rocm_link: ld.lld");
}

Result<std::string> find_rocm_path() noexcept {
  if (const char* env = devrt::detail::read_path_env("ROCM_PATH")) return std::string(env);
  Result<std::string> hipcc_root = detail::install_root("hipcc");
  if (hipcc_root.ok()) return hipcc_root;
  std::error_code ignored;
  if (std::filesystem::exists("/opt/rocm/bin/hipcc", ignored)) return std::string("/opt/rocm");
  return Status(ErrorCode::unavailable, "ROCm not found (tried $ROCM_PATH, hipcc on PATH, /opt/rocm)");
}

Result<GfxArch> parse_gfx_arch(std::string_view text) noexcept {
  std::string_view name = text.substr(0, text.find(':')); // "gfx90a:sramecc+:xnack-" -> "gfx90a"
  if (name.starts_with("gfx") && name.size() >= 6) {
    std::string_view digits = name.substr(3);
    GfxArch arch;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size() - 2, arch.major);
    arch.minor = hex_digit(digits[digits.size() - 2]);
    arch.stepping = hex_digit(digits[digits.size() - 1]);
    if (ec == std::errc() && p == digits.data() + digits.size() - 2 && arch.major > 0 && arch.minor >= 0 &&
        arch.stepping >= 0) {
      arch.name = std::string(name);
      return arch;
    }
  }
  return make_error(ErrorCode::invalid_argument, "'", text, "' is not a gfx processor name (gfx906, gfx90a, gfx1030)");
}

Result<bool> have_matrixcore(std::string_view arch) noexcept {
  if (!arch.starts_with("gfx")) {
    // TVM's form: a compute version "major.minor"; matrix cores from 8.0.
    std::size_t dot = arch.find('.');
    int major = 0;
    auto [p, ec] = std::from_chars(arch.data(), arch.data() + (dot == std::string_view::npos ? 0 : dot), major);
    if (dot == std::string_view::npos || ec != std::errc() || p != arch.data() + dot) {
      return make_error(ErrorCode::invalid_argument, "'", arch, "' is neither a gfx processor nor \"major.minor\"");
    }
    return major >= 8;
  }
  DEVRT_ASSIGN_OR_RETURN(GfxArch gfx, parse_gfx_arch(arch));
  bool cdna_mfma = gfx.major == 9 && gfx.minor == 0 && (gfx.stepping == 8 || gfx.stepping == 0xa);
  bool cdna3 = gfx.major == 9 && gfx.minor == 4;
  bool rdna_wmma = gfx.major >= 11;
  return cdna_mfma || cdna3 || rdna_wmma;
}

} // namespace devrt::toolchain
