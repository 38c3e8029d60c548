// SPDX-License-Identifier: Apache-2.0
// Captured work graphs: the copies, launches and event records issued to one stream between
// begin_capture and end_capture, kept instead of run, and replayed with one call as often as
// wanted (CUDA graphs, IREE's reusable command buffers, TVM's cuda_graph builtins).
//
//   devrt::Status s = devrt::begin_capture(stream);
//   ... copies and launches on `stream`: recorded, not run ...
//   devrt::Result<devrt::Graph> graph = devrt::end_capture(stream);
//   for (int i = 0; i < steps; ++i) s = graph->launch(stream);
//
// Memory a graph touches: from the moment a launch or copy naming device memory is captured until
// the graph is destroyed, that memory is the graph's to keep. Freeing its owner meanwhile frees
// nothing: the graph takes the owner over and frees it when it is destroyed (after waiting for the
// device), so no replay reads or writes memory that has become someone else's. The rule, by kind:
// - Buffer (any allocate(): cached, uncached, scoped, stream-ordered), Workspace, Tensor (its
//   storage, textures and views included) and direct::Buffer: kept as above; MemoryStats::
//   graph_held_bytes counts what the graphs keep, still counted as allocated.
// - Buffers allocated while the stream is captured: the graph's private pool, which lives as long
//   as the graph (Buffer::allocate(device, n, stream)).
// - A Tensor imported through DLPack: the graph keeps the import, so the producer's deleter runs
//   when the graph is destroyed, not before.
// - Graph::update: the memory the new arguments name is kept from the update on; memory no launch
//   names any more is let go (freed then if its owner was freed).
// - Memory devrt does not allocate (host memory given as host_span, a backend's allocation made
//   through BackendRef): devrt cannot see it freed. The host source of a copy is read at every
//   replay; keep such memory alive and unchanged until the graph is gone (or change it on purpose
//   between replays to feed new input).
// Several graphs may touch the same memory: it is freed when the last of them is destroyed.
//
// docs/graphs.md: the model, what each backend does natively, what is refused during capture.
#ifndef DEVRT_GRAPH_HPP
#define DEVRT_GRAPH_HPP

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>

#include <devrt/device.hpp>
#include <devrt/module.hpp>
#include <devrt/status.hpp>
#include <devrt/stream.hpp>

namespace devrt {

namespace detail {
struct GraphState;
} // namespace detail

// How a graph replays: every run of launches and device copies baked into the backend's own
// replayable object (native: a reusable Vulkan command buffer, an OpenCL command buffer), none
// (recorded: devrt issues the recorded sequence again), or some of each (host copies and event
// records are always issued by devrt between the native runs).
enum class GraphMode : std::int32_t { native = 0, recorded = 1, mixed = 2 };

// "native", "recorded", "mixed". Thread-safe.
const char* graph_mode_name(GraphMode mode) noexcept;

// Starts capturing `stream`, a stream made with Stream::create (a default stream is refused:
// everything issued without a stream goes there). Until end_capture, on the stream's device:
// - launches, device-to-device copies, host-to-device copies and Event::record on `stream` are
//   recorded, not run (the host source of a copy is read at each replay: keep it alive and
//   unchanged until the graph is gone or replays with new data on purpose);
// - Event::wait_on(stream) is accepted for an event recorded in this capture (a no-op: the stream
//   is in order) and refused for any other;
// - refused with invalid_argument naming the call and the capturing stream: copies that read
//   device memory into host memory, work issued to any other stream of the device, synchronizing
//   the stream, the device or an event recorded in the capture, a second capture on the device.
// Events used must outlive the graph; memory follows the rule at the top of this header.
// Thread-safe; one capture per device at a time.
Status begin_capture(StreamRef stream) noexcept;

// True while `stream` is being captured. Thread-safe.
bool is_capturing(StreamRef stream) noexcept;

// A graph: what was captured, replayable on any stream of its device. Move-only; destroying it
// waits for nothing (a backend's native object is freed once its replays have finished) unless it
// keeps memory whose owner was freed: then it waits for the device before freeing that memory.
// Replaying one Graph from several threads at once is safe; update() is not (nothing may replay it
// meanwhile).
class Graph {
public:
  Graph() noexcept = default;
  Graph(Graph&& other) noexcept;
  Graph& operator=(Graph&& other) noexcept;
  ~Graph();

  // Queues the captured work on `stream` (the device's: invalid_argument otherwise), in order
  // after what the stream already has, asynchronously like any work. Refused (invalid_argument)
  // once a module whose kernels it launches was unloaded. Thread-safe.
  Status launch(StreamRef stream) const noexcept;

  // Changes launch number `launch_index` (in capture order, from 0) to take `args` from the next
  // replay on: new scalars and buffers of the same kinds and types. An update that changes the
  // graph's shape is refused with invalid_argument (another argument count, a buffer where a scalar
  // was, another scalar type, a buffer of another device); out_of_range for an index past the
  // launches. Native runs are re-baked. Not thread-safe against launch().
  Status update(std::size_t launch_index, std::span<const KernelArg> args) noexcept;
  Status update(std::size_t launch_index, std::initializer_list<KernelArg> args) noexcept {
    return update(launch_index, std::span<const KernelArg>(args.begin(), args.size()));
  }

  Device device() const noexcept;
  GraphMode mode() const noexcept;
  // Captured operations (launches, copies, event records) and launches among them.
  std::size_t node_count() const noexcept;
  std::size_t launch_count() const noexcept;
  explicit operator bool() const noexcept { return state_ != nullptr; }
  void reset() noexcept;

private:
  friend Result<Graph> end_capture(StreamRef stream) noexcept;
  explicit Graph(detail::GraphState* state) noexcept : state_(state) {}
  detail::GraphState* state_ = nullptr;
};

// Ends the capture of `stream` and returns what it recorded as a Graph (an empty capture gives a
// graph of no nodes). The first error met while capturing, if any, is returned instead (the
// capture ends either way). invalid_argument when `stream` is not capturing. Thread-safe.
Result<Graph> end_capture(StreamRef stream) noexcept;

} // namespace devrt

#endif // DEVRT_GRAPH_HPP
