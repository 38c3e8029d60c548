// SPDX-License-Identifier: Apache-2.0
// The state a dlopen-based backend builds on first use: created thread-safely by `Discover`, never
// destroyed (vendor drivers outlive static destructors), and built again after a discovery that
// failed for a reason that may pass. Not public API.
#ifndef DEVRT_SRC_SUPPORT_LAZY_RUNTIME_HPP
#define DEVRT_SRC_SUPPORT_LAZY_RUNTIME_HPP

#include <atomic>
#include <cstdint>
#include <mutex>

#include <devrt/status.hpp>

namespace devrt::detail {

// Runtime has a `Status status` member; Discover fills the rest and returns why the backend is
// unavailable, if it is. A failure with code `unavailable` (no driver, no device) is final; any
// other (a driver call failed: out of memory, a driver error) is retried by get_retrying(). Each
// runtime a retry replaces stays allocated and reachable, since a thread may still read it.
template <class Runtime, Status (*Discover)(Runtime&)>
class LazyRuntime {
public:
  // The current runtime, discovered on first use. Thread-safe.
  static Runtime& get() noexcept {
    Node* node = current_.load(std::memory_order_acquire);
    if (node != nullptr) [[likely]]
      return node->runtime;
    return rebuild(nullptr);
  }
  // The same, discovering again when the last discovery failed for a passing reason: for the
  // calls that start using a backend (availability, device_count). Thread-safe.
  static Runtime& get_retrying() noexcept {
    Node* node = current_.load(std::memory_order_acquire);
    if (node == nullptr) return rebuild(nullptr);
    const Status& status = node->runtime.status;
    if (status.ok() || status.code() == ErrorCode::unavailable) return node->runtime;
    return rebuild(node);
  }

private:
  struct Node {
    Runtime runtime;
    Node* replaced = nullptr; // kept reachable
  };

  static Runtime& rebuild(Node* failed) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    Node* node = current_.load(std::memory_order_acquire);
    if (node != failed) return node->runtime; // another thread got here first
    auto* fresh = new Node();
    fresh->replaced = failed;
    fresh->runtime.status = Discover(fresh->runtime);
    current_.store(fresh, std::memory_order_release);
    return fresh->runtime;
  }

  static inline std::atomic<Node*> current_{nullptr};
  static inline std::mutex mutex_;
};

// What device_count answers from a runtime: its devices; 0 when the backend is unavailable (no
// loader, no driver, no device: final); else the error of a discovery that failed for a reason
// that may pass, so that the caller learns why (the next call discovers again).
template <class Runtime>
Result<std::int32_t> discovered_device_count(const Runtime& rt) noexcept {
  if (rt.status.ok()) return static_cast<std::int32_t>(rt.devices.size());
  if (rt.status.code() == ErrorCode::unavailable) return 0;
  return rt.status;
}

template <class Runtime, Status (*Discover)(Runtime&)>
Runtime& lazy_runtime() noexcept {
  return LazyRuntime<Runtime, Discover>::get();
}

} // namespace devrt::detail

#endif // DEVRT_SRC_SUPPORT_LAZY_RUNTIME_HPP
