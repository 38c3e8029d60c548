// SPDX-License-Identifier: Apache-2.0
// Stream-ordered allocation (core/memory/stream_pool.hpp): a device's pool of blocks reused in
// stream order, and the private pools of graphs being captured or replayed.
#include "core/memory/stream_pool.hpp"

#include "core/devices/device_record.hpp"
#include "core/memory/memory_records.hpp"

#include <atomic>
#include <bit>
#include <new>
#include <vector>

#include <devrt/backend/detail/mutex.hpp>
#include <devrt/backend/registry.hpp>
#include <devrt/log.hpp>
#include <devrt/stream.hpp>

namespace devrt::detail {

// A free block: reusable by `stream` at once, by others once `event` has completed (no event: a
// synchronous backend's, free for all; a graph pool's, used by its one capture only).
struct StreamPoolBlock {
  void* data;
  std::size_t bytes;
  void* stream;
  void* event;
};

namespace {

constexpr std::size_t kMinBlockBytes = 512;

std::size_t round_block(std::size_t bytes) noexcept {
  return bytes <= kMinBlockBytes ? kMinBlockBytes : std::bit_ceil(bytes);
}

} // namespace

class StreamPool {
public:
  StreamPool(BackendRef backend, Device device, bool graph_private) noexcept
      : backend_(backend), device_(device), graph_private_(graph_private) {}

  BackendRef backend() const noexcept { return backend_; }
  // The next graph pool of the device (DeviceRecord::graph_pools), under the record's pools_mutex.
  StreamPool* next_graph_pool = nullptr;
  Device device() const noexcept { return device_; }
  bool graph_private() const noexcept { return graph_private_; }

  void hold() noexcept { references_.fetch_add(1, std::memory_order_relaxed); }
  // Drops a reference; the last one gives every block back and deletes the pool.
  void drop() noexcept {
    if (references_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    static_cast<void>(release(true));
    delete this;
  }

  Result<void*> take(std::size_t bytes, void* stream) noexcept {
    if (void* reused = reuse(bytes, stream)) return reused;
    Result<void*> fresh = backend_.allocate(device_.id, bytes, kDefaultAlignment);
    if (!fresh.ok() && fresh.status().code() == ErrorCode::out_of_memory) {
      static_cast<void>(release(false)); // what is free already, then try once more
      fresh = backend_.allocate(device_.id, bytes, kDefaultAlignment);
    }
    if (!fresh.ok()) return fresh;
    LockGuard lock(mutex_);
    ++misses_;
    reserved_ += bytes;
    return fresh;
  }

  void give(void* data, std::size_t bytes, void* stream) noexcept {
    void* event = nullptr;
    if (!graph_private_ && !backend_.has_capability(DEVRT_CAP_SYNCHRONOUS)) event = mark(stream);
    LockGuard lock(mutex_);
    if (closed_) {
      static_cast<void>(discard(StreamPoolBlock{data, bytes, stream, event}));
      return;
    }
    free_.push_back(StreamPoolBlock{data, bytes, stream, event});
    cached_ += bytes;
  }

  // Gives free blocks back to the backend: every one (`all`), or those whose frees have completed.
  Status release(bool all) noexcept {
    LockGuard lock(mutex_);
    Status first;
    for (std::size_t i = 0; i < free_.size();) {
      if (!all && !completed(free_[i])) {
        ++i;
        continue;
      }
      Status freed = discard(free_[i]);
      if (first.ok()) first = freed;
      cached_ -= free_[i].bytes;
      free_[i] = free_.back();
      free_.pop_back();
    }
    return first;
  }

  void close() noexcept {
    static_cast<void>(release(true));
    LockGuard lock(mutex_);
    closed_ = true;
  }

  void add_to(StreamPoolFigures& figures) noexcept {
    LockGuard lock(mutex_);
    figures.reserved_bytes += reserved_;
    figures.cached_bytes += cached_;
    figures.hits += hits_;
    figures.misses += misses_;
    if (graph_private_) figures.graph_bytes += reserved_;
  }

private:
  ~StreamPool() = default;

  // An event recorded on `stream` now, or null when the backend has none or recording failed
  // (then the block waits for the stream itself before another stream takes it).
  void* mark(void* stream) noexcept {
    if (!backend_.has_events()) return nullptr;
    Result<void*> event = backend_.event_create(device_.id);
    if (!event.ok()) return nullptr;
    if (!backend_.event_record(device_.id, *event, stream).ok()) {
      static_cast<void>(backend_.event_destroy(device_.id, *event));
      return nullptr;
    }
    return *event;
  }

  // Whether another stream may take `block` now, without waiting: its free's event has completed,
  // or the backend is synchronous. Never for a graph's pool (one capture uses it). Caller holds mutex_.
  bool free_for_any(const StreamPoolBlock& block) noexcept {
    if (graph_private_) return false;
    if (block.event == nullptr) return backend_.has_capability(DEVRT_CAP_SYNCHRONOUS);
    Result<bool> done = backend_.event_query(device_.id, block.event);
    return done.ok() && *done;
  }

  // Whether nothing queued may still use `block`, waiting for its stream where no event says so.
  // Caller holds mutex_.
  bool completed(const StreamPoolBlock& block) noexcept {
    if (graph_private_ || free_for_any(block)) return true;
    return block.event == nullptr && backend_.stream_synchronize(device_.id, block.stream).ok();
  }

  // Caller holds mutex_: the block and its event go back to the backend.
  Status discard(const StreamPoolBlock& block) noexcept {
    if (block.event != nullptr) static_cast<void>(backend_.event_destroy(device_.id, block.event));
    reserved_ -= block.bytes;
    return backend_.free(device_.id, block.data);
  }

  void* reuse(std::size_t bytes, void* stream) noexcept {
    LockGuard lock(mutex_);
    std::size_t chosen = free_.size();
    for (std::size_t i = 0; i < free_.size(); ++i) {
      if (free_[i].bytes != bytes) continue;
      if (free_[i].stream == stream) { // in stream order: ready now
        chosen = i;
        break;
      }
      if (chosen == free_.size() && free_for_any(free_[i])) chosen = i;
    }
    if (chosen == free_.size()) return nullptr;
    StreamPoolBlock block = free_[chosen];
    free_[chosen] = free_.back();
    free_.pop_back();
    if (block.event != nullptr) static_cast<void>(backend_.event_destroy(device_.id, block.event));
    cached_ -= block.bytes;
    ++hits_;
    return block.data;
  }

  BackendRef backend_;
  Device device_;
  const bool graph_private_;
  std::atomic<int> references_{1};
  Mutex mutex_;
  std::vector<StreamPoolBlock> free_; // under mutex_, and the figures below
  std::uint64_t reserved_ = 0, cached_ = 0, hits_ = 0, misses_ = 0;
  bool closed_ = false;
};

namespace {

// The device's own pool, made at its first stream-ordered allocation and kept by its record, which
// closes it when it closes (Buffers may still hold blocks of it: it goes with the last of them).
Result<StreamPool*> device_pool(Device device) noexcept {
  DEVRT_ASSIGN_OR_RETURN(DeviceRecord * record, open_device_record(device));
  if (StreamPool* pool = record->memory.stream_pool.load(std::memory_order_acquire)) [[likely]]
    return pool;
  auto* pool = new (std::nothrow) StreamPool(record->backend(), device, false);
  if (pool == nullptr) return make_error(ErrorCode::out_of_memory, device, " allocate: no host memory for its pool");
  StreamPool* none = nullptr;
  if (!record->memory.stream_pool.compare_exchange_strong(none, pool, std::memory_order_acq_rel)) {
    pool->drop(); // made meanwhile by another thread
    return none;
  }
  return pool;
}

} // namespace

Result<void*> stream_pool_allocate(StreamPool* pool, Device device, std::size_t bytes, StreamRef stream,
                                   std::size_t* rounded, StreamPool** holder) noexcept {
  if (pool == nullptr) {
    Result<StreamPool*> found = device_pool(device);
    if (!found.ok()) return std::move(found).status();
    pool = *found;
  }
  *rounded = round_block(bytes);
  Result<void*> block = pool->take(*rounded, stream.handle);
  if (!block.ok()) return block;
  pool->hold();
  *holder = pool;
  return block;
}

void stream_pool_free(StreamPool* pool, void* data, std::size_t rounded, void* stream) noexcept {
  pool->give(data, rounded, stream);
  pool->drop();
}

StreamPool* make_graph_pool(BackendRef backend, Device device) noexcept {
  DeviceRecord* record = find_device_record(device); // open: the capturing graph holds it
  if (record == nullptr) return nullptr;
  auto* pool = new (std::nothrow) StreamPool(backend, device, true);
  if (pool == nullptr) return nullptr;
  LockGuard lock(record->memory.pools_mutex);
  pool->next_graph_pool = record->memory.graph_pools;
  record->memory.graph_pools = pool;
  return pool;
}

bool is_graph_pool(const StreamPool* pool) noexcept { return pool->graph_private(); }

void release_graph_pool(StreamPool* pool) noexcept {
  if (DeviceRecord* record = find_device_record(pool->device())) {
    LockGuard lock(record->memory.pools_mutex);
    for (StreamPool** link = &record->memory.graph_pools; *link != nullptr; link = &(*link)->next_graph_pool) {
      if (*link == pool) {
        *link = pool->next_graph_pool;
        break;
      }
    }
  }
  pool->drop();
}

StreamPoolFigures stream_pool_figures(Device device) noexcept {
  StreamPoolFigures figures;
  DeviceRecord* record = find_device_record(device);
  if (record == nullptr) return figures;
  if (StreamPool* pool = record->memory.stream_pool.load(std::memory_order_acquire)) pool->add_to(figures);
  LockGuard lock(record->memory.pools_mutex);
  for (StreamPool* pool = record->memory.graph_pools; pool != nullptr; pool = pool->next_graph_pool)
    pool->add_to(figures);
  return figures;
}

Status release_stream_pool(Device device) noexcept {
  DeviceRecord* record = find_device_record(device);
  StreamPool* pool = record != nullptr ? record->memory.stream_pool.load(std::memory_order_acquire) : nullptr;
  return pool != nullptr ? pool->release(false) : Status();
}

void close_stream_pool(DeviceRecord& record) noexcept {
  StreamPool* pool = record.memory.stream_pool.exchange(nullptr, std::memory_order_acq_rel);
  if (pool == nullptr) return;
  pool->close();
  pool->drop();
}

} // namespace devrt::detail
