// SPDX-License-Identifier: Apache-2.0
// Allocations whose requested alignment exceeds what a vendor allocator guarantees: the backend
// allocates `alignment - 1` extra bytes, hands out the aligned address and records the base here
// so that free() can find it. Not public API.
#ifndef DEVRT_SRC_SUPPORT_OVER_ALIGNED_HPP
#define DEVRT_SRC_SUPPORT_OVER_ALIGNED_HPP

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace devrt::detail {

// Thread-safe. Lookups cost one relaxed load while no over-aligned allocation is live.
class OverAlignedMap {
public:
  // The aligned address inside [base, base + alignment - 1 + nbytes), recorded when it differs.
  std::uintptr_t align(std::uintptr_t base, std::size_t alignment) {
    std::uintptr_t aligned = (base + alignment - 1) & ~(std::uintptr_t{alignment} - 1);
    std::lock_guard<std::mutex> lock(mutex_);
    bases_[aligned] = base;
    live_.store(bases_.size(), std::memory_order_relaxed);
    return aligned;
  }
  // The base of an address handed out by align(), removed from the map; `address` itself when it
  // was never over-aligned.
  std::uintptr_t release(std::uintptr_t address) {
    if (live_.load(std::memory_order_relaxed) == 0) return address;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = bases_.find(address);
    if (it == bases_.end()) return address;
    std::uintptr_t base = it->second;
    bases_.erase(it);
    live_.store(bases_.size(), std::memory_order_relaxed);
    return base;
  }

private:
  std::mutex mutex_;
  std::atomic<std::size_t> live_{0};
  std::unordered_map<std::uintptr_t, std::uintptr_t> bases_;
};

} // namespace devrt::detail

#endif // DEVRT_SRC_SUPPORT_OVER_ALIGNED_HPP
