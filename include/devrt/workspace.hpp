// SPDX-License-Identifier: Apache-2.0
// Workspace pools: per-device caches of temporary allocations (TVM's AllocWorkspace/FreeWorkspace).
#ifndef DEVRT_WORKSPACE_HPP
#define DEVRT_WORKSPACE_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

#include <devrt/detail/mutex.hpp>
#include <devrt/device.hpp>
#include <devrt/registry.hpp>
#include <devrt/status.hpp>

namespace devrt {

class WorkspacePool;
class Buffer;

// What a pool holds and how well it serves, at one moment (counters are summed over threads).
struct PoolStats {
  std::size_t reserved_bytes = 0;        // held from the backend: in use plus cached
  std::size_t cached_bytes = 0;          // free blocks kept for reuse (shared list and thread caches)
  std::size_t cache_limit_bytes = 0;     // the most the shared list keeps (thread caches: a few blocks each)
  std::uint64_t hits = 0;                // allocations served from the cache
  std::uint64_t backend_allocations = 0; // allocations that went to the backend
  std::uint64_t backend_frees = 0;       // blocks given back to the backend
};

// One block from a pool, returned to it when the Workspace dies. Move-only. May be released on a
// different thread than the one that allocated it. The pool must outlive it.
class Workspace {
public:
  Workspace() noexcept = default;
  Workspace(Workspace&& other) noexcept
      : pool_(std::exchange(other.pool_, nullptr)), data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)), size_class_(other.size_class_) {}
  Workspace& operator=(Workspace&& other) noexcept {
    if (this != &other) {
      reset();
      pool_ = std::exchange(other.pool_, nullptr);
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      size_class_ = other.size_class_;
    }
    return *this;
  }
  ~Workspace() { reset(); }

  void* data() const noexcept { return data_; }
  // The size asked for; the block may be larger.
  std::size_t size() const noexcept { return size_; }
  // Returns the block to its pool now.
  void reset() noexcept;

private:
  friend class WorkspacePool;
  Workspace(WorkspacePool* pool, void* data, std::size_t size, std::uint32_t size_class) noexcept
      : pool_(pool), data_(data), size_(size), size_class_(size_class) {}

  WorkspacePool* pool_ = nullptr;
  void* data_ = nullptr;
  std::size_t size_ = 0;
  std::uint32_t size_class_ = 0;
};

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

  static constexpr std::uint32_t kThreadCacheDepth = 8;

private:
  friend class Workspace;
  friend class Buffer;
  friend struct WorkspaceThreadCache;

  // A block of at least nbytes (> 0) and its size class (kUncached: exactly nbytes).
  Result<void*> allocate_block(std::size_t nbytes, std::uint32_t* size_class) noexcept;
  void free_block(void* data, std::uint32_t size_class, std::size_t size) noexcept;
  // Gives a block straight back to the backend instead of caching it.
  Status discard_block(void* data, std::uint32_t size_class, std::size_t size) noexcept;
  void* take_shared(std::uint32_t size_class) noexcept;
  void give_shared(void* const* blocks, std::uint32_t n, std::uint32_t size_class) noexcept;
  Status free_to_backend(void* block, std::size_t bytes) noexcept;

  BackendRef backend_;
  Device device_;
  std::atomic<std::size_t> reserved_{0};
  std::atomic<std::uint64_t> backend_allocations_{0};
  std::atomic<std::uint64_t> backend_frees_{0};
  const std::size_t cache_limit_bytes_;
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

// allocate() on workspace_pool(device). Thread-safe.
Result<Workspace> allocate_workspace(Device device, std::size_t nbytes) noexcept;

} // namespace devrt

#endif // DEVRT_WORKSPACE_HPP
