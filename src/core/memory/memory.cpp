// SPDX-License-Identifier: Apache-2.0
// Buffers and checked copies (devrt/memory.hpp): allocation through the Buffer cache or a
// stream-ordered pool, freeing (a graph may keep the memory: capture_hooks.hpp), and copy()'s
// range, overlap and device checks before a backend runs it.
#include <devrt/memory.hpp>

#include <devrt/backend/detail/memory_checks.hpp>
#include <devrt/backend/registry.hpp>
#include <devrt/backend/workspace_pool.hpp>
#include <devrt/config.hpp>
#include <devrt/log.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>

#include <devrt/backend/detail/host_copy.hpp>

#include "core/devices/device_record.hpp"
#include "core/execution/capture_hooks.hpp"
#include "core/memory/memory_records.hpp"
#include "core/memory/stream_pool.hpp"
#include "support/environment.hpp"
#include "support/heap.hpp"

namespace devrt {
namespace {

using detail::intersects;

bool ranges_overlap(const MemorySpan& src, std::size_t src_offset, BackendRef src_backend, const MemorySpan& dst,
                    std::size_t dst_offset, BackendRef dst_backend, std::size_t nbytes) noexcept {
  bool both_host = src_backend.host_accessible() && dst_backend.host_accessible();
  bool one_addressable_device = src.device == dst.device && src_backend.has_capability(DEVRT_CAP_ADDRESSABLE);
  return detail::copy_ranges_overlap(src, src_offset, dst, dst_offset, nbytes, both_host || one_addressable_device);
}

inline bool range_ok(const MemorySpan& span, std::size_t offset, std::size_t nbytes) noexcept {
  return detail::copy_range_ok(span.size, span.data, offset, nbytes);
}

// The backend that does a copy's work (null: neither can reach the other's memory, so the copy is
// staged through the host) and the device whose stream orders it. The rule, as the header states
// it: the destination, unless the destination is host-accessible memory and the source is a device
// other than plain host memory (cpu), in which case the source (device -> host is the device's DMA).
struct CopyRoute {
  BackendRef handler;
  Device device;
};

CopyRoute route_copy(Device src, BackendRef src_backend, Device dst, BackendRef dst_backend) noexcept {
  if (src.kind == dst.kind) return {dst_backend, dst};
  if (dst_backend.host_accessible() && src.kind != DeviceKind::cpu) return {src_backend, src};
  if (src_backend.host_accessible()) return {dst_backend, dst}; // the device reads host addresses
  return {BackendRef(), dst};
}

Status copy_with(BackendRef backend, Device side, const MemorySpan& src, std::size_t src_offset, const MemorySpan& dst,
                 std::size_t dst_offset, std::size_t nbytes, StreamRef stream) noexcept {
  devrt_copy_desc desc = detail::make_copy_desc(src, src_offset, dst, dst_offset, nbytes, stream.handle);
  return backend.copy(side.id, src.device.id, dst.device.id, desc);
}

#if !DEVRT_BARE_METAL
// Between two backends that cannot reach each other's memory: through a host buffer, blocking.
Status copy_staged(BackendRef src_backend, const MemorySpan& src, std::size_t src_offset, BackendRef dst_backend,
                   const MemorySpan& dst, std::size_t dst_offset, std::size_t nbytes, StreamRef stream) noexcept {
  void* bounce = detail::heap_allocate(nbytes);
  if (bounce == nullptr) {
    return make_error(ErrorCode::out_of_memory, "copy ", src.device, " -> ", dst.device, ": no host memory for a ",
                      nbytes, "-byte bounce buffer");
  }
  MemorySpan host{kHostDevice, bounce, nbytes};
  StreamRef src_stream = current_stream(src.device);
  Status status = copy_with(src_backend, src.device, src, src_offset, host, 0, nbytes, src_stream);
  if (status.ok()) status = src_backend.stream_synchronize(src.device.id, src_stream.handle);
  if (status.ok()) status = copy_with(dst_backend, dst.device, host, 0, dst, dst_offset, nbytes, stream);
  if (status.ok()) status = dst_backend.stream_synchronize(dst.device.id, stream.handle);
  detail::heap_free(bounce);
  return status;
}
#endif

} // namespace

namespace detail {

// Error paths live out of line so that the checked copy stays a short straight line.
Status copy_range_error(const char* side, const MemorySpan& span, std::size_t offset, std::size_t nbytes) noexcept {
  if (offset > span.size || nbytes > span.size - offset) {
    return make_error(ErrorCode::out_of_range, "copy: ", side, " range [", offset, ", ", offset, "+", nbytes,
                      ") exceeds the ", span.size, "-byte span on ", span.device);
  }
  return make_error(ErrorCode::invalid_argument, "copy: ", side, " on ", span.device, " is null");
}

Status copy_overlap_error(const MemorySpan& src, std::size_t src_offset, const MemorySpan& dst, std::size_t dst_offset,
                          std::size_t nbytes) noexcept {
  return make_error(ErrorCode::invalid_argument, "copy ", src.device, " -> ", dst.device, ": source [", src_offset,
                    ", +", nbytes, ") and destination [", dst_offset, ", +", nbytes, ") overlap");
}

Status copy_stream_error(const MemorySpan& src, const MemorySpan& dst, Device stream_device, Device side,
                         bool staged) noexcept {
  if (staged) {
    return make_error(ErrorCode::invalid_argument, "copy ", src.device, " -> ", dst.device, ": stream of ",
                      stream_device, " given; a staged copy runs on the destination's stream");
  }
  return make_error(ErrorCode::invalid_argument, "copy ", src.device, " -> ", dst.device, ": stream belongs to ",
                    stream_device, " but the copy runs on ", side);
}

Status allocation_alignment_error(Device device, std::size_t nbytes, std::size_t alignment) noexcept {
  return make_error(ErrorCode::invalid_argument, device, " allocate(", nbytes, " bytes, align ", alignment,
                    "): alignment must be a power of two no larger than 1048576");
}

Status allocation_size_error(Device device, std::size_t nbytes, std::size_t alignment) noexcept {
  return make_error(ErrorCode::out_of_memory, device, " allocate(", nbytes, " bytes, align ", alignment,
                    "): larger than any allocation can be");
}

} // namespace detail

// ---- The Buffer cache ---------------------------------------------------------------------
//
// Hosted builds only: firmware (DEVRT_BARE_METAL) keeps its one heap to the backend, has no
// environment, and must not link the pools' thread caches.
#if !DEVRT_BARE_METAL

namespace {

constexpr std::size_t kDefaultCacheLimit = std::size_t{256} << 20;
using detail::DeviceRecord;
detail::Mutex g_buffer_caches_mutex;

// How Buffer::allocate works: -1 until the environment has been read; then kCacheOn when the
// Buffer cache is on, plus kHistoryOn while the allocation history remembers Buffers. The fast
// path runs only for exactly kCacheOn: the history costs it nothing while off.
constexpr int kCacheOn = 1;
constexpr int kHistoryOn = 2;
std::atomic<int> g_buffer_path{-1};

// Sets or clears `bit` of g_buffer_path once it has been read from the environment.
void set_path_bit(int bit, bool on) noexcept {
  static_cast<void>(buffer_cache_enabled()); // reads the environment first
  int path = g_buffer_path.load(std::memory_order_relaxed);
  while (!g_buffer_path.compare_exchange_weak(path, on ? (path | bit) : (path & ~bit), std::memory_order_relaxed)) {
  }
}

// Read once per process (a bad value is reported once, not per device).
std::size_t cache_limit_from_env() noexcept {
  static const auto limit =
      static_cast<std::size_t>(detail::read_number_env("DEVRT_BUFFER_CACHE_LIMIT", kDefaultCacheLimit));
  return limit;
}

// First allocation on a device: decides whether it has a cache. Nothing is stored for a device
// that does not exist (yet: a plugin may bring its backend later).
[[gnu::noinline]] WorkspacePool* create_buffer_cache(Device device) noexcept {
  Result<DeviceRecord*> record = detail::open_device_record(device);
  if (!record.ok()) return nullptr;
  std::atomic<WorkspacePool*>& slot = (*record)->memory.buffer_cache;
  detail::LockGuard lock(g_buffer_caches_mutex);
  WorkspacePool* cache = slot.load(std::memory_order_relaxed);
  if (cache == nullptr) {
    cache = detail::DeviceMemory::no_cache();
    if ((*record)->backend().can_synchronize_device()) {
      // Lives until devrt::shutdown() closes the device.
      if (WorkspacePool* pool = detail::make_device_pool(**record, cache_limit_from_env())) cache = pool;
    }
    slot.store(cache, std::memory_order_release);
  }
  return cache;
}

// The cache serving `device`, or null (no cache for this device). The caller checked that the
// cache is on.
inline WorkspacePool* buffer_cache(Device device) noexcept {
  WorkspacePool* cache = nullptr;
  if (DeviceRecord* record = detail::find_device_record(device)) [[likely]]
    cache = record->memory.buffer_cache.load(std::memory_order_acquire);
  if (cache == nullptr) [[unlikely]]
    cache = create_buffer_cache(device);
  return cache == detail::DeviceMemory::no_cache() ? nullptr : cache;
}

// The cache already made for `device`, without making one.
WorkspacePool* existing_buffer_cache(Device device) noexcept {
  DeviceRecord* record = detail::find_device_record(device);
  WorkspacePool* cache = record != nullptr ? record->memory.buffer_cache.load(std::memory_order_acquire) : nullptr;
  return cache == detail::DeviceMemory::no_cache() ? nullptr : cache;
}

} // namespace

bool buffer_cache_enabled() noexcept {
  int path = g_buffer_path.load(std::memory_order_relaxed);
  if (path < 0) {
    int from_env = (detail::read_boolean_env("DEVRT_BUFFER_CACHE", true) ? kCacheOn : 0) |
                   (detail::history_enabled() ? kHistoryOn : 0);
    // A concurrent setter wins over the environment.
    g_buffer_path.compare_exchange_strong(path, from_env, std::memory_order_relaxed);
    path = g_buffer_path.load(std::memory_order_relaxed);
  }
  return (path & kCacheOn) != 0;
}

void set_buffer_cache_enabled(bool enabled) noexcept { set_path_bit(kCacheOn, enabled); }

namespace detail {
void buffer_history_changed(bool on) noexcept { set_path_bit(kHistoryOn, on); }
} // namespace detail

Status empty_cache(Device device) noexcept {
  Status pooled = detail::release_stream_pool(device);
  if (WorkspacePool* cache = existing_buffer_cache(device)) {
    Status released = cache->release();
    return released.ok() ? pooled : released;
  }
  DEVRT_RETURN_IF_ERROR(backend_for(device).status());
  return pooled;
}

Result<PoolStats> buffer_cache_stats(Device device) noexcept {
  if (WorkspacePool* cache = existing_buffer_cache(device)) return cache->stats();
  DEVRT_RETURN_IF_ERROR(backend_for(device).status());
  PoolStats none; // no allocation has made one yet, or the device has none
  none.cache_limit_bytes = cache_limit_from_env();
  return none;
}

#else
bool buffer_cache_enabled() noexcept { return false; }
void set_buffer_cache_enabled(bool) noexcept {}
Status empty_cache(Device device) noexcept { return backend_for(device).status(); }
Result<PoolStats> buffer_cache_stats(Device device) noexcept {
  DEVRT_RETURN_IF_ERROR(backend_for(device).status());
  return PoolStats{};
}
#endif

// ---- Buffer -------------------------------------------------------------------------------

#if !DEVRT_BARE_METAL
namespace {
// nbytes in [1, kMaxCachedBufferBytes], alignment a power of two no larger than the blocks'.
inline bool cacheable(std::size_t nbytes, std::size_t alignment) noexcept {
  return nbytes - 1 < kMaxCachedBufferBytes && alignment - 1 < kDefaultAlignment && (alignment & (alignment - 1)) == 0;
}
} // namespace

[[gnu::always_inline]] inline Result<Buffer> Buffer::allocate_cached(WorkspacePool* cache, Device device,
                                                                     std::size_t nbytes) noexcept {
  std::uint32_t size_class = WorkspacePool::kUncached;
  Result<void*> block = cache->allocate_block(nbytes, &size_class);
  if (!block.ok()) return std::move(block).status();
  Buffer buffer;
  buffer.backend_ = cache->backend().table();
  buffer.device_ = device;
  buffer.data_ = *block;
  buffer.size_ = nbytes;
  buffer.cache_ = cache;
  buffer.size_class_ = size_class;
  return buffer;
}

// Every path but the cache's fast one: the environment not read yet, the history on, the cache
// off, or a request the cache does not serve.
[[gnu::noinline]] Result<Buffer> Buffer::allocate_slow(Device device, std::size_t nbytes,
                                                       std::size_t alignment) noexcept {
  static_cast<void>(buffer_cache_enabled());
  const int path = g_buffer_path.load(std::memory_order_relaxed);
  if ((path & kCacheOn) != 0 && cacheable(nbytes, alignment)) {
    if (WorkspacePool* cache = buffer_cache(device)) {
      Result<Buffer> buffer = allocate_cached(cache, device, nbytes);
      if (buffer.ok() && (path & kHistoryOn) != 0) {
        detail::history_remember(device, MemoryScope::global, buffer->data_, nbytes);
        buffer->ledger_ = 1; // remembered: reset() forgets it
      }
      return buffer;
    }
  }
  return allocate(Registry::global(), device, nbytes, alignment);
}
#endif

Result<Buffer> Buffer::allocate(Device device, std::size_t nbytes, std::size_t alignment) noexcept {
#if !DEVRT_BARE_METAL
  if (g_buffer_path.load(std::memory_order_relaxed) == kCacheOn && cacheable(nbytes, alignment)) [[likely]] {
    if (WorkspacePool* cache = buffer_cache(device)) [[likely]]
      return allocate_cached(cache, device, nbytes);
  }
  return allocate_slow(device, nbytes, alignment);
#else
  return allocate(Registry::global(), device, nbytes, alignment);
#endif
}

Result<Buffer> Buffer::allocate(const Registry& registry, Device device, std::size_t nbytes,
                                std::size_t alignment) noexcept {
  Result<BackendRef> backend = registry.get(device.kind);
  if (!backend.ok()) return std::move(backend).status();
  Result<void*> data = backend->allocate(device.id, nbytes, alignment);
  if (!data.ok()) return std::move(data).status();
  Buffer buffer;
  buffer.backend_ = backend->table();
  buffer.device_ = device;
  buffer.data_ = *data;
  buffer.size_ = nbytes;
  if (&registry == &Registry::global() && *data != nullptr)
    buffer.ledger_ = detail::ledger_allocated(device, MemoryScope::global, *data, nbytes);
  return buffer;
}

Result<Buffer> Buffer::allocate_scoped(Device device, MemoryScope scope, std::size_t nbytes,
                                       std::size_t alignment) noexcept {
  if (scope == MemoryScope::global) return allocate(Registry::global(), device, nbytes, alignment);
  DEVRT_ASSIGN_OR_RETURN(BackendRef backend, Registry::global().get(device.kind));
  DEVRT_ASSIGN_OR_RETURN(void* data, backend.scope_allocate(device.id, scope, nbytes, alignment));
  Buffer buffer;
  buffer.backend_ = backend.table();
  buffer.device_ = device;
  buffer.data_ = data;
  buffer.size_ = data != nullptr ? nbytes : 0;
  if (data != nullptr) buffer.ledger_ = detail::ledger_allocated(device, scope, data, nbytes);
  return buffer;
}

BackendRef Buffer::backend() const noexcept { return BackendRef(backend_); }

#if !DEVRT_BARE_METAL
Result<Buffer> Buffer::allocate(Device device, std::size_t nbytes, StreamRef stream) noexcept {
  if (stream.device != device) {
    return make_error(ErrorCode::invalid_argument, device, " allocate(", nbytes, " bytes) on a stream of ",
                      stream.device);
  }
  Result<BackendRef> backend = backend_for(device);
  if (!backend.ok()) return std::move(backend).status();
  DEVRT_RETURN_IF_ERROR(backend->check_device(device.id));
  if (nbytes == 0) return Buffer();
  if (nbytes > SIZE_MAX / 2) return detail::allocation_size_error(device, nbytes, kDefaultAlignment);
  detail::StreamPool* pool = nullptr; // the device's, unless the stream is being captured
  if (detail::captures_active()) [[unlikely]] {
    if (std::optional<Status> refused = detail::g_capture_hooks.pool(stream, &pool); refused && !refused->ok())
      return std::move(*refused);
  }
  Buffer buffer;
  DEVRT_ASSIGN_OR_RETURN(buffer.data_, detail::stream_pool_allocate(pool, device, nbytes, stream, &buffer.pooled_bytes_,
                                                                    &buffer.stream_pool_));
  buffer.backend_ = backend->table();
  buffer.device_ = device;
  buffer.size_ = nbytes;
  buffer.stream_ = stream.handle;
  return buffer;
}
#else
Result<Buffer> Buffer::allocate(Device device, std::size_t nbytes, StreamRef) noexcept {
  return allocate(device, nbytes);
}
#endif

Status Buffer::reset() noexcept {
  Status status;
  if (data_ != nullptr) {
#if !DEVRT_BARE_METAL
    // A live graph that touches the memory takes the Buffer over (devrt/graph.hpp); a graph's
    // private pool keeps its own memory and serves its capture again at once.
    if (detail::graphs_touch_memory() && (stream_pool_ == nullptr || !detail::is_graph_pool(stream_pool_)) &&
        detail::g_keep_alive_hooks.buffer(*this)) [[unlikely]] {
      ledger_ = 0;
      return status;
    }
    if (stream_pool_ != nullptr) {
      detail::stream_pool_free(detail::exchange(stream_pool_, nullptr), data_, pooled_bytes_, stream_);
    } else if (cache_ != nullptr) {
      // Work queued before this free may still use the memory: cache it only once the device has
      // finished that work (what the backend's own free waits for). If the device cannot say, the
      // memory goes back to the backend, whose free reports what is wrong.
      BackendRef backend(backend_);
      Status idle = backend.has_capability(DEVRT_CAP_SYNCHRONOUS) ? Status() : backend.device_synchronize(device_.id);
      if (ledger_ != 0) [[unlikely]]
        detail::history_forget(device_, data_);
      if (idle.ok()) [[likely]] {
        cache_->free_block(data_, size_class_, size_);
      } else {
        // A lost device (unavailable) was reported by the call that lost it: not once per buffer.
        if (idle.code() != ErrorCode::unavailable) DEVRT_LOG(warning, "Buffer: not cached: ", idle.message());
        status = cache_->discard_block(data_, size_class_, size_);
      }
    } else {
      status = BackendRef(backend_).free(device_.id, data_);
      if (ledger_ != 0) detail::ledger_freed(device_, ledger_, data_, size_);
    }
#else
    status = BackendRef(backend_).free(device_.id, data_);
    if (ledger_ != 0) detail::ledger_freed(device_, ledger_, data_, size_);
#endif
  }
  if (!status.ok()) DEVRT_LOG(error, "Buffer: ", status.message());
  data_ = nullptr;
  size_ = 0;
  cache_ = nullptr;
  ledger_ = 0;
  return status;
}

Result<Device> copy_device(Device src, Device dst) noexcept {
  Registry& registry = Registry::global();
  BackendRef src_backend = registry.find(src.kind);
  BackendRef dst_backend = registry.find(dst.kind);
  if (!src_backend || !dst_backend) return registry.get(src_backend ? dst.kind : src.kind).status();
  return route_copy(src, src_backend, dst, dst_backend).device;
}

namespace {
// Every copy but the host-to-host fast path below: the same checks, then the route.
[[gnu::noinline]] Status copy_routed(const MemorySpan& src, std::size_t src_offset, const MemorySpan& dst,
                                     std::size_t dst_offset, std::size_t nbytes, StreamRef stream) noexcept {
  if (!range_ok(src, src_offset, nbytes)) [[unlikely]]
    return detail::copy_range_error("source", src, src_offset, nbytes);
  if (!range_ok(dst, dst_offset, nbytes)) [[unlikely]]
    return detail::copy_range_error("destination", dst, dst_offset, nbytes);
  Registry& registry = Registry::global();
  BackendRef src_backend = registry.find(src.device.kind);
  BackendRef dst_backend = registry.find(dst.device.kind);
  if (!src_backend || !dst_backend) [[unlikely]] {
    return registry.get(src_backend ? dst.device.kind : src.device.kind).status();
  }
  DEVRT_RETURN_IF_ERROR(src_backend.check_device(src.device.id));
  if (dst.device != src.device) DEVRT_RETURN_IF_ERROR(dst_backend.check_device(dst.device.id));
  if (nbytes == 0) return Status();
  if (ranges_overlap(src, src_offset, src_backend, dst, dst_offset, dst_backend, nbytes)) [[unlikely]] {
    return detail::copy_overlap_error(src, src_offset, dst, dst_offset, nbytes);
  }

  const CopyRoute route = route_copy(src.device, src_backend, dst.device, dst_backend);
  const BackendRef handler = route.handler;
  const Device side = route.device;
  if (stream == StreamRef{}) stream = current_stream(side);
  if (detail::captures_active()) [[unlikely]] {
    if (std::optional<Status> captured =
            detail::g_capture_hooks.copy(handler, side, src, src_offset, dst, dst_offset, nbytes, stream))
      return *captured;
  }
  if (!handler) {
#if DEVRT_BARE_METAL
    // The backends of a bare-metal build (cpu, hexagon) all address host memory: never reached.
    return make_error(ErrorCode::internal, "copy ", src.device, " -> ", dst.device, ": no backend reaches both");
#else
    if (stream.device != side) return detail::copy_stream_error(src, dst, stream.device, side, true);
    return copy_staged(src_backend, src, src_offset, dst_backend, dst, dst_offset, nbytes, stream);
#endif
  }
  if (stream.device != side) [[unlikely]]
    return detail::copy_stream_error(src, dst, stream.device, side, false);
  return copy_with(handler, side, src, src_offset, dst, dst_offset, nbytes, stream);
}
} // namespace

Status copy(const MemorySpan& src, std::size_t src_offset, const MemorySpan& dst, std::size_t dst_offset,
            std::size_t nbytes, StreamRef stream) noexcept {
  // Host to host on the built-in CPU backend, the most common copy of all: the same checks and
  // the same bytes as copy_routed, with nothing to look up. The CPU backend has one device and
  // synchronous streams, so any stream of cpu:0 is the right one.
  if (src.device == kHostDevice && dst.device == kHostDevice && stream.device == kHostDevice &&
      detail::g_host_copy_direct.load(std::memory_order_relaxed) && !detail::captures_active() &&
      range_ok(src, src_offset, nbytes) && range_ok(dst, dst_offset, nbytes)) [[likely]] {
    auto* to = static_cast<std::byte*>(dst.data) + dst_offset;
    const auto* from = static_cast<const std::byte*>(src.data) + src_offset;
    if (intersects(reinterpret_cast<std::uintptr_t>(from), reinterpret_cast<std::uintptr_t>(to), nbytes)) [[unlikely]]
      return detail::copy_overlap_error(src, src_offset, dst, dst_offset, nbytes);
    detail::copy_host(to, from, nbytes);
    return Status();
  }
  return copy_routed(src, src_offset, dst, dst_offset, nbytes, stream);
}

} // namespace devrt
