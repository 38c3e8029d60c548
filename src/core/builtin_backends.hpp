// The backends compiled into this libdevrt, listed by the generated builtin_backends.cpp.
#ifndef DEVRT_SRC_CORE_BUILTIN_BACKENDS_HPP
#define DEVRT_SRC_CORE_BUILTIN_BACKENDS_HPP

#include <cstddef>
#include <cstdint>

#include <devrt/backend_abi.h>

namespace devrt::detail {

using BackendAnchor = const devrt_backend_table* (*)() noexcept;

// Referencing these from the registry's translation unit is what keeps every enabled backend's
// object file (and its tables) in a statically linked program.
extern const BackendAnchor kBuiltinBackendAnchors[];
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

} // namespace devrt::detail

#endif // DEVRT_SRC_CORE_BUILTIN_BACKENDS_HPP
