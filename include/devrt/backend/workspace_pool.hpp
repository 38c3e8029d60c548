// SPDX-License-Identifier: Apache-2.0
// Workspace pools: the per-device caches that Workspaces and the Buffer cache come from, for code
// that manages pools (its own, or the process-wide ones) rather than just taking blocks.
#ifndef DEVRT_BACKEND_WORKSPACE_POOL_HPP
#define DEVRT_BACKEND_WORKSPACE_POOL_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>

#include <devrt/backend/detail/mutex.hpp>
#include <devrt/backend/registry.hpp>
#include <devrt/device.hpp>
#include <devrt/status.hpp>
#include <devrt/workspace.hpp>

namespace devrt {

namespace detail {
class MemoryLedger;
struct PoolLedger;
} // namespace detail

// A per-device cache of temporary blocks. Sizes are rounded up to a power of two (64 B .. 1 TiB);
// larger requests go straight to the backend. Blocks are kDefaultAlignment-aligned.
//
// Thread-safe: each thread keeps a small cache of free blocks per pool (no lock on the fast path);
// misses and overflows go to a shared free list under a mutex. Blocks may be freed in any order
// and on any thread. The pool must outlive its Workspaces and must not be in use by other threads
// while it is destroyed.
class WorkspacePool {
public:
  static constexpr std::uint32_t kMinClassShift = 6; // 64 B
  static constexpr std::uint32_t kClassCount = 35;   // up to 2^40 B
  static constexpr std::uint32_t kUncached = 0xffffffffu;

  // `cache_limit_bytes` bounds the bytes the shared free list keeps; a block freed beyond it goes
  // back to the backend.
  WorkspacePool(BackendRef backend, Device device, std::size_t cache_limit_bytes = SIZE_MAX) noexcept;
  WorkspacePool(const WorkspacePool&) = delete;
  WorkspacePool& operator=(const WorkspacePool&) = delete;
  // Frees every cached block. Outstanding Workspaces are a caller error (they are logged).
  ~WorkspacePool();

  // A block of at least nbytes; nbytes == 0 gives an empty Workspace.
  Result<Workspace> allocate(std::size_t nbytes) noexcept;

  // Returns cached free blocks to the backend: the shared list and the calling thread's cache.
  // Other threads' caches (at most kThreadCacheDepth blocks per size class each) are returned
  // when those threads exit. Blocks still in use are unaffected.
  Status release() noexcept;

  Device device() const noexcept { return device_; }
  BackendRef backend() const noexcept { return backend_; }
  // Bytes held by the pool from the backend (in use and cached), cached ones included.
  std::size_t reserved_bytes() const noexcept { return reserved_.load(std::memory_order_relaxed); }
  // Counters and sizes; takes the pool's locks, so not for hot paths. Thread-safe.
  PoolStats stats() const noexcept;
  // Gives every cached block back (every thread's) and sends blocks freed from now on straight
  // back to the backend: for a pool that is going away while blocks are still in use
  // (devrt::shutdown). Not to be called while other threads allocate from the pool.
  Status close() noexcept;

  static constexpr std::uint32_t kThreadCacheDepth = 8;

private:
  friend class Workspace;
  friend class Buffer;
  friend struct WorkspaceThreadCache;
  friend struct detail::PoolLedger;

  // A block of at least nbytes (> 0) and its size class (kUncached: exactly nbytes).
  Result<void*> allocate_block(std::size_t nbytes, std::uint32_t* size_class) noexcept;
  void free_block(void* data, std::uint32_t size_class, std::size_t size) noexcept;
  // Gives a block straight back to the backend instead of caching it.
  Status discard_block(void* data, std::uint32_t size_class, std::size_t size) noexcept;
  void* take_shared(std::uint32_t size_class) noexcept;
  void give_shared(void* const* blocks, std::uint32_t n, std::uint32_t size_class) noexcept;
  Status free_to_backend(void* block, std::size_t bytes) noexcept;
  // Hands the blocks of every thread cache of this pool to the shared list.
  void drain_thread_caches() noexcept;

  BackendRef backend_;
  Device device_;
  std::atomic<std::size_t> reserved_{0};
  // size_t: lock-free on 32-bit firmware too (64-bit atomics there need a libatomic).
  std::atomic<std::size_t> backend_allocations_{0};
  std::atomic<std::size_t> backend_frees_{0};
  const std::size_t cache_limit_bytes_;
  // The device record's ledger of a process-wide pool (devrt::memory_stats), else null.
  detail::MemoryLedger* ledger_ = nullptr;
  std::atomic<bool> closed_{false};
  mutable detail::Mutex mutex_;
  // Under mutex_: bytes in shared_, hits served from it, and the counters of thread caches whose
  // threads have exited.
  std::size_t shared_bytes_ = 0;
  std::uint64_t shared_hits_ = 0;
  std::uint64_t retired_hits_ = 0;
  struct FreeList {
    void** blocks = nullptr;
    std::uint32_t size = 0;
    std::uint32_t capacity = 0;
  };
  FreeList shared_[kClassCount];
};

// The process-wide pool of `device`, created on first use and never destroyed. Thread-safe.
Result<WorkspacePool*> workspace_pool(Device device) noexcept;

} // namespace devrt

#endif // DEVRT_BACKEND_WORKSPACE_POOL_HPP
