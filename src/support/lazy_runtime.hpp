// SPDX-License-Identifier: Apache-2.0
// The state a dlopen-based backend builds on first use: created once, thread-safely, by
// `Discover`, and never destroyed (vendor drivers outlive static destructors). Not public API.
#ifndef DEVRT_SRC_SUPPORT_LAZY_RUNTIME_HPP
#define DEVRT_SRC_SUPPORT_LAZY_RUNTIME_HPP

#include <devrt/status.hpp>

namespace devrt::detail {

// Runtime has a `Status status` member; Discover fills the rest and returns why the backend is
// unavailable, if it is. Thread-safe.
template <class Runtime, Status (*Discover)(Runtime&)>
Runtime& lazy_runtime() noexcept {
  static Runtime* runtime = [] {
    auto* r = new Runtime();
    r->status = Discover(*r);
    return r;
  }();
  return *runtime;
}

} // namespace devrt::detail

#endif // DEVRT_SRC_SUPPORT_LAZY_RUNTIME_HPP
