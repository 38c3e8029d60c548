// SPDX-License-Identifier: Apache-2.0
// What this devrt was built from and with, and a description of it together with what it finds
// at run time.
#ifndef DEVRT_BUILD_INFO_HPP
#define DEVRT_BUILD_INFO_HPP

#include <span>
#include <string>
#include <string_view>

namespace devrt {

// One backend this devrt was built with (companions it registers, such as cuda_host, are not
// listed apart).
struct BuiltBackend {
  std::string_view name;           // "cuda": its folder, src/backends/<name>
  std::string_view header_version; // the vendor headers it was compiled against, "none" without
  bool plugin;                     // built as libdevrt_<name>.so rather than into libdevrt.a
};

// Fixed at build time. Strings are static; a dependency that was not used reads "none".
struct BuildInfo {
  std::string_view version;                     // "0.1.0"
  std::string_view git_revision;                // `git describe` of the source tree, or "unknown"
  std::string_view compiler;                    // "gcc", "clang"
  std::string_view compiler_version;            // "12.2.0"
  std::string_view cpp_standard;                // "C++20"
  std::string_view build_type;                  // Meson's buildtype ("release", "debugoptimized", ...)
  std::string_view sanitizers;                  // Meson's b_sanitize ("none", "address,undefined", ...)
  std::string_view backends;                    // enabled backends, comma-separated: "cpu,null"
  bool plugins;                                 // backends built as loadable modules
  bool logging;                                 // DEVRT_LOG compiled in
  std::string_view dlpack_version;              // DLPack headers: "0.6"
  std::string_view fmt_version;                 // {fmt} used by the tools
  std::span<const BuiltBackend> built_backends; // the same backends, with their headers
};

// The build's description. Thread-safe; returns static storage.
const BuildInfo& build_info() noexcept;

// A multi-line, human-readable description: build_info() plus the backends that are available
// now (or why not) and their devices. May load drivers (it asks every backend). Thread-safe.
std::string describe();

// build_info() as one JSON object (devrt-info's "build" key, the C API's devrt_build_info_json):
// flags are JSON booleans; each backend built against vendor headers adds "<name>": "<version>".
// Thread-safe.
std::string build_info_json();

} // namespace devrt

#endif // DEVRT_BUILD_INFO_HPP
