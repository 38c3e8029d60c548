// SPDX-License-Identifier: Apache-2.0
// The plugin loader where there is no dlopen (firmware, DSP builds): every call says so.
#include <devrt/plugin.hpp>

#include "core/plugins/plugin_loader.hpp"

namespace devrt {

namespace {
Status no_dlopen() {
  return Status(ErrorCode::unsupported, "plugins: this devrt was built for a platform without dlopen");
}
} // namespace

Result<PluginLoad> load_backend(std::string_view) noexcept { return no_dlopen(); }
Result<PluginLoad> load_plugin(std::string_view) noexcept { return no_dlopen(); }
bool is_loaded(std::string_view) noexcept { return false; }
std::vector<LoadedPlugin> loaded_plugins() { return {}; }
std::vector<std::string> plugin_search_path() { return {}; }
std::vector<PluginFailure> plugin_failures() { return {}; }
Result<std::size_t> load_all_backends() noexcept { return no_dlopen(); }

namespace detail {
void autoload_plugins(Registry&) noexcept {}
} // namespace detail

} // namespace devrt
