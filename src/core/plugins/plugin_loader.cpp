// SPDX-License-Identifier: Apache-2.0
// The plugin loader: load_backend(), autoload, and the checks that keep a broken plugin from
// touching the registry (where plugins are looked for is plugin_search_path.cpp's; the stand-ins
// for plugins that are not there are plugin_placeholder.cpp's).
#include <devrt/plugin.hpp>

#include <devrt/backend/backend.hpp>
#include <devrt/log.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/plugins/plugin_file.hpp"
#include "core/plugins/plugin_loader.hpp"
#include "core/plugins/plugin_placeholder.hpp"
#include "core/plugins/plugin_search_path.hpp"
#include "core/registry/builtin_backends.hpp"
#include "support/environment.hpp"

namespace devrt {

using detail::directory_of;
using detail::disabled_plugins;
using detail::find_plugin;
using detail::is_disabled;
using detail::is_plugin_file;
using detail::joined;
using detail::visit_plugin_path_variable;

namespace {

struct LoaderState {
  std::mutex mutex;
  std::vector<LoadedPlugin> loaded;
  std::vector<PluginFailure> failures;
};

LoaderState& state() {
  static LoaderState* s = new LoaderState();
  return *s;
}

// What changed since the ABI a plugin was built for, said when it is refused.
const char* abi_difference(std::uint32_t version) noexcept {
  switch (version) {
  case 1: return " (its devices are indexes, not objects: ABI 2 made them objects)";
  case 2: return " (its table-level functions take no context: ABI 3 passes the table's)";
  case 3: return " (its copy descriptors carry device indexes beside the device objects: ABI 4 dropped them)";
  default: return "";
  }
}

// Why the plugin at `path` must not be loaded, or "" when it may: the file (after symbolic links)
// and the directory that names it belong to this user or root, and no other user can write
// them (a writable directory lets another user swap the file). Group write is accepted only for
// the user's own group (the user-private-group convention of umask 002).
std::string distrust(const std::string& path) {
  if (path.empty() || path.front() != '/') return "its path is not absolute";
  auto check = [](const std::string& checked, const char* what) -> std::string {
    struct stat info {};
    if (::stat(checked.c_str(), &info) != 0) {
      return std::string("cannot check its ") + what + " " + checked + ": " + std::strerror(errno);
    }
    const uid_t user = ::geteuid();
    if (info.st_uid != 0 && info.st_uid != user) {
      return std::string("its ") + what + " " + checked + " belongs to uid " + std::to_string(info.st_uid) +
             ", neither root nor this user (uid " + std::to_string(user) + ")";
    }
    bool others_write = (info.st_mode & S_IWOTH) != 0 || ((info.st_mode & S_IWGRP) != 0 && info.st_gid != ::getegid());
    if (others_write) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
      return std::string("its ") + what + " " + checked + " is writable by other users (mode " + mode + ")";
    }
    return {};
  };
  std::string why = check(path, "file");
  if (why.empty()) why = check(directory_of(path), "directory");
  return why;
}

// Remembers that `path` failed to load (once per file: a retry's reason replaces the old one).
// Caller holds the mutex.
void record_failure(const std::string& path, std::string_view reason) {
  DEVRT_LOG(warning, "plugins: ", reason);
  for (PluginFailure& failure : state().failures) {
    if (failure.path == path) {
      failure.reason = std::string(reason);
      return;
    }
  }
  state().failures.push_back(PluginFailure{path, std::string(reason)});
}

// Records a refusal for each relative DEVRT_PLUGIN_PATH entry (visit_search_path leaves them
// out). Caller holds the mutex.
void refuse_relative_entries() {
  visit_plugin_path_variable([](std::string_view entry) {
    if (entry.front() != '/') {
      record_failure(std::string(entry), "DEVRT_PLUGIN_PATH entry '" + std::string(entry) +
                                             "' is relative (it would name another directory in each working "
                                             "directory): refused");
    }
    return false;
  });
}

// The search path's directories, with a refusal recorded for each relative DEVRT_PLUGIN_PATH
// entry. Caller holds the mutex.
std::vector<std::string> searched_directories() {
  refuse_relative_entries();
  return plugin_search_path();
}

bool loaded_from(std::string_view path) {
  for (const LoadedPlugin& plugin : state().loaded) {
    if (plugin.path == path) return true;
  }
  return false;
}

bool recorded(std::string_view backend) {
  for (const LoadedPlugin& plugin : state().loaded) {
    for (const std::string& name : plugin.backends) {
      if (name == backend) return true;
    }
  }
  return false;
}

// ---- Loading one file ------------------------------------------------------------------------

// Opens `path`, checks its entry point and registers its tables into `registry` all or none.
// `expected` (may be empty) is a backend name the plugin must provide. Caller holds the mutex.
Status load_file(Registry& registry, const std::string& path, std::string_view expected) {
  if (std::string why = distrust(path); !why.empty()) {
    return make_error(ErrorCode::invalid_argument, "plugin ", path, " refused: ", why);
  }
  if (std::string why = detail::shared_object_problem(path); !why.empty()) {
    return make_error(ErrorCode::invalid_argument, "plugin ", path, " refused before dlopen: ", why);
  }
  dlerror();
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return make_error(ErrorCode::invalid_argument, "plugin ", path, ": dlopen failed: ", why != nullptr ? why : "?");
  }
  // Nothing of the plugin is registered until every check passed; on failure it is closed again.
  auto refuse = [&](Status status) {
    ::dlclose(handle);
    return status;
  };
  void* symbol = ::dlsym(handle, DEVRT_PLUGIN_ENTRY_SYMBOL);
  if (symbol == nullptr) {
    return refuse(make_error(ErrorCode::invalid_argument, "plugin ", path, " has no ", DEVRT_PLUGIN_ENTRY_SYMBOL,
                             " entry point (not a devrt plugin?)"));
  }
  devrt_plugin_entry_fn entry = nullptr;
  std::memcpy(&entry, &symbol, sizeof symbol);
  const devrt_plugin_info* info = entry();
  if (info == nullptr) return refuse(make_error(ErrorCode::invalid_argument, "plugin ", path, ": entry returned null"));
  if (info->abi_version != DEVRT_BACKEND_ABI_VERSION) {
    return refuse(make_error(ErrorCode::abi_mismatch, "plugin ", path, " speaks backend ABI version ",
                             info->abi_version, ", this devrt speaks ", DEVRT_BACKEND_ABI_VERSION,
                             abi_difference(info->abi_version), ": rebuild it against this devrt's headers"));
  }
  if (info->struct_size < sizeof(devrt_plugin_info)) {
    return refuse(make_error(ErrorCode::abi_mismatch, "plugin ", path, ": its devrt_plugin_info is ", info->struct_size,
                             " bytes, expected ", sizeof(devrt_plugin_info)));
  }
  if (info->table_count == 0 || info->table_count > DEVRT_PLUGIN_MAX_TABLES || info->tables == nullptr) {
    return refuse(make_error(ErrorCode::invalid_argument, "plugin ", path, " offers ", info->table_count,
                             " backend tables (want 1 to ", DEVRT_PLUGIN_MAX_TABLES, ")"));
  }
  std::span<const devrt_backend_table* const> tables(info->tables, info->table_count);
  bool has_expected = expected.empty();
  for (const devrt_backend_table* table : tables) {
    if (table != nullptr && table->name != nullptr && expected == table->name) has_expected = true;
  }
  if (!has_expected) {
    return refuse(
        make_error(ErrorCode::invalid_argument, "plugin ", path, " does not provide backend '", expected, "'"));
  }
  Status added = registry.add_group(tables);
  if (!added.ok()) return refuse(make_error(added.code(), "plugin ", path, ": ", added.message()));
  LoadedPlugin record;
  record.path = path;
  for (const devrt_backend_table* table : tables) record.backends.emplace_back(table->name);
  if (!recorded(record.backends.front())) state().loaded.push_back(std::move(record));
  DEVRT_LOG(debug, "plugins: loaded ", path);
  return Status();
}

// Backend name -> the built-in plugin providing it, or nullptr.
const detail::BuiltinPlugin* builtin_plugin_for(std::string_view name) {
  for (std::size_t i = 0; i < detail::kBuiltinPluginCount; ++i) {
    if (name == detail::kBuiltinPlugins[i].name) return &detail::kBuiltinPlugins[i];
  }
  return nullptr;
}

Result<PluginLoad> load_stem(std::string_view stem, std::string_view expected) {
  Registry& registry = Registry::global(); // autoload first, outside the loader's lock
  std::lock_guard<std::mutex> lock(state().mutex);
  if (recorded(expected)) return PluginLoad::already_loaded;
  BackendRef existing = registry.find(expected);
  if (existing && (existing.table()->capabilities & DEVRT_CAP_PLACEHOLDER) == 0) return PluginLoad::built_in;
  std::vector<std::string> directories = searched_directories();
  std::string path = find_plugin(stem, directories);
  if (path.empty()) {
    return make_error(ErrorCode::not_found, "load_backend(", expected, "): no ", detail::kPluginPrefix, stem,
                      detail::kPluginSuffix, " in the plugin search path (", joined(directories), ")");
  }
  DEVRT_RETURN_IF_ERROR(load_file(registry, path, expected));
  return PluginLoad::loaded;
}

} // namespace

Result<PluginLoad> load_backend(std::string_view name) noexcept {
  const detail::BuiltinPlugin* builtin = builtin_plugin_for(name);
  return load_stem(builtin != nullptr ? std::string_view(builtin->file_stem) : name, name);
}

Result<PluginLoad> load_plugin(std::string_view path) noexcept {
  Registry& registry = Registry::global();
  std::lock_guard<std::mutex> lock(state().mutex);
  for (const LoadedPlugin& plugin : state().loaded) {
    if (plugin.path == path) return PluginLoad::already_loaded;
  }
  DEVRT_RETURN_IF_ERROR(load_file(registry, std::string(path), {}));
  return PluginLoad::loaded;
}

bool is_loaded(std::string_view name) noexcept {
  std::lock_guard<std::mutex> lock(state().mutex);
  return recorded(name);
}

std::vector<LoadedPlugin> loaded_plugins() {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().loaded;
}

namespace {

bool is_builtin_stem(std::string_view stem) {
  for (std::size_t i = 0; i < detail::kBuiltinPluginCount; ++i) {
    if (stem == detail::kBuiltinPlugins[i].file_stem) return true;
  }
  return false;
}

// Out-of-tree plugins: every libdevrt_*.so on the search path that is not a built-in plugin's
// file (the first one of a name wins). Returns how many were loaded now. Caller holds the mutex.
std::size_t load_out_of_tree(Registry& registry, const std::vector<std::string>& directories,
                             const std::vector<std::string>& disabled) {
  std::size_t count = 0;
  std::vector<std::string> seen;
  for (const std::string& directory : directories) {
    errno = 0;
    DIR* dir = ::opendir(directory.c_str());
    if (dir == nullptr) {
      if (errno != ENOENT) {
        DEVRT_LOG(warning, "plugins: cannot read plugin directory ", directory, ": ", std::strerror(errno));
      }
      continue;
    }
    while (dirent* entry = ::readdir(dir)) {
      std::string_view file = entry->d_name;
      if (!is_plugin_file(file)) continue;
      std::string stem(detail::plugin_stem(file));
      bool duplicate = false;
      for (const std::string& name : seen) duplicate |= name == stem;
      if (is_builtin_stem(stem) || duplicate || is_disabled(disabled, stem)) continue;
      seen.push_back(stem);
      std::string path = directory + "/" + std::string(file);
      if (loaded_from(path)) continue;
      Status loaded = load_file(registry, path, {});
      if (loaded.ok()) {
        ++count;
      } else {
        record_failure(path, loaded.message());
      }
    }
    ::closedir(dir);
  }
  return count;
}

} // namespace

std::vector<PluginFailure> plugin_failures() {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().failures;
}

Result<std::size_t> load_all_backends() noexcept {
  Registry& registry = Registry::global(); // autoload first, outside the loader's lock
  std::lock_guard<std::mutex> lock(state().mutex);
  std::vector<std::string> directories = searched_directories();
  const std::vector<std::string> disabled = disabled_plugins();
  std::size_t count = 0;
  for (std::size_t i = 0; i < detail::kBuiltinPluginCount; ++i) {
    const detail::BuiltinPlugin& plugin = detail::kBuiltinPlugins[i];
    if (recorded(plugin.name) || is_disabled(disabled, plugin.file_stem)) continue;
    std::string path = find_plugin(plugin.file_stem, directories);
    if (path.empty()) continue; // missing: skipped, its placeholder says why
    Status loaded = load_file(registry, path, plugin.name);
    if (loaded.ok()) {
      ++count;
    } else {
      record_failure(path, loaded.message());
    }
  }
  return count + load_out_of_tree(registry, directories, disabled);
}

namespace detail {

namespace {

// Reports each DEVRT_DISABLE entry that does nothing in this process: a name that is no backend
// or plugin devrt knows (a typo such as "opencll"), and a backend compiled into the library,
// which DEVRT_DISABLE cannot remove (it skips plugins only). Recorded as plugin failures under
// the name "DEVRT_DISABLE", so devrt-info and devrt.plugin_failures() show them. Caller holds the
// mutex.
void check_disable_list(const std::vector<std::string>& names, const std::vector<std::string>& directories) {
  if (names.empty()) return;
  auto contains = [](const std::vector<std::string>& list, std::string_view name) {
    for (const std::string& item : list) {
      if (item == name) return true;
    }
    return false;
  };
  std::vector<std::string> known;
  auto add_known = [&](std::string_view name) {
    if (!contains(known, name)) known.emplace_back(name);
  };
  for (std::size_t i = 0; i < kBuiltinPluginCount; ++i) {
    add_known(kBuiltinPlugins[i].file_stem);
    add_known(kBuiltinPlugins[i].name);
  }
  for (const std::string& directory : directories) {
    DIR* dir = ::opendir(directory.c_str());
    if (dir == nullptr) continue;
    while (const dirent* entry = ::readdir(dir)) {
      std::string_view file = entry->d_name;
      if (is_plugin_file(file)) add_known(plugin_stem(file));
    }
    ::closedir(dir);
  }
  std::string built_in_names;
  for (std::size_t i = 0; i < kBuiltinBackendCount; ++i) {
    if (!built_in_names.empty()) built_in_names += ", ";
    built_in_names += kBuiltinBackendTables[i]->name;
  }
  for (const std::string& name : names) {
    if (contains(known, name)) continue;
    bool built_in = false;
    for (std::size_t i = 0; i < kBuiltinBackendCount; ++i) built_in |= name == kBuiltinBackendTables[i]->name;
    if (built_in) {
      record_failure("DEVRT_DISABLE", "DEVRT_DISABLE names '" + name +
                                          "', which is compiled into this devrt, not a plugin: "
                                          "DEVRT_DISABLE only skips plugins, so " +
                                          name + " stays available (a build with -D" + name +
                                          "=disabled leaves it out)");
    } else {
      std::string plugins;
      for (const std::string& item : known) plugins += (plugins.empty() ? "" : ", ") + item;
      record_failure("DEVRT_DISABLE", "DEVRT_DISABLE names '" + name +
                                          "', which is no backend or plugin of this devrt "
                                          "(compiled in: " +
                                          built_in_names + "; plugins: " +
                                          (plugins.empty() ? std::string("none") : plugins) + "): ignored");
    }
  }
}

void autoload_found_plugins(Registry& registry, bool autoload) noexcept {
  std::lock_guard<std::mutex> lock(state().mutex);
  std::vector<std::string> directories = searched_directories();
  const std::vector<std::string> disabled = disabled_plugins();
  // Built-in plugins: loaded, or a placeholder per backend saying why not.
  for (std::size_t i = 0; i < kBuiltinPluginCount; ++i) {
    const BuiltinPlugin& plugin = kBuiltinPlugins[i];
    if (i > 0 && std::string_view(kBuiltinPlugins[i - 1].file_stem) == plugin.file_stem) continue;
    std::string reason;
    if (is_disabled(disabled, plugin.file_stem)) {
      reason = "disabled by DEVRT_DISABLE";
    } else if (!autoload) {
      reason = "plugin autoload is off (DEVRT_BACKEND_AUTOLOAD=0); devrt::load_backend(\"" +
               std::string(plugin.file_stem) + "\") loads it";
    } else {
      std::string path = find_plugin(plugin.file_stem, directories);
      if (path.empty()) {
        reason = "plugin " + std::string(kPluginPrefix) + plugin.file_stem + std::string(kPluginSuffix) +
                 " not installed (searched " + joined(directories) + ")";
      } else {
        Status loaded = load_file(registry, path, plugin.name);
        if (loaded.ok()) continue;
        record_failure(path, loaded.message());
        reason = std::string(loaded.message());
      }
    }
    for (std::size_t j = i;
         j < kBuiltinPluginCount && std::string_view(kBuiltinPlugins[j].file_stem) == plugin.file_stem; ++j) {
      add_placeholder(registry, kBuiltinPlugins[j], reason);
    }
  }
  if (autoload) load_out_of_tree(registry, directories, disabled);
  check_disable_list(disabled, directories);
}

} // namespace

DEVRT_STARTUP_CODE void autoload_plugins(Registry& registry) noexcept {
  bool autoload = read_boolean_env("DEVRT_BACKEND_AUTOLOAD", true);
  // No built-in plugins to load or stand in for, and nothing out of tree: done, without the heap.
  // DEVRT_DISABLE is checked on the slow path: a name there is worth the few allocations.
  const char* disabled = disable_variable();
  const bool check_disabled = disabled != nullptr && disabled[0] != '\0';
  if (kBuiltinPluginCount == 0 && !check_disabled && (!autoload || !search_path_has_plugins())) return;
  autoload_found_plugins(registry, autoload);
}

} // namespace detail

} // namespace devrt
