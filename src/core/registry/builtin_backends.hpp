// SPDX-License-Identifier: Apache-2.0
// The backends compiled into this libdevrt, listed by the generated builtin_backends.cpp.
#ifndef DEVRT_SRC_CORE_REGISTRY_BUILTIN_BACKENDS_HPP
#define DEVRT_SRC_CORE_REGISTRY_BUILTIN_BACKENDS_HPP

#include <cstddef>
#include <cstdint>

#include <devrt/backend/backend_abi.h>

// Marks code that runs once, when the registry becomes ready: the linker groups .text.startup.*
// together, so that start-up touches one or two pages of code instead of one per source file
// (each first touch of a page is a page fault, ~10 us on the reference VM).
#define DEVRT_STARTUP_CODE [[gnu::section(".text.startup.devrt"), gnu::noinline]]

namespace devrt::detail {

// The tables of the backends built into libdevrt, as data: registering them at start-up reads
// these pointers and touches no backend's code (each first touch of a code page is a page fault,
// ~10 us on the reference VM). Referencing the tables is also what keeps every enabled backend's
// object file in a statically linked program.
extern const devrt_backend_table* const kBuiltinBackendTables[];
extern const std::size_t kBuiltinBackendCount;

// A backend this build installs as a plugin (-Dplugins=true): libdevrt_<file_stem>.so provides
// backend `name` of device kind `kind`.
struct BuiltinPlugin {
  const char* file_stem;
  const char* name;
  std::int32_t kind;
};
extern const BuiltinPlugin kBuiltinPlugins[];
extern const std::size_t kBuiltinPluginCount;
// <prefix>/<libdir>/devrt, where those plugins are installed.
extern const char kPluginInstallDir[];
// The build tree this devrt was built in (Meson's top build root, a parent project's when devrt is
// a subproject) and the folder in it that holds the plugins just built: searched by binaries that
// run from inside that tree.
extern const char kBuildRoot[];
extern const char kPluginBuildDir[];

} // namespace devrt::detail

#endif // DEVRT_SRC_CORE_REGISTRY_BUILTIN_BACKENDS_HPP
