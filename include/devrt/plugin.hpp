// SPDX-License-Identifier: Apache-2.0
// Backend plugins: shared objects (libdevrt_<name>.so) that hand the registry their backend
// tables through one C entry point (DEVRT_PLUGIN_ENTRY, devrt/backend/backend.hpp).
//
// With -Dplugins=true every GPU-API backend is such a plugin, installed into <libdir>/devrt/.
// Autoload runs once, on the first use of Registry::global(): it loads each built-in plugin that
// is present and every other libdevrt_*.so found on the search path. A built-in plugin that is
// missing stays registered as "unavailable: plugin not installed"; one that fails to load is
// reported (path and root cause) as a warning and changes nothing. Environment:
//   DEVRT_PLUGIN_PATH=dir:dir     searched first
//   DEVRT_BACKEND_AUTOLOAD=0      no autoload (load_backend() still works)
//   DEVRT_DISABLE=cuda,rocm       skip these names
// Plugins are opened RTLD_NOW | RTLD_LOCAL and never unloaded once registered.
#ifndef DEVRT_PLUGIN_HPP
#define DEVRT_PLUGIN_HPP

#include <string>
#include <string_view>
#include <vector>

#include <devrt/status.hpp>

namespace devrt {

// What load_backend() did.
enum class PluginLoad {
  loaded,         // the plugin was found and its backends registered now
  already_loaded, // an earlier call (or autoload) had loaded it
  built_in,       // the backend is part of this binary; there is nothing to load
};

struct LoadedPlugin {
  std::string path;                  // the file that was opened
  std::vector<std::string> backends; // the backend names it registered
};

// Loads the plugin providing backend `name` (libdevrt_<name>.so on the search path) into
// Registry::global(). Idempotent; thread-safe (concurrent calls for one name load it once).
// Errors: not_found (no such file on the search path; the message lists the directories),
// unsupported (this devrt cannot load plugins: firmware builds), or the plugin's failure with its
// path and cause (dlopen text, missing entry symbol, ABI version or size, registration refused,
// or distrust: a file or directory that another user can write, or that belongs to neither this
// user nor root); on error the registry is unchanged.
Result<PluginLoad> load_backend(std::string_view name) noexcept;

// Loads one plugin file (an out-of-tree backend) into Registry::global(). Same errors and
// guarantees as load_backend(). Thread-safe.
Result<PluginLoad> load_plugin(std::string_view path) noexcept;

// True when a plugin providing backend `name` has been loaded. Thread-safe.
bool is_loaded(std::string_view name) noexcept;

// The plugins loaded so far, in load order. Thread-safe (returns a copy).
std::vector<LoadedPlugin> loaded_plugins();

struct PluginFailure {
  std::string path;   // the file that failed
  std::string reason; // why: dlopen's text, a missing entry point, an ABI mismatch, a refusal
};

// Plugin files that autoload or load_all_backends() tried and could not load, in order (each file
// once). Thread-safe (returns a copy).
std::vector<PluginFailure> plugin_failures();

// Loads every plugin on the search path that is not loaded yet: the built-in ones and out-of-tree
// libdevrt_*.so files, whatever DEVRT_BACKEND_AUTOLOAD says (DEVRT_DISABLE is still honoured).
// Returns how many were loaded now; a file that fails is recorded in plugin_failures() and the
// others still load. unsupported where plugins cannot be loaded. Thread-safe.
Result<std::size_t> load_all_backends() noexcept;

// The directories searched, in order: DEVRT_PLUGIN_PATH's absolute entries (relative ones are
// refused and listed in plugin_failures(); a set-user-ID or set-group-ID program ignores the
// variable), the directory of the binary holding devrt + "/devrt", the install directory.
// Thread-safe.
std::vector<std::string> plugin_search_path();

} // namespace devrt

#endif // DEVRT_PLUGIN_HPP
