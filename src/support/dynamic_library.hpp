// SPDX-License-Identifier: Apache-2.0
// Opening vendor runtimes at run time (hosted platforms only), one loader for every library devrt
// opens: a site declares the library (VendorLibrary: its sonames, the variable that overrides
// them, how to install it) and its symbol table; the loader applies the override rule and writes
// the one "unavailable" message (docs/environment.md, "Libraries"). Not public API.
#ifndef DEVRT_SRC_SUPPORT_DYNAMIC_LIBRARY_HPP
#define DEVRT_SRC_SUPPORT_DYNAMIC_LIBRARY_HPP

#include <initializer_list>
#include <span>
#include <string>

#include <devrt/status.hpp>

#include "support/environment.hpp"

namespace devrt::detail {

// What a site declares about one vendor library.
struct VendorLibrary {
  const char* what;                   // for messages: "no <what>: ..." ("CUDA driver", "UCX")
  std::span<const char* const> names; // sonames (or absolute paths), tried in order
  EnvName<EnvKind::library> variable; // names the one library to open instead
  const char* install_hint;           // "install the NVIDIA driver"
};

// A dlopen handle that is never closed: vendor drivers register atexit handlers and threads that
// must not outlive their code, so devrt keeps them mapped until the process ends.
class DynamicLibrary {
public:
  // Tries `names` in order with RTLD_NOW | RTLD_LOCAL. On failure returns false and sets `reason`
  // to each name's dlerror text. Not thread-safe (call once, under the backend's init).
  bool open(std::initializer_list<const char*> names, std::string& reason) noexcept;
  // Opens `library`: when its variable is set, that alone, and only when it is an absolute path or
  // a bare file name the dynamic loader searches for (a relative path would name another file in
  // each working folder: refused); else `candidates`, or the library's names when there are none.
  // unavailable: "no <what>: <each name's dlerror text> (<install hint>, or name the library in
  // <variable>)". Not thread-safe (call once, under the backend's init).
  Status open(const VendorLibrary& library, std::span<const std::string> candidates = {}) noexcept;
  // The symbol's address, or nullptr. Thread-safe once open() returned.
  void* symbol(const char* name) const noexcept;
  const std::string& path() const noexcept { return path_; }
  bool is_open() const noexcept { return handle_ != nullptr; }
  // dlopen's handle (for dlinfo), or nullptr.
  void* native_handle() const noexcept { return handle_; }

  // Stores symbol `name` into a function-pointer slot of a backend's X-macro table; false when
  // the library lacks it.
  template <class Fn>
  bool resolve(const char* name, Fn*& slot) const noexcept {
    void* address = symbol(name);
    static_assert(sizeof(Fn*) == sizeof(void*));
    __builtin_memcpy(&slot, &address, sizeof address);
    return address != nullptr;
  }

private:
  void* handle_ = nullptr;
  std::string path_;
};

// unavailable: "<library> lacks <name><why>", for a symbol a backend cannot run without.
[[gnu::cold]] Status missing_symbol(const DynamicLibrary& library, const char* name, const char* why) noexcept;

} // namespace devrt::detail

#define DEVRT_DETAIL_SYMBOL_NAME_(x) #x
// The symbol's name after macro expansion (cuda.h maps cuMemAlloc to cuMemAlloc_v2).
#define DEVRT_DETAIL_SYMBOL_NAME(x) DEVRT_DETAIL_SYMBOL_NAME_(x)
#define DEVRT_DETAIL_RESOLVE_ONE(name, ...)                                                                            \
  if (!devrt_resolve_library.resolve(DEVRT_DETAIL_SYMBOL_NAME(name), devrt_resolve_api.name))                          \
    return ::devrt::detail::missing_symbol(devrt_resolve_library, DEVRT_DETAIL_SYMBOL_NAME(name), devrt_resolve_why);
#define DEVRT_DETAIL_RESOLVE_OPTIONAL_ONE(name, ...)                                                                   \
  static_cast<void>(devrt_resolve_library.resolve(DEVRT_DETAIL_SYMBOL_NAME(name), devrt_resolve_api.name));

// Resolves every entry of a backend's X-macro symbol list (`SYMBOLS(X)`, each X(name) or
// X(name, type)) from `library` into the same-named function-pointer members of `api`. In a
// function returning Status: the first missing symbol returns missing_symbol(..., why).
#define DEVRT_RESOLVE_SYMBOLS(library, api, SYMBOLS, why)                                                              \
  do {                                                                                                                 \
    const ::devrt::detail::DynamicLibrary& devrt_resolve_library = (library);                                          \
    auto& devrt_resolve_api = (api);                                                                                   \
    const char* devrt_resolve_why = (why);                                                                             \
    SYMBOLS(DEVRT_DETAIL_RESOLVE_ONE)                                                                                  \
  } while (0)
// The same for symbols a backend can do without: a missing one leaves its member null.
#define DEVRT_RESOLVE_OPTIONAL_SYMBOLS(library, api, SYMBOLS)                                                          \
  do {                                                                                                                 \
    const ::devrt::detail::DynamicLibrary& devrt_resolve_library = (library);                                          \
    auto& devrt_resolve_api = (api);                                                                                   \
    SYMBOLS(DEVRT_DETAIL_RESOLVE_OPTIONAL_ONE)                                                                         \
  } while (0)

#endif // DEVRT_SRC_SUPPORT_DYNAMIC_LIBRARY_HPP
