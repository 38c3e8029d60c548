// SPDX-License-Identifier: Apache-2.0
// Stand-ins for the built-in plugins that are not loaded: each registers the plugin's name and
// kind, has no devices, and answers "unavailable" with the reason it was not loaded. Internal to
// the plugin loader.
#ifndef DEVRT_SRC_CORE_PLUGINS_PLUGIN_PLACEHOLDER_HPP
#define DEVRT_SRC_CORE_PLUGINS_PLUGIN_PLACEHOLDER_HPP

#include <string_view>

#include <devrt/backend/registry.hpp>

#include "core/registry/builtin_backends.hpp"

namespace devrt::detail {

// Registers a stand-in for `plugin` that explains `reason` (kept for the process; nothing when
// out of memory or refused by the registry). Called under the plugin loader's lock.
void add_placeholder(Registry& registry, const BuiltinPlugin& plugin, std::string_view reason) noexcept;

} // namespace devrt::detail

#endif // DEVRT_SRC_CORE_PLUGINS_PLUGIN_PLACEHOLDER_HPP
