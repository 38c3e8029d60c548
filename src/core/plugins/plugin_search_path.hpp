// SPDX-License-Identifier: Apache-2.0
// Where plugins are looked for (devrt::plugin_search_path, docs/architecture.md "Plugins"): the
// search order's one definition, the environment variables that steer it (DEVRT_PLUGIN_PATH,
// DEVRT_DISABLE), and the names a plugin file has. The loader (plugin_loader.cpp) and start-up's
// cheap "is there any plugin at all" walk both use it. Not public API.
#ifndef DEVRT_SRC_CORE_PLUGINS_PLUGIN_SEARCH_PATH_HPP
#define DEVRT_SRC_CORE_PLUGINS_PLUGIN_SEARCH_PATH_HPP

#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/registry/builtin_backends.hpp"
#include "support/environment.hpp"

namespace devrt::detail {

// A plugin's file is libdevrt_<stem>.so.
inline constexpr std::string_view kPluginPrefix = "libdevrt_";
inline constexpr std::string_view kPluginSuffix = ".so";
inline bool is_plugin_file(std::string_view file) noexcept {
  return file.size() > kPluginPrefix.size() + kPluginSuffix.size() && file.starts_with(kPluginPrefix) &&
         file.ends_with(kPluginSuffix);
}
// The stem of a file is_plugin_file accepts.
inline std::string_view plugin_stem(std::string_view file) noexcept {
  return file.substr(kPluginPrefix.size(), file.size() - kPluginPrefix.size() - kPluginSuffix.size());
}

// The path of the binary that holds this code (the executable, or a shared libdevrt); empty when
// unknown. `buffer` holds the path when it must be read. No heap.
std::string_view binary_path(std::span<char> buffer) noexcept;
// True when `directory` lies inside the build tree this devrt was built in (a test, devrt-info
// or an application of a parent project, not yet installed): the build's plugin directory is then
// searched too, as libtool's uninstalled libraries are found.
bool in_build_tree(std::string_view directory) noexcept;

// Calls visit(entry) for each DEVRT_PLUGIN_PATH entry, relative ones included, until it returns
// true; true then (a set-user-ID or set-group-ID program sees no entry: support/environment.hpp).
// No heap.
template <class Visit>
bool visit_plugin_path_variable(Visit visit) noexcept {
  return visit_list(read_path_list_env("DEVRT_PLUGIN_PATH"), ':', visit);
}

// The plugin search order, its one definition: DEVRT_PLUGIN_PATH's absolute entries (the loader
// refuses relative ones), the folder devrt beside the binary holding this code, the build tree's
// plugin folder when that binary lies in the build tree, the install folder. Calls
// visit(directory, suffix) for each (the folder is the two joined) until it returns true; true
// then. No heap: start-up walks it before anything is allocated.
template <class Visit>
bool visit_search_path(Visit visit) noexcept {
  if (visit_plugin_path_variable([&](std::string_view entry) { return entry.front() == '/' && visit(entry, ""); }))
    return true;
  char buffer[1024]; // a longer path than this is found by dladdr or AT_EXECFN, or not at all
  std::string_view binary = binary_path(buffer);
  if (!binary.empty()) {
    std::size_t slash = binary.rfind('/');
    std::string_view directory = slash == std::string_view::npos ? std::string_view(".") : binary.substr(0, slash);
    if (visit(directory, "/devrt")) return true;
    if (in_build_tree(directory) && visit(kPluginBuildDir, "")) return true;
  }
  return visit(kPluginInstallDir, "");
}

// True when some directory on the search path holds a file named libdevrt_<something>.so, walked
// in stack buffers: with no plugin anywhere (a static build's usual case) autoload then costs a few
// system calls and no heap, and start-up touches no more pages than it must.
bool search_path_has_plugins() noexcept;

// The first file named libdevrt_<stem>.so in `directories`, or "".
std::string find_plugin(std::string_view stem, const std::vector<std::string>& directories);
// The directory part of `path` ("." when it has none).
std::string directory_of(std::string path);

// DEVRT_DISABLE's text (null when unset), and its names: the plugins not to load.
const char* disable_variable() noexcept;
std::vector<std::string> disabled_plugins();
bool is_disabled(const std::vector<std::string>& disabled, std::string_view name) noexcept;

// `items` joined with ", ", for messages.
std::string joined(const std::vector<std::string>& items);

} // namespace devrt::detail

#endif // DEVRT_SRC_CORE_PLUGINS_PLUGIN_SEARCH_PATH_HPP
