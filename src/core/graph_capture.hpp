// SPDX-License-Identifier: Apache-2.0
// What the core's entry points ask while a stream is being captured (devrt/graph.hpp): each
// answers nullopt when no capture concerns the call (go on as usual), else the call's outcome
// (recorded into the graph: ok; refused: the error). The check costs one relaxed load while no
// stream of the process is capturing.
#ifndef DEVRT_SRC_CORE_GRAPH_CAPTURE_HPP
#define DEVRT_SRC_CORE_GRAPH_CAPTURE_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include <devrt/backend/backend_abi.h>
#include <devrt/config.hpp>
#include <devrt/device.hpp>
#include <devrt/status.hpp>

namespace devrt {
// Declared only: memory.cpp and stream.cpp, which define them, include this header.
struct MemorySpan;
struct StreamRef;
class BackendRef;
class Buffer;
class Workspace;
} // namespace devrt

namespace devrt::detail {

struct TensorStorage;

#if DEVRT_BARE_METAL
// Firmware has no graphs: every check folds away.
inline bool captures_active() noexcept { return false; }
inline bool graphs_touch_memory() noexcept { return false; }
#else
extern std::atomic<int> g_active_captures;
inline bool captures_active() noexcept { return g_active_captures.load(std::memory_order_relaxed) != 0; }
// Whether any live graph or capture touches device memory (graph_memory.cpp).
extern std::atomic<int> g_touched_ranges;
inline bool graphs_touch_memory() noexcept { return g_touched_ranges.load(std::memory_order_relaxed) != 0; }
#endif

// An owner is freeing memory: when a live graph or capture touches it, the graph takes the owner
// over (the Buffer or Workspace is moved from, the storage keeps one reference for the graph) and
// frees it when the graph is destroyed; true then. Call only when graphs_touch_memory().
bool graph_keeps(Buffer& buffer) noexcept;
bool graph_keeps(Workspace& workspace, Device device) noexcept;
bool graph_keeps(TensorStorage* storage) noexcept;

// What live graphs keep of `device`'s memory that its owners have freed (memory_stats).
struct GraphMemoryFigures {
  std::uint64_t held_bytes = 0;
  std::uint64_t held_allocations = 0;
};
GraphMemoryFigures graph_memory_figures(Device device) noexcept;

// A checked launch of `function` (of `module`) on desc.stream of `device`.
std::optional<Status> capture_launch(Device device, void* function, void* module, std::string_view kernel,
                                     const devrt_launch_desc& desc) noexcept;
// A checked copy that `handler` (null: staged between backends) runs on `stream` of `side`.
std::optional<Status> capture_copy(BackendRef handler, Device side, const MemorySpan& src, std::size_t src_offset,
                                   const MemorySpan& dst, std::size_t dst_offset, std::size_t nbytes,
                                   StreamRef stream) noexcept;
// Event::record, Event::wait_on, and the calls that wait (synchronize a stream, a device, an
// event: `event` null for the first two, `stream` ignored for the last two).
std::optional<Status> capture_event_record(void* event, StreamRef stream) noexcept;
std::optional<Status> capture_event_wait(void* event, StreamRef stream) noexcept;
std::optional<Status> capture_wait(const char* call, StreamRef stream, bool whole_device, void* event) noexcept;
class StreamPool;
// Buffer::allocate(device, n, stream): *pool is the graph's private pool when `stream` is being
// captured; refused when another stream of the device is.
std::optional<Status> capture_pool(StreamRef stream, StreamPool** pool) noexcept;
// A stream is being destroyed: its capture, if any, ends and is dropped.
void capture_stream_destroyed(StreamRef stream) noexcept;
// A module is being unloaded: the graphs that launch its kernels refuse to replay from now on.
void graphs_forget_module(void* module) noexcept;

} // namespace devrt::detail

#endif // DEVRT_SRC_CORE_GRAPH_CAPTURE_HPP
