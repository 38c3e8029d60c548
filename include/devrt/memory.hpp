// SPDX-License-Identifier: Apache-2.0
// Device memory: owned Buffers, non-owning MemorySpans, and checked copies between them.
#ifndef DEVRT_MEMORY_HPP
#define DEVRT_MEMORY_HPP

#include <cstddef>
#include <cstdint>
#include <span>

#include <devrt/device.hpp>
#include <devrt/status.hpp>
#include <devrt/stream.hpp>
#include <devrt/workspace.hpp>

namespace devrt {

namespace detail {
class StreamPool;
} // namespace detail

// A non-owning view of `size` bytes of memory on `device`. For backends whose memory is not
// addressable (OpenCL cl_mem, Vulkan buffers) `data` is the allocation's handle and offsets are
// applied by the backend. Host memory is DeviceKind::cpu. A plain value.
struct MemorySpan {
  Device device;
  void* data = nullptr;
  std::size_t size = 0;
};

// Views host memory as a span on the CPU device. The span is not written through when used as a
// copy source.
inline MemorySpan host_span(const void* data, std::size_t size) noexcept {
  return MemorySpan{kHostDevice, const_cast<void*>(data), size};
}
template <class T, std::size_t N>
MemorySpan host_span(std::span<T, N> data) noexcept {
  return host_span(static_cast<const void*>(data.data()), data.size_bytes());
}

// An owned device allocation, freed when the Buffer dies (errors are logged). Move-only.
// A zero-size Buffer is valid and holds no memory. Not thread-safe to mutate concurrently.
class Buffer {
public:
  Buffer() noexcept = default;
  Buffer(Buffer&& other) noexcept
      : backend_(detail::exchange(other.backend_, nullptr)), device_(other.device_),
        data_(detail::exchange(other.data_, nullptr)), size_(detail::exchange(other.size_, 0)),
        cache_(detail::exchange(other.cache_, nullptr)), size_class_(other.size_class_), ledger_(other.ledger_),
        stream_pool_(detail::exchange(other.stream_pool_, nullptr)), stream_(other.stream_),
        pooled_bytes_(other.pooled_bytes_) {}
  Buffer& operator=(Buffer&& other) noexcept {
    if (this != &other) {
      static_cast<void>(reset());
      backend_ = detail::exchange(other.backend_, nullptr);
      device_ = other.device_;
      data_ = detail::exchange(other.data_, nullptr);
      size_ = detail::exchange(other.size_, 0);
      cache_ = detail::exchange(other.cache_, nullptr);
      size_class_ = other.size_class_;
      ledger_ = other.ledger_;
      stream_pool_ = detail::exchange(other.stream_pool_, nullptr);
      stream_ = other.stream_;
      pooled_bytes_ = other.pooled_bytes_;
    }
    return *this;
  }
  ~Buffer() { static_cast<void>(reset()); }

  // Allocates `nbytes` on `device` (global registry). alignment must be a power of two no
  // larger than kMaxAlignment. Errors: invalid_argument (bad device or alignment),
  // out_of_memory (including sizes beyond the device's memory), unavailable. Thread-safe.
  //
  // Served from the device's Buffer cache when it has one (see empty_cache): requests of 1 byte
  // to kMaxCachedBufferBytes with alignment <= kDefaultAlignment, rounded up to a power of two.
  static Result<Buffer> allocate(Device device, std::size_t nbytes, std::size_t alignment = kDefaultAlignment) noexcept;
  // In memory scope `scope` of `device` (devrt/device.hpp), never cached: global is allocate();
  // flat memory such as Hexagon's global.vtcm comes from the backend's scope; a scope the device
  // lacks is unsupported naming both, a texture scope unsupported (Tensor::empty makes textures).
  // Thread-safe.
  static Result<Buffer> allocate_scoped(Device device, MemoryScope scope, std::size_t nbytes,
                                        std::size_t alignment = kDefaultAlignment) noexcept;
  // Stream-ordered (CUDA's cuMemAllocAsync, PyTorch's caching allocator): `nbytes` usable by work on
  // `stream` (of `device`: invalid_argument otherwise) from this call on. The Buffer is freed on
  // that stream when it is reset or destroyed: its memory returns to the device's stream pool once
  // the stream reaches that point (an event recorded there), serving the stream's next allocations
  // at once and other streams' once the event has completed; empty_cache gives free blocks back.
  // While `stream` is captured (devrt/graph.hpp) the memory comes from the graph's private pool
  // instead and stays the graph's while it lives, so that the addresses it replays stay valid; a
  // Buffer freed during the capture serves the capture's later allocations. Sizes are rounded up to
  // a power of two (at least 512 B). Figures: MemoryStats::stream_pool_*. Thread-safe.
  static Result<Buffer> allocate(Device device, std::size_t nbytes, StreamRef stream) noexcept;
  // From `registry`'s backend, never cached.
  static Result<Buffer> allocate(const Registry& registry, Device device, std::size_t nbytes,
                                 std::size_t alignment = kDefaultAlignment) noexcept;

  Device device() const noexcept { return device_; }
  void* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  MemorySpan span() const noexcept { return MemorySpan{device_, data_, size_}; }
  operator MemorySpan() const noexcept { return span(); }
  // The backend that owns the memory (<devrt/backend/registry.hpp>).
  BackendRef backend() const noexcept;

  // Frees the memory now (into the cache when it came from one). Returns the backend's answer
  // (the destructor logs it instead).
  Status reset() noexcept;

private:
  static Result<Buffer> allocate_cached(WorkspacePool* cache, Device device, std::size_t nbytes) noexcept;
  static Result<Buffer> allocate_slow(Device device, std::size_t nbytes, std::size_t alignment) noexcept;

  const devrt_backend_table* backend_ = nullptr;
  Device device_;
  void* data_ = nullptr;
  std::size_t size_ = 0;
  WorkspacePool* cache_ = nullptr; // the Buffer cache the memory goes back to, or null
  std::uint32_t size_class_ = 0;
  // Uncached: the device ledger's tag (devrt/memory_stats.hpp), 0 if none; cached: 1 when the
  // allocation history remembers it.
  std::uint32_t ledger_ = 0;
  // Stream-ordered: the pool the memory goes back to, the stream it is freed on, the block's size.
  detail::StreamPool* stream_pool_ = nullptr;
  void* stream_ = nullptr;
  std::size_t pooled_bytes_ = 0;
};

// ---- The Buffer cache ---------------------------------------------------------------------
//
// Buffer::allocate keeps freed memory per device and hands it out again, so that a loop of
// allocate/free costs a few pointer moves instead of a trip to the backend (PyTorch's caching
// allocator does the same for CUDA). Sizes are rounded up to a power of two. Each thread keeps a
// few blocks per size class without locks; the rest go to a shared list bounded by
// DEVRT_BUFFER_CACHE_LIMIT bytes (default 256 MiB per device), beyond which memory goes back to
// the backend. A device has a cache when its backend can tell that freed memory is no longer in
// use: a synchronous backend (DEVRT_CAP_SYNCHRONOUS: every operation has finished when its call
// returns, as on the CPU), or one with device_synchronize (CUDA, ROCm, Vulkan), which a freed
// Buffer waits for before its memory is cached, as the backend's own free (cuMemFree, Vulkan's
// drain) waits. Others (OpenCL, whose clReleaseMemObject does not wait) free straight to the
// backend.
//
// Off for the whole process with DEVRT_BUFFER_CACHE=0 in the environment, or at run time with
// set_buffer_cache_enabled(false). Bare-metal builds (DEVRT_BARE_METAL) have no cache.

// Requests larger than this go straight to the backend.
inline constexpr std::size_t kMaxCachedBufferBytes = std::size_t{64} << 20;

// Gives the cached, unused memory of `device` back to its backend: the shared list and the calling
// thread's blocks (other threads' few blocks go back when they exit). Buffers in use are
// unaffected. Ok when the device has no cache; invalid_argument for a device that does not exist.
// Thread-safe.
Status empty_cache(Device device) noexcept;

// The device's Buffer cache in figures (all zero when it has none). Thread-safe.
Result<PoolStats> buffer_cache_stats(Device device) noexcept;

// Whether Buffer::allocate uses the caches from now on. Memory already cached stays there until
// empty_cache. Thread-safe.
void set_buffer_cache_enabled(bool enabled) noexcept;
bool buffer_cache_enabled() noexcept;

// Copies `nbytes` from src[src_offset...] to dst[dst_offset...] (host<->device, device<->device,
// across backends through a host bounce buffer). Checks before doing anything: ranges within the
// spans (out_of_range), no overlap between source and destination (invalid_argument), null data
// with non-zero size (invalid_argument). nbytes == 0 is a no-op. Thread-safe.
//
// Which stream runs it, and when it is complete (one rule for every pair of devices):
// - A copy runs on a stream of copy_device(src.device, dst.device): the destination, unless the
//   destination is host-accessible memory (cpu, cuda_host) and the source is another kind of
//   device than cpu, in which case the source device runs it (device -> host is the device's
//   DMA). `stream` must belong to that
//   device (invalid_argument otherwise); by default it is the calling thread's current stream of
//   that device.
// - The copy is complete once that stream is synchronized (devrt::synchronize, or an event
//   recorded after it). Until then the host must neither reuse the source nor read the
//   destination, by pointer or by another copy: a cuda -> cuda_host copy is a DMA pending on the
//   cuda device's stream, and synchronizing cuda_host does not wait for it.
// - Some copies are complete on return; synchronizing is still correct for them: copies between
//   two host-accessible spans, and staged copies between backends that cannot reach each other's
//   memory (opencl <-> vulkan), which wait for both sides.
//
// The spans are taken by reference: passed by value, GCC copies each 24-byte span with a 16-byte
// load of two 8-byte stores, a store-forwarding stall that cost 9 ns of an 11 ns 64-byte copy.
Status copy(const MemorySpan& src, std::size_t src_offset, const MemorySpan& dst, std::size_t dst_offset,
            std::size_t nbytes, StreamRef stream = {}) noexcept;

// The device whose stream runs a copy from `src` to `dst` (the rule above): a stream passed to
// copy() must belong to it, and synchronizing it completes the copy. unavailable for an
// unregistered kind. Thread-safe.
Result<Device> copy_device(Device src, Device dst) noexcept;

namespace detail {
// Why a whole-span copy between spans of different sizes is refused: an empty side (no memory)
// is named as such, since it is usually a Buffer after reset() or a move.
inline Status whole_copy_size_error(const MemorySpan& src, const MemorySpan& dst) noexcept {
  const bool src_empty = src.data == nullptr && src.size == 0;
  const bool dst_empty = dst.data == nullptr && dst.size == 0;
  if (src_empty || dst_empty) {
    return make_error(ErrorCode::invalid_argument, "copy: the ", dst_empty ? "destination" : "source",
                      " is empty (no memory: a Buffer after reset() or a move, or a default MemorySpan), the ",
                      dst_empty ? "source" : "destination", " is ", dst_empty ? src.size : dst.size, " bytes");
  }
  return make_error(ErrorCode::invalid_argument, "copy: source is ", src.size, " bytes but destination is ", dst.size,
                    " bytes");
}
} // namespace detail

// Whole-span copy; sizes must match.
inline Status copy(const MemorySpan& src, const MemorySpan& dst, StreamRef stream = {}) noexcept {
  if (src.size != dst.size) return detail::whole_copy_size_error(src, dst);
  return copy(src, 0, dst, 0, src.size, stream);
}

} // namespace devrt

#endif // DEVRT_MEMORY_HPP
