// SPDX-License-Identifier: Apache-2.0
#include "support/dynamic_library.hpp"

#include <dlfcn.h>

#include <cstring>

namespace devrt::detail {

bool DynamicLibrary::open(std::initializer_list<const char*> names, std::string& reason) noexcept {
  reason.clear();
  for (const char* name : names) {
    handle_ = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle_ != nullptr) {
      path_ = name;
      return true;
    }
    const char* error = dlerror();
    if (!reason.empty()) reason += "; ";
    reason += error != nullptr ? error : name;
  }
  return false;
}

Status DynamicLibrary::open(const VendorLibrary& library, std::span<const std::string> candidates) noexcept {
  const char* variable = library.variable.name();
  auto unavailable = [&](auto&&... detail) {
    return make_error(ErrorCode::unavailable, "no ", library.what, ": ", detail..., " (", library.install_hint,
                      ", or name the library in ", variable, ")");
  };
  if (const char* chosen = read_library_env(library.variable); chosen != nullptr) {
    if (chosen[0] != '/' && std::strchr(chosen, '/') != nullptr) {
      return unavailable(variable, "=", chosen, " is a relative path: name an absolute path or a bare library name");
    }
    std::string reason;
    if (open({chosen}, reason)) return Status();
    return unavailable(variable, "=", chosen, ": ", reason);
  }
  std::string reasons;
  auto try_one = [&](const char* name) {
    std::string reason;
    if (open({name}, reason)) return true;
    reasons += reasons.empty() ? reason : "; " + reason;
    return false;
  };
  if (candidates.empty()) {
    for (const char* name : library.names) {
      if (try_one(name)) return Status();
    }
  } else {
    for (const std::string& name : candidates) {
      if (try_one(name.c_str())) return Status();
    }
  }
  return unavailable(reasons);
}

void* DynamicLibrary::symbol(const char* name) const noexcept {
  return handle_ != nullptr ? dlsym(handle_, name) : nullptr;
}

Status missing_symbol(const DynamicLibrary& library, const char* name, const char* why) noexcept {
  return make_error(ErrorCode::unavailable, library.path(), " lacks ", name, why);
}

} // namespace devrt::detail
