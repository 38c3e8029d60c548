// SPDX-License-Identifier: Apache-2.0
#include "support/environment_variables.hpp"

#include <cstdlib>

namespace devrt::detail {

const char* lookup_env(const char* name) noexcept {
#if defined(__GLIBC__)
  const char* text = ::secure_getenv(name); // NOLINT(concurrency-mt-unsafe)
#else
  const char* text = std::getenv(name); // NOLINT(concurrency-mt-unsafe)
#endif
  return text != nullptr && text[0] != '\0' ? text : nullptr;
}

const char* read_path_list_env(EnvName<EnvKind::path_list> name) noexcept { return lookup_env(name.name()); }

const char* read_program_env(EnvName<EnvKind::program> name) noexcept { return lookup_env(name.name()); }

const char* read_text_env(EnvName<EnvKind::text> name) noexcept { return lookup_env(name.name()); }

const char* read_library_env(EnvName<EnvKind::library> name) noexcept { return lookup_env(name.name()); }

} // namespace devrt::detail
