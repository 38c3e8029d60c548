// SPDX-License-Identifier: Apache-2.0
// Module images read without a driver: which format and architectures a cubin, fatbin, PTX text,
// AMD code object or SPIR-V blob carries. For backends (which check images before their driver
// sees them) and tools.
#ifndef DEVRT_BACKEND_MODULE_IMAGE_HPP
#define DEVRT_BACKEND_MODULE_IMAGE_HPP

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <devrt/module.hpp>
#include <devrt/status.hpp>

namespace devrt {

// What a module image is, read from its headers alone (no driver, no device): the format and the
// architectures it carries, e.g. cubin {"sm_90"}, fatbin {"sm_80", "sm_90", "compute_90"}, PTX
// {"compute_90"}, hsaco {"gfx90a"}. Backends check images with it before the driver sees them.
struct ModuleImageInfo {
  ModuleFormat format = ModuleFormat::ptx;
  std::vector<std::string> architectures;
};

// Recognises PTX text, CUDA cubin (ELF, EM_CUDA) and fatbin, AMD GPU code objects (ELF, EM_AMDGPU,
// or clang offload bundles), SPIR-V and host ELF shared objects. invalid_argument names what is
// wrong (truncated header, entries past the end, unrecognised leading bytes). Thread-safe.
Result<ModuleImageInfo> inspect_module_image(std::span<const std::byte> image) noexcept;

} // namespace devrt

#endif // DEVRT_BACKEND_MODULE_IMAGE_HPP
