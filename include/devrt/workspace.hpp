// SPDX-License-Identifier: Apache-2.0
// Workspaces: temporary device blocks from per-device pools (TVM's AllocWorkspace/FreeWorkspace).
// The pools themselves (WorkspacePool, workspace_pool()) are in <devrt/backend/workspace_pool.hpp>.
#ifndef DEVRT_WORKSPACE_HPP
#define DEVRT_WORKSPACE_HPP

#include <cstddef>
#include <cstdint>

#include <devrt/device.hpp>
#include <devrt/status.hpp>

namespace devrt {

class WorkspacePool;
class Buffer;

// What a pool holds and how well it serves, at one moment (counters are summed over threads).
struct PoolStats {
  std::size_t reserved_bytes = 0;        // held from the backend: in use plus cached
  std::size_t cached_bytes = 0;          // free blocks kept for reuse (shared list and thread caches)
  std::size_t cached_blocks = 0;         // how many blocks those are
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
      : pool_(detail::exchange(other.pool_, nullptr)), data_(detail::exchange(other.data_, nullptr)),
        size_(detail::exchange(other.size_, 0)), size_class_(other.size_class_) {}
  Workspace& operator=(Workspace&& other) noexcept {
    if (this != &other) {
      reset();
      pool_ = detail::exchange(other.pool_, nullptr);
      data_ = detail::exchange(other.data_, nullptr);
      size_ = detail::exchange(other.size_, 0);
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

// A block of at least nbytes from the process-wide pool of `device` (WorkspacePool::allocate on
// workspace_pool(device)); nbytes == 0 gives an empty Workspace. Thread-safe.
Result<Workspace> allocate_workspace(Device device, std::size_t nbytes) noexcept;

} // namespace devrt

#endif // DEVRT_WORKSPACE_HPP
