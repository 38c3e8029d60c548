// SPDX-License-Identifier: Apache-2.0
// The registry's side of the plugin loader. Not public API.
#ifndef DEVRT_SRC_CORE_PLUGINS_PLUGIN_LOADER_HPP
#define DEVRT_SRC_CORE_PLUGINS_PLUGIN_LOADER_HPP

#include <devrt/backend/registry.hpp>

namespace devrt::detail {

// Registers the built-in plugins (loaded, or placeholders saying why not) and every out-of-tree
// plugin on the search path into `registry`, honouring DEVRT_BACKEND_AUTOLOAD and DEVRT_DISABLE.
// Failures are logged as warnings. Called once, by Registry::global(); not thread-safe by itself.
void autoload_plugins(Registry& registry) noexcept;

} // namespace devrt::detail

#endif // DEVRT_SRC_CORE_PLUGINS_PLUGIN_LOADER_HPP
