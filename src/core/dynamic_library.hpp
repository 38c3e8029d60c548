// Opening vendor runtimes at run time (hosted platforms only): the first of several sonames that
// loads wins, and every refusal is kept for the "unavailable" message. Not public API.
#ifndef DEVRT_SRC_CORE_DYNAMIC_LIBRARY_HPP
#define DEVRT_SRC_CORE_DYNAMIC_LIBRARY_HPP

#include <initializer_list>
#include <string>

namespace devrt::detail {

// A dlopen handle that is never closed: vendor drivers register atexit handlers and threads that
// must not outlive their code, so devrt keeps them mapped until the process ends.
class DynamicLibrary {
public:
  // Tries `names` in order with RTLD_NOW | RTLD_LOCAL. On failure returns false and sets `reason`
  // to each name's dlerror text. Not thread-safe (call once, under the backend's init).
  bool open(std::initializer_list<const char*> names, std::string& reason) noexcept;
  // The symbol's address, or nullptr. Thread-safe once open() returned.
  void* symbol(const char* name) const noexcept;
  const std::string& path() const noexcept { return path_; }
  bool is_open() const noexcept { return handle_ != nullptr; }

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

} // namespace devrt::detail

#endif // DEVRT_SRC_CORE_DYNAMIC_LIBRARY_HPP
