// SPDX-License-Identifier: Apache-2.0
// devrt::nvrtc in builds without the CUDA backend: every call says so.
#include <devrt/nvrtc.hpp>

namespace devrt::nvrtc {

namespace {
Status not_built() {
  return Status(ErrorCode::unavailable, "NVRTC: this devrt was built without the cuda backend (-Dcuda=disabled or "
                                        "no CUDA Toolkit headers at configure time)");
}
} // namespace

Status availability() noexcept { return not_built(); }
Result<int> version() noexcept { return not_built(); }
Result<Program> compile(std::string_view, const CompileOptions&) noexcept { return not_built(); }
std::string cache_directory() { return {}; }

} // namespace devrt::nvrtc
