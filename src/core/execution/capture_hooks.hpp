// SPDX-License-Identifier: Apache-2.0
// The one seam between the code that issues work or frees memory and graphs (devrt/graph.hpp):
// two tables of hooks, declared here by their callers and defined by the graphs code
// (graph.cpp, graph_memory.cpp), which no other file includes. While no stream of the process is
// capturing and no graph touches memory, a caller pays one relaxed load (captures_active(),
// graphs_touch_memory()) and makes no call through a table.
#ifndef DEVRT_SRC_CORE_EXECUTION_CAPTURE_HOOKS_HPP
#define DEVRT_SRC_CORE_EXECUTION_CAPTURE_HOOKS_HPP

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

class StreamPool;

// What a call that issues or waits for work asks while captures_active(): each hook answers
// nullopt when no capture concerns the call (go on as usual), else the call's outcome (recorded
// into the graph: ok; refused: the error).
struct CaptureHooks {
  // A checked launch of `function` (of `module`) on desc.stream of `device`.
  std::optional<Status> (*launch)(Device device, void* function, void* module, std::string_view kernel,
                                  const devrt_launch_desc& desc) noexcept;
  // A checked copy that `handler` (null: staged between backends) runs on `stream` of `side`.
  std::optional<Status> (*copy)(BackendRef handler, Device side, const MemorySpan& src, std::size_t src_offset,
                                const MemorySpan& dst, std::size_t dst_offset, std::size_t nbytes,
                                StreamRef stream) noexcept;
  // Event::record, Event::wait_on, and the calls that wait (synchronize a stream, a device, an
  // event: `event` null for the first two, `stream` ignored for the last two).
  std::optional<Status> (*event_record)(void* event, StreamRef stream) noexcept;
  std::optional<Status> (*event_wait)(void* event, StreamRef stream) noexcept;
  std::optional<Status> (*wait)(const char* call, StreamRef stream, bool whole_device, void* event) noexcept;
  // Buffer::allocate(device, n, stream): *pool is the graph's private pool when `stream` is being
  // captured; refused when another stream of the device is.
  std::optional<Status> (*pool)(StreamRef stream, StreamPool** pool) noexcept;
  // A stream is being destroyed: its capture, if any, ends and is dropped.
  void (*stream_destroyed)(StreamRef stream) noexcept;
  // A module of `device` is being unloaded (called whether or not anything captures): the
  // device's graphs that launch its kernels refuse to replay from now on.
  void (*forget_module)(Device device, void* module) noexcept;
};
extern const CaptureHooks g_capture_hooks; // graph.cpp

// What live graphs keep of `device`'s memory that its owners have freed (memory_stats).
struct GraphMemoryFigures {
  std::uint64_t held_bytes = 0;
  std::uint64_t held_allocations = 0;
};

// Memory's "keep alive until released": an owner is freeing memory; when a live graph or capture
// touches it, the graph takes the owner over (the Buffer or Workspace is moved from, the storage
// keeps one reference for the graph) and frees it when the graph is destroyed; true then. Call
// only when graphs_touch_memory().
struct KeepAliveHooks {
  bool (*buffer)(Buffer& buffer) noexcept;
  bool (*workspace)(Workspace& workspace, Device device) noexcept;
  bool (*storage)(TensorStorage* storage) noexcept;
  // What the graphs keep of a device's memory, for memory_stats (any time).
  GraphMemoryFigures (*figures)(Device device) noexcept;
};
extern const KeepAliveHooks g_keep_alive_hooks; // graph_memory.cpp

} // namespace devrt::detail

#endif // DEVRT_SRC_CORE_EXECUTION_CAPTURE_HOOKS_HPP
