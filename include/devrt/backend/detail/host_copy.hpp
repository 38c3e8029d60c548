// SPDX-License-Identifier: Apache-2.0
// Copies between host addresses: the one primitive behind devrt::copy's host fast path and the CPU
// backend's copies.
#ifndef DEVRT_BACKEND_DETAIL_HOST_COPY_HPP
#define DEVRT_BACKEND_DETAIL_HOST_COPY_HPP

#include <atomic>
#include <cstddef>
#include <cstring>

namespace devrt::detail {

// True once Registry::global() holds the CPU backend built into libdevrt as the cpu kind's
// backend (never false again: a built-in backend is never replaced). devrt::copy then copies
// between host spans itself instead of through the table. Defined in registry.cpp.
extern std::atomic<bool> g_host_copy_direct;

// Below this size a copy is always memcpy; at and above it, copy_host_large decides.
inline constexpr std::size_t kMinStreamingCopy = std::size_t{4} << 20;

// Copies at least kMinStreamingCopy bytes: memcpy, or non-temporal stores at and above
// large_copy_threshold().
void copy_host_large(void* dst, const void* src, std::size_t n) noexcept;

// The size from which copy_host uses non-temporal stores (SIZE_MAX: never). Decided once per
// process: DEVRT_NT_COPY_THRESHOLD (bytes; 0 means never) when set, else from the last-level
// cache the machine reports. Thread-safe.
std::size_t large_copy_threshold() noexcept;

// Copies n bytes between non-overlapping host ranges. Up to 64 bytes it is a few overlapping
// loads and stores inline (no call into libc); larger ones are memcpy, or copy_host_large's
// non-temporal stores past the last-level cache. Thread-safe.
[[gnu::always_inline]] inline void copy_host(void* dst, const void* src, std::size_t n) noexcept {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  // Each branch copies a head and a tail that may overlap, so every n in its range is two moves.
  if (n > 64) {
    if (n < kMinStreamingCopy) [[likely]] {
      std::memcpy(dst, src, n);
    } else {
      copy_host_large(dst, src, n);
    }
  } else if (n > 16) {
    if (n > 32) {
      std::memcpy(d, s, 32);
      std::memcpy(d + n - 32, s + n - 32, 32);
    } else {
      std::memcpy(d, s, 16);
      std::memcpy(d + n - 16, s + n - 16, 16);
    }
  } else if (n >= 8) {
    std::memcpy(d, s, 8);
    std::memcpy(d + n - 8, s + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(d, s, 4);
    std::memcpy(d + n - 4, s + n - 4, 4);
  } else if (n > 0) {
    d[0] = s[0];
    d[n / 2] = s[n / 2];
    d[n - 1] = s[n - 1];
  }
}

} // namespace devrt::detail

#endif // DEVRT_BACKEND_DETAIL_HOST_COPY_HPP
