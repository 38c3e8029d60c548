// SPDX-License-Identifier: Apache-2.0
// Storage for process-lifetime singletons that are never destroyed, so that no backend or pool
// is torn down while another static destructor or a late thread may still use it.
#ifndef DEVRT_DETAIL_NO_DESTROY_HPP
#define DEVRT_DETAIL_NO_DESTROY_HPP

#include <new>
#include <utility>

namespace devrt::detail {

template <class T>
class NoDestroy {
public:
  template <class... Args>
  explicit NoDestroy(Args&&... args) {
    ::new (static_cast<void*>(&value_)) T(std::forward<Args>(args)...);
  }
  NoDestroy(const NoDestroy&) = delete;
  NoDestroy& operator=(const NoDestroy&) = delete;
  ~NoDestroy() {}

  T& get() noexcept { return value_; }

private:
  union {
    T value_;
  };
};

} // namespace devrt::detail

#endif // DEVRT_DETAIL_NO_DESTROY_HPP
