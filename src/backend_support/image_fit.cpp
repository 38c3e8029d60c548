// SPDX-License-Identifier: Apache-2.0
// Whether a GPU module image can run on a device: the CUDA and ROCm rules, from
// inspect_module_image's architectures alone (no driver).
#include "backend_support/gpu_launch.hpp"

#include <cstdlib>
#include <string>

namespace devrt::detail {

Status check_cuda_image_fits(const ModuleImageInfo& image, int major, int minor) noexcept {
  int device_arch = major * 10 + minor;
  std::string found;
  for (const std::string& arch : image.architectures) {
    int number = 0;
    bool is_ptx = arch.rfind("compute_", 0) == 0;
    bool is_cubin = arch.rfind("sm_", 0) == 0;
    if (!is_ptx && !is_cubin) continue;
    number = std::atoi(arch.c_str() + (is_ptx ? 8 : 3));
    if (is_ptx && number <= device_arch) return Status();
    if (is_cubin && number / 10 == major && number % 10 <= minor) return Status();
    if (!found.empty()) found += ", ";
    found += arch;
  }
  if (found.empty()) return Status(); // nothing recognisable to judge by: let the driver decide
  return make_error(ErrorCode::invalid_argument, "the ", module_format_name(image.format), " holds ", found,
                    ", none of which runs on this sm_", device_arch,
                    " device (a cubin needs the same major architecture and a minor no newer than the device's; "
                    "PTX needs a compute capability no newer than the device's)");
}

Status check_rocm_image_fits(const ModuleImageInfo& image, std::string_view processor) noexcept {
  std::string found;
  for (const std::string& arch : image.architectures) {
    if (arch == processor) return Status();
    if (!found.empty()) found += ", ";
    found += arch;
  }
  if (found.empty()) return Status();
  return make_error(ErrorCode::invalid_argument, "the code object is built for ", found, ", not this ", processor,
                    " device (build with --offload-arch=", processor, ")");
}

std::int64_t gcn_arch_number(std::string_view name) noexcept {
  if (name.substr(0, 3) != "gfx") return 0;
  name.remove_prefix(3);
  name = name.substr(0, name.find(':'));
  if (name.empty()) return 0;
  std::int64_t number = 0;
  for (char c : name) {
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) return 0;
    number = number * 10 + digit;
  }
  return number;
}

} // namespace devrt::detail
