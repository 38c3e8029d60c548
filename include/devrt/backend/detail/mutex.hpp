// SPDX-License-Identifier: Apache-2.0
// The mutex devrt uses internally: std::mutex, or a no-op where the build is single-threaded
// (a host with no operating system, or DEVRT_SINGLE_THREADED). Both are constexpr-constructible.
#ifndef DEVRT_BACKEND_DETAIL_MUTEX_HPP
#define DEVRT_BACKEND_DETAIL_MUTEX_HPP

#include <devrt/config.hpp>

#if DEVRT_BARE_METAL && !defined(DEVRT_SINGLE_THREADED)
#define DEVRT_SINGLE_THREADED 1
#endif
#if !defined(DEVRT_SINGLE_THREADED)
#include <mutex>
#endif

// Per-thread storage for devrt's internal state. Single-threaded builds may have no thread pointer
// at all (a Hexagon image started without the SDK's runtime), so there it is plain static storage.
#if defined(DEVRT_SINGLE_THREADED)
#define DEVRT_DETAIL_THREAD_LOCAL
#else
#define DEVRT_DETAIL_THREAD_LOCAL [[gnu::tls_model("initial-exec")]] thread_local
#endif

namespace devrt::detail {

#if defined(DEVRT_SINGLE_THREADED)
class Mutex {
public:
  constexpr Mutex() noexcept = default;
  void lock() noexcept {}
  void unlock() noexcept {}
};
#else
using Mutex = std::mutex;
#endif

class LockGuard {
public:
  explicit LockGuard(Mutex& mutex) noexcept : mutex_(mutex) { mutex_.lock(); }
  LockGuard(const LockGuard&) = delete;
  LockGuard& operator=(const LockGuard&) = delete;
  ~LockGuard() { mutex_.unlock(); }

private:
  Mutex& mutex_;
};

} // namespace devrt::detail

#endif // DEVRT_BACKEND_DETAIL_MUTEX_HPP
