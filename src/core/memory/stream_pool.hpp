// SPDX-License-Identifier: Apache-2.0
// Stream-ordered allocation (Buffer::allocate(device, n, stream)): a pool per device whose freed
// blocks carry the stream they were freed on and an event recorded there. A block serves the same
// stream's next allocations at once (the stream runs in order) and other streams' once its event
// has completed, as PyTorch's caching allocator does. A graph's private pool (devrt/graph.hpp)
// serves the allocations made while its stream is captured and keeps their memory while the graph
// lives, so that the addresses it replays stay valid.
#ifndef DEVRT_SRC_CORE_MEMORY_STREAM_POOL_HPP
#define DEVRT_SRC_CORE_MEMORY_STREAM_POOL_HPP

#include <cstddef>
#include <cstdint>

#include <devrt/device.hpp>
#include <devrt/status.hpp>

namespace devrt {
struct StreamRef;
class BackendRef;
} // namespace devrt

namespace devrt::detail {

class StreamPool;

// A block of at least `bytes` for work on `stream` from `pool` (the device's pool when null), with
// a reference on the pool for the Buffer that holds it; *rounded is the block's size.
Result<void*> stream_pool_allocate(StreamPool* pool, Device device, std::size_t bytes, StreamRef stream,
                                   std::size_t* rounded, StreamPool** holder) noexcept;
// The block goes back to `pool` once `stream` reaches this point; drops the Buffer's reference.
void stream_pool_free(StreamPool* pool, void* data, std::size_t rounded, void* stream) noexcept;

// A graph's private pool (one reference: the graph's), and the graph letting it go: its memory
// goes back to the backend once no Buffer holds a block of it.
StreamPool* make_graph_pool(BackendRef backend, Device device) noexcept;
void release_graph_pool(StreamPool* pool) noexcept;
bool is_graph_pool(const StreamPool* pool) noexcept;

struct StreamPoolFigures {
  std::uint64_t reserved_bytes = 0; // taken from the backend by the device's pools, graphs' included
  std::uint64_t cached_bytes = 0;   // free in them
  std::uint64_t graph_bytes = 0;    // of reserved_bytes, held by graphs' private pools
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
};
StreamPoolFigures stream_pool_figures(Device device) noexcept;
// Gives the device pool's free blocks whose frees have completed back to the backend (empty_cache).
Status release_stream_pool(Device device) noexcept;

} // namespace devrt::detail

#endif // DEVRT_SRC_CORE_MEMORY_STREAM_POOL_HPP
