// SPDX-License-Identifier: Apache-2.0
// Workspaces and their pools (devrt/workspace.hpp): size classes with per-thread caches
// and a shared list, blocks given back to the backend on close, and the Buffer cache built on them.
#include <devrt/workspace.hpp>

#include <devrt/backend/detail/mutex.hpp>
#include <devrt/backend/registry.hpp>
#include <devrt/backend/workspace_pool.hpp>
#include <devrt/log.hpp>

#include "core/devices/device_record.hpp"
#include "core/execution/capture_hooks.hpp"
#include "core/memory/memory_records.hpp"
#include "support/heap.hpp"

#include <bit>
#include <cstdlib>
#include <cstring>
#include <new>

namespace devrt {
namespace {

// Classes small enough to keep per thread, and how many blocks of each a thread keeps.
constexpr std::uint32_t kThreadCachedClasses = 17; // up to 4 MiB
constexpr std::uint32_t thread_cache_depth(std::uint32_t size_class) noexcept {
  return size_class <= 10 ? WorkspacePool::kThreadCacheDepth : 2; // 2 above 64 KiB
}
constexpr int kSlotsPerThread = 4;

std::uint32_t size_class_of(std::size_t nbytes) noexcept {
  std::size_t units = (nbytes - 1) >> WorkspacePool::kMinClassShift;
  return static_cast<std::uint32_t>(std::bit_width(units));
}
constexpr std::size_t class_bytes(std::uint32_t size_class) noexcept {
  return std::size_t{1} << (size_class + WorkspacePool::kMinClassShift);
}

} // namespace

// One pool's blocks in one thread's cache.
struct WorkspaceThreadSlot {
  std::atomic<WorkspacePool*> pool{nullptr};
  void* blocks[kThreadCachedClasses][WorkspacePool::kThreadCacheDepth];
  // Blocks cached per class, and allocations served here. Written only by the owning thread (a
  // relaxed load and store: plain moves, no read-modify-write), read by WorkspacePool::stats()
  // on any thread.
  std::atomic<std::uint32_t> counts[kThreadCachedClasses] = {};
  std::atomic<std::size_t> hits{0};

  std::uint32_t count(std::uint32_t c) const noexcept { return counts[c].load(std::memory_order_relaxed); }
  void set_count(std::uint32_t c, std::uint32_t n) noexcept { counts[c].store(n, std::memory_order_relaxed); }
  void count_hit() noexcept { hits.store(hits.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }
};

namespace {

// Registration of thread caches, so that pool destruction and thread exit can drain them.
// Lock order: g_caches_mutex, then a pool's mutex.
detail::Mutex g_caches_mutex;

} // namespace

struct WorkspaceThreadCache {
  WorkspaceThreadSlot slots[kSlotsPerThread];
  WorkspaceThreadCache* next = nullptr;
  WorkspaceThreadCache* prev = nullptr;

  static WorkspaceThreadCache* head;

  // Returns every cached block of `slot` to its pool's shared list. Caller holds g_caches_mutex.
  static void drain(WorkspaceThreadSlot& slot) noexcept {
    WorkspacePool* pool = slot.pool.load(std::memory_order_relaxed);
    if (pool == nullptr) return;
    for (std::uint32_t c = 0; c < kThreadCachedClasses; ++c) {
      pool->give_shared(slot.blocks[c], slot.count(c), c);
      slot.set_count(c, 0);
    }
    {
      detail::LockGuard lock(pool->mutex_);
      pool->retired_hits_ += slot.hits.load(std::memory_order_relaxed);
    }
    slot.hits.store(0, std::memory_order_relaxed);
    slot.pool.store(nullptr, std::memory_order_release);
  }
};
WorkspaceThreadCache* WorkspaceThreadCache::head = nullptr;

namespace {

// What a thread's holder points at once its thread_local destructors have run: pools used after
// that (by an atexit handler such as devrt::shutdown, or a static destructor) find no slot in it
// and take no new cache. A marker object, not a flag: every byte of initial-exec TLS counts (the
// plugins and libdevrt_c.so share glibc's static TLS surplus with the vendor runtimes).
constinit WorkspaceThreadCache g_thread_gone{};

#if DEVRT_BARE_METAL
// One thread, which never exits: its cache lives as long as the program, and a firmware image
// registers no exit-time destructor for it.
struct ThreadCacheHolder {
  WorkspaceThreadCache* cache = nullptr;
};
#else
struct ThreadCacheHolder {
  WorkspaceThreadCache* cache = nullptr;
  ~ThreadCacheHolder() {
    WorkspaceThreadCache* mine = cache;
    cache = &g_thread_gone;
    if (mine == nullptr) return;
    detail::LockGuard lock(g_caches_mutex);
    for (WorkspaceThreadSlot& slot : mine->slots) WorkspaceThreadCache::drain(slot);
    if (mine->prev != nullptr) mine->prev->next = mine->next;
    if (mine->next != nullptr) mine->next->prev = mine->prev;
    if (WorkspaceThreadCache::head == mine) WorkspaceThreadCache::head = mine->next;
    delete mine;
  }
};
#endif
// initial-exec: libdevrt.a is compiled -fPIC, and the default model would make every access a
// __tls_get_addr call on the allocation fast path. devrt's TLS is a few hundred bytes, well inside
// what glibc reserves for libraries loaded later.
DEVRT_DETAIL_THREAD_LOCAL ThreadCacheHolder t_cache;

// Gives the calling thread a cache (first use) and a slot for `pool`; nullptr when all of its
// slots are taken (the pool then works through its shared list only).
[[gnu::noinline]] WorkspaceThreadSlot* claim_thread_slot(WorkspacePool* pool) noexcept {
  WorkspaceThreadCache* cache = t_cache.cache;
  if (cache == &g_thread_gone) return nullptr;
  if (cache == nullptr) {
    cache = new (std::nothrow) WorkspaceThreadCache;
    if (cache == nullptr) return nullptr;
    detail::LockGuard lock(g_caches_mutex);
    cache->next = WorkspaceThreadCache::head;
    if (cache->next != nullptr) cache->next->prev = cache;
    WorkspaceThreadCache::head = cache;
    t_cache.cache = cache;
  }
  detail::LockGuard lock(g_caches_mutex);
  for (WorkspaceThreadSlot& slot : cache->slots) {
    if (slot.pool.load(std::memory_order_relaxed) == nullptr) {
      slot.pool.store(pool, std::memory_order_release);
      return &slot;
    }
  }
  return nullptr;
}

// The calling thread's slot for `pool`: a scan of four pointers on the fast path.
inline WorkspaceThreadSlot* thread_slot(WorkspacePool* pool) noexcept {
  if (WorkspaceThreadCache* cache = t_cache.cache) [[likely]] {
    for (WorkspaceThreadSlot& slot : cache->slots) {
      if (slot.pool.load(std::memory_order_relaxed) == pool) return &slot;
    }
  }
  return claim_thread_slot(pool);
}

} // namespace

void Workspace::reset() noexcept {
#if !DEVRT_BARE_METAL
  // A live graph that touches the block takes the Workspace over (devrt/graph.hpp).
  if (pool_ != nullptr && data_ != nullptr && detail::graphs_touch_memory() &&
      detail::g_keep_alive_hooks.workspace(*this, pool_->device())) [[unlikely]]
    return;
#endif
  if (pool_ != nullptr && data_ != nullptr) pool_->free_block(data_, size_class_, size_);
  pool_ = nullptr;
  data_ = nullptr;
  size_ = 0;
}

WorkspacePool::WorkspacePool(BackendRef backend, Device device, std::size_t cache_limit_bytes) noexcept
    : backend_(backend), device_(device), cache_limit_bytes_(cache_limit_bytes) {}

WorkspacePool::~WorkspacePool() {
  drain_thread_caches();
  for (std::uint32_t c = 0; c < kClassCount; ++c) {
    FreeList& list = shared_[c];
    for (std::uint32_t i = 0; i < list.size; ++i) {
      static_cast<void>(free_to_backend(list.blocks[i], class_bytes(c)));
    }
    if (ledger_ != nullptr) ledger_->pool_shared_shrank(list.size * class_bytes(c));
    detail::heap_free(static_cast<void*>(list.blocks));
  }
  std::size_t held = reserved_.load(std::memory_order_relaxed);
  if (held != 0) {
    DEVRT_LOG(error, "WorkspacePool(", device_, "): destroyed with ", held,
              " bytes of workspace still in use; they are leaked");
  }
}

void WorkspacePool::drain_thread_caches() noexcept {
  detail::LockGuard lock(g_caches_mutex);
  for (WorkspaceThreadCache* cache = WorkspaceThreadCache::head; cache != nullptr; cache = cache->next) {
    for (WorkspaceThreadSlot& slot : cache->slots) {
      if (slot.pool.load(std::memory_order_acquire) == this) WorkspaceThreadCache::drain(slot);
    }
  }
}

Status WorkspacePool::close() noexcept {
  closed_.store(true, std::memory_order_relaxed);
  drain_thread_caches();
  Status status = release();
  ledger_ = nullptr; // its device record goes away; the blocks still in use are no longer its
  return status;
}

Result<Workspace> WorkspacePool::allocate(std::size_t nbytes) noexcept {
  if (nbytes == 0) return Workspace();
  std::uint32_t size_class = kUncached;
  Result<void*> block = allocate_block(nbytes, &size_class);
  if (!block.ok()) return std::move(block).status();
  return Workspace(this, *block, nbytes, size_class);
}

Result<void*> WorkspacePool::allocate_block(std::size_t nbytes, std::uint32_t* size_class_out) noexcept {
  std::uint32_t size_class = nbytes > class_bytes(kClassCount - 1) ? kUncached : size_class_of(nbytes);
  *size_class_out = size_class;
  if (size_class < kThreadCachedClasses) {
    if (WorkspaceThreadSlot* slot = thread_slot(this)) {
      if (std::uint32_t count = slot->count(size_class); count != 0) [[likely]] {
        slot->set_count(size_class, count - 1);
        slot->count_hit();
        return slot->blocks[size_class][count - 1];
      }
    }
  }
  if (size_class != kUncached) {
    if (void* block = take_shared(size_class)) return block;
  }
  std::size_t bytes = size_class == kUncached ? nbytes : class_bytes(size_class);
  Result<void*> block = backend_.allocate(device_.id, bytes, kDefaultAlignment);
  if (!block.ok()) {
    // Cached blocks may be what stands in the way: give them back and try once more.
    static_cast<void>(release());
    block = backend_.allocate(device_.id, bytes, kDefaultAlignment);
    if (!block.ok() && bytes != nbytes) {
      // Rounding up to the class may be all that does not fit: the exact size, uncached.
      *size_class_out = kUncached;
      bytes = nbytes;
      block = backend_.allocate(device_.id, bytes, kDefaultAlignment);
    }
    if (!block.ok()) return std::move(block).status();
  }
  reserved_.fetch_add(bytes, std::memory_order_relaxed);
  backend_allocations_.fetch_add(1, std::memory_order_relaxed);
  if (ledger_ != nullptr) ledger_->pool_reserved(bytes);
  return *block;
}

void WorkspacePool::free_block(void* data, std::uint32_t size_class, std::size_t size) noexcept {
  if (size_class == kUncached || closed_.load(std::memory_order_relaxed)) [[unlikely]] {
    static_cast<void>(free_to_backend(data, size_class == kUncached ? size : class_bytes(size_class)));
    return;
  }
  if (size_class < kThreadCachedClasses) {
    if (WorkspaceThreadSlot* slot = thread_slot(this)) {
      std::uint32_t count = slot->count(size_class);
      std::uint32_t depth = thread_cache_depth(size_class);
      if (count == depth) [[unlikely]] {
        // Keep half for reuse here, hand the older half to other threads.
        std::uint32_t spill = depth / 2;
        give_shared(slot->blocks[size_class], spill, size_class);
        for (std::uint32_t i = 0; i + spill < count; ++i)
          slot->blocks[size_class][i] = slot->blocks[size_class][i + spill];
        count -= spill;
      }
      slot->blocks[size_class][count] = data;
      slot->set_count(size_class, count + 1);
      return;
    }
  }
  give_shared(&data, 1, size_class);
}

Status WorkspacePool::discard_block(void* data, std::uint32_t size_class, std::size_t size) noexcept {
  return free_to_backend(data, size_class == kUncached ? size : class_bytes(size_class));
}

void* WorkspacePool::take_shared(std::uint32_t size_class) noexcept {
  detail::LockGuard lock(mutex_);
  FreeList& list = shared_[size_class];
  if (list.size == 0) return nullptr;
  shared_bytes_ -= class_bytes(size_class);
  ++shared_hits_;
  if (ledger_ != nullptr) ledger_->pool_shared_shrank(class_bytes(size_class));
  return list.blocks[--list.size];
}

void WorkspacePool::give_shared(void* const* blocks, std::uint32_t n, std::uint32_t size_class) noexcept {
  if (n == 0) return;
  const std::size_t bytes = class_bytes(size_class);
  std::uint32_t kept = 0;
  {
    detail::LockGuard lock(mutex_);
    FreeList& list = shared_[size_class];
    while (kept < n && shared_bytes_ + bytes <= cache_limit_bytes_) {
      if (list.size == list.capacity) {
        std::uint32_t capacity = list.capacity == 0 ? 16 : list.capacity * 2;
        auto* grown = static_cast<void**>(detail::heap_allocate(capacity * sizeof(void*)));
        if (grown == nullptr) break; // no room to remember them: the rest go back to the backend
        if (list.size > 0) std::memcpy(static_cast<void*>(grown), list.blocks, list.size * sizeof(void*));
        detail::heap_free(static_cast<void*>(list.blocks));
        list.blocks = grown;
        list.capacity = capacity;
      }
      list.blocks[list.size++] = blocks[kept++];
      shared_bytes_ += bytes;
    }
    if (ledger_ != nullptr) ledger_->pool_shared_grew(kept * bytes);
  }
  // Beyond the cache's limit: back to the backend, outside the lock.
  for (std::uint32_t i = kept; i < n; ++i) static_cast<void>(free_to_backend(blocks[i], bytes));
}

Status WorkspacePool::free_to_backend(void* block, std::size_t bytes) noexcept {
  reserved_.fetch_sub(bytes, std::memory_order_relaxed);
  backend_frees_.fetch_add(1, std::memory_order_relaxed);
  if (ledger_ != nullptr) ledger_->pool_unreserved(bytes);
  Status status = backend_.free(device_.id, block);
  if (!status.ok()) DEVRT_LOG(error, "WorkspacePool(", device_, "): ", status.message());
  return status;
}

Status WorkspacePool::release() noexcept {
  Status first_error;
  auto keep = [&first_error](Status status) {
    if (first_error.ok() && !status.ok()) first_error = std::move(status);
  };
  if (WorkspaceThreadCache* cache = t_cache.cache) {
    for (WorkspaceThreadSlot& slot : cache->slots) {
      if (slot.pool.load(std::memory_order_relaxed) != this) continue;
      for (std::uint32_t c = 0; c < kThreadCachedClasses; ++c) {
        for (std::uint32_t i = 0; i < slot.count(c); ++i) keep(free_to_backend(slot.blocks[c][i], class_bytes(c)));
        slot.set_count(c, 0);
      }
    }
  }
  detail::LockGuard lock(mutex_);
  for (std::uint32_t c = 0; c < kClassCount; ++c) {
    FreeList& list = shared_[c];
    if (ledger_ != nullptr) ledger_->pool_shared_shrank(list.size * class_bytes(c));
    for (std::uint32_t i = 0; i < list.size; ++i) keep(free_to_backend(list.blocks[i], class_bytes(c)));
    list.size = 0;
  }
  shared_bytes_ = 0;
  return first_error;
}

PoolStats WorkspacePool::stats() const noexcept {
  PoolStats stats;
  stats.cache_limit_bytes = cache_limit_bytes_;
  {
    detail::LockGuard caches_lock(g_caches_mutex);
    for (WorkspaceThreadCache* cache = WorkspaceThreadCache::head; cache != nullptr; cache = cache->next) {
      for (const WorkspaceThreadSlot& slot : cache->slots) {
        if (slot.pool.load(std::memory_order_acquire) != this) continue;
        stats.hits += slot.hits.load(std::memory_order_relaxed);
        for (std::uint32_t c = 0; c < kThreadCachedClasses; ++c) {
          stats.cached_bytes += slot.count(c) * class_bytes(c);
          stats.cached_blocks += slot.count(c);
        }
      }
    }
    detail::LockGuard lock(mutex_);
    stats.cached_bytes += shared_bytes_;
    for (const FreeList& list : shared_) stats.cached_blocks += list.size;
    stats.hits += shared_hits_ + retired_hits_;
  }
  stats.reserved_bytes = reserved_.load(std::memory_order_relaxed);
  stats.backend_allocations = backend_allocations_.load(std::memory_order_relaxed);
  stats.backend_frees = backend_frees_.load(std::memory_order_relaxed);
  return stats;
}

// ---- Process-wide pools ----------------------------------------------------------------------

namespace detail {
struct PoolLedger {
  static void attach(WorkspacePool& pool, MemoryLedger& ledger) noexcept { pool.ledger_ = &ledger; }
};

WorkspacePool* make_device_pool(DeviceRecord& record, std::size_t cache_limit_bytes) noexcept {
  auto* pool = new (std::nothrow) WorkspacePool(record.backend(), record.device(), cache_limit_bytes);
  if (pool != nullptr) PoolLedger::attach(*pool, record.memory.ledger);
  return pool;
}

Status close_device_pool(WorkspacePool* pool, bool* kept) noexcept {
  Status status = pool->close();
  *kept = !delete_unused_pool(pool);
  return status;
}

bool delete_unused_pool(WorkspacePool* pool) noexcept {
  if (pool->reserved_bytes() != 0) return false;
  delete pool;
  return true;
}
} // namespace detail

namespace {
detail::Mutex g_pools_mutex;
} // namespace

Result<WorkspacePool*> workspace_pool(Device device) noexcept {
  if (detail::DeviceRecord* record = detail::find_device_record(device)) [[likely]] {
    if (WorkspacePool* pool = record->memory.workspace_pool.load(std::memory_order_acquire)) [[likely]]
      return pool;
  }
  DEVRT_ASSIGN_OR_RETURN(detail::DeviceRecord * record, detail::open_device_record(device));
  detail::LockGuard lock(g_pools_mutex);
  WorkspacePool* pool = record->memory.workspace_pool.load(std::memory_order_relaxed);
  if (pool == nullptr) {
    // Lives until devrt::shutdown() closes the device.
    pool = detail::make_device_pool(*record, SIZE_MAX);
    if (pool == nullptr) return make_error(ErrorCode::out_of_memory, "workspace_pool(", device, "): no host memory");
    record->memory.workspace_pool.store(pool, std::memory_order_release);
  }
  return pool;
}

Result<Workspace> allocate_workspace(Device device, std::size_t nbytes) noexcept {
  Result<WorkspacePool*> pool = workspace_pool(device);
  if (!pool.ok()) return std::move(pool).status();
  return (*pool)->allocate(nbytes);
}

} // namespace devrt
