// SPDX-License-Identifier: Apache-2.0
// The plugin loader's check of a file before dlopen. Not public API.
#ifndef DEVRT_SRC_CORE_PLUGINS_PLUGIN_FILE_HPP
#define DEVRT_SRC_CORE_PLUGINS_PLUGIN_FILE_HPP

#include <string>

namespace devrt::detail {

// Why the file at `path` cannot be a shared object for this process, or "" when it may be handed
// to dlopen: an ELF header of this process's class, byte order and machine, of type ET_DYN, whose
// program header table, section header table and segments lie inside the file. glibc maps
// segments without comparing them with the file's size, and a truncated plugin would kill the
// process with SIGBUS on first touch. Thread-safe.
std::string shared_object_problem(const std::string& path);

} // namespace devrt::detail

#endif // DEVRT_SRC_CORE_PLUGINS_PLUGIN_FILE_HPP
