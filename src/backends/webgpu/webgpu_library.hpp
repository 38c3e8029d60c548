// SPDX-License-Identifier: Apache-2.0
// Where a webgpu.h implementation is looked for (docs/webgpu.md): the backend's and bench-kernels'
// raw side's one search, so that both open the same library.
#ifndef DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_LIBRARY_HPP
#define DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_LIBRARY_HPP

#include <string>
#include <vector>

#include "support/dynamic_library.hpp"

// The path fixed at configure time (-Dwebgpu_library), empty when none.
#ifndef DEVRT_WEBGPU_LIBRARY_DEFAULT
#define DEVRT_WEBGPU_LIBRARY_DEFAULT ""
#endif

namespace devrt::webgpu {

inline constexpr const char* kLibraryNames[] = {"libwebgpu_dawn.so", "libwgpu_native.so", "libwebgpu_wrapper.so"};

// The per-user folder an implementation may be installed in (tools/install-deps.sh puts Dawn
// there): $XDG_DATA_HOME/devrt/webgpu, or ~/.local/share/devrt/webgpu. Only absolute paths count
// (the XDG base directory rule): never a folder relative to the working directory.
inline std::string user_library_dir() {
  if (const char* data_home = detail::read_path_env("XDG_DATA_HOME")) return std::string(data_home) + "/devrt/webgpu";
  if (const char* home = detail::read_path_env("HOME")) return std::string(home) + "/.local/share/devrt/webgpu";
  return {};
}

inline constexpr detail::VendorLibrary kLibrary{
    "WebGPU implementation", kLibraryNames, "DEVRT_WEBGPU_LIBRARY",
    "Dawn's libwebgpu_dawn.so or wgpu-native's libwgpu_native.so, by name or in ~/.local/share/devrt/webgpu, where "
    "tools/install-deps.sh installs Dawn"};

// Where kLibrary is looked for when DEVRT_WEBGPU_LIBRARY is unset: the configured path, the usual
// names through the dynamic loader's search, then the per-user folder. Thread-safe as getenv is.
inline std::vector<std::string> library_candidates() {
  std::vector<std::string> candidates;
  if (DEVRT_WEBGPU_LIBRARY_DEFAULT[0] != '\0') candidates.emplace_back(DEVRT_WEBGPU_LIBRARY_DEFAULT);
  for (const char* name : kLibraryNames) candidates.emplace_back(name);
  if (std::string dir = user_library_dir(); !dir.empty()) {
    for (const char* name : kLibraryNames) candidates.push_back(dir + "/" + name);
  }
  return candidates;
}

} // namespace devrt::webgpu

#endif // DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_LIBRARY_HPP
