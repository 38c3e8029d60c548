// SPDX-License-Identifier: Apache-2.0
// Where a webgpu.h implementation is looked for (docs/webgpu.md): the backend's and bench-kernels'
// raw side's one search, so that both open the same library.
#ifndef DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_LIBRARY_HPP
#define DEVRT_SRC_BACKENDS_WEBGPU_WEBGPU_LIBRARY_HPP

#include <cstdlib>
#include <string>
#include <vector>

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
  const char* data_home = ::secure_getenv("XDG_DATA_HOME"); // NOLINT(concurrency-mt-unsafe)
  if (data_home != nullptr && data_home[0] == '/') return std::string(data_home) + "/devrt/webgpu";
  const char* home = ::secure_getenv("HOME"); // NOLINT(concurrency-mt-unsafe)
  if (home != nullptr && home[0] == '/') return std::string(home) + "/.local/share/devrt/webgpu";
  return {};
}

// DEVRT_WEBGPU_LIBRARY alone when set; else the configured path, the usual names through the
// dynamic loader's search, then the per-user folder. Thread-safe as getenv is.
inline std::vector<std::string> library_candidates() {
  const char* chosen = ::secure_getenv("DEVRT_WEBGPU_LIBRARY"); // NOLINT(concurrency-mt-unsafe)
  if (chosen != nullptr && chosen[0] != '\0') return {chosen};
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
