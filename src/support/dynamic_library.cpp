// SPDX-License-Identifier: Apache-2.0
#include "support/dynamic_library.hpp"

#include <dlfcn.h>

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

void* DynamicLibrary::symbol(const char* name) const noexcept {
  return handle_ != nullptr ? dlsym(handle_, name) : nullptr;
}

Status missing_symbol(const DynamicLibrary& library, const char* name, const char* why) noexcept {
  return make_error(ErrorCode::unavailable, library.path(), " lacks ", name, why);
}

} // namespace devrt::detail
