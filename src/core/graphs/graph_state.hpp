// SPDX-License-Identifier: Apache-2.0
// What a captured graph is inside the core (devrt/graph.hpp): its recorded nodes, the runs a
// backend baked, and the memory it keeps alive. Shared by graph.cpp (capture, replay, update) and
// graph_memory.cpp (the memory rule).
#ifndef DEVRT_SRC_CORE_GRAPHS_GRAPH_STATE_HPP
#define DEVRT_SRC_CORE_GRAPHS_GRAPH_STATE_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <devrt/backend/backend_abi.h>
#include <devrt/device.hpp>
#include <devrt/memory.hpp>
#include <devrt/status.hpp>
#include <devrt/workspace.hpp>

namespace devrt::detail {

struct TensorStorage;
class StreamPool;

// Node kinds beyond the two a backend bakes (DEVRT_GRAPH_NODE_LAUNCH, DEVRT_GRAPH_NODE_COPY).
inline constexpr std::int32_t kHostCopyNode = 100;    // host -> device: issued by the core at each replay
inline constexpr std::int32_t kEventRecordNode = 101; // Event::record on the replaying stream

struct GraphNode {
  std::int32_t kind = 0;
  void* function = nullptr;
  void* module = nullptr;
  std::string kernel;
  devrt_launch_desc launch{};
  std::vector<devrt_kernel_arg> args;
  devrt_copy_desc copy{};
  Device src_device; // copies: the sides' devices (the descriptor holds device objects, set at replay)
  Device dst_device;
  void* event = nullptr;
};

// A run of nodes a backend may bake: launches and copies within the device.
struct GraphRun {
  std::size_t first = 0;
  std::size_t count = 0;
  void* native = nullptr; // the backend's object; null: the core issues the nodes
};

// Memory whose owner freed it while the graph touched it (graph_memory.cpp): the owner itself,
// taken over, so that the memory goes back exactly as its free would have sent it, later.
struct DirectHold {
  Device device;
  void* data = nullptr;
  std::size_t bytes = 0;
  Status (*free)(Device device, void* data) noexcept = nullptr;
};
struct WorkspaceHold {
  Device device;
  Workspace workspace;
};
struct GraphHolds {
  std::vector<Buffer> buffers;
  std::vector<WorkspaceHold> workspaces;
  std::vector<TensorStorage*> storages; // one reference each
  std::vector<DirectHold> direct;
  bool empty() const noexcept { return buffers.empty() && workspaces.empty() && storages.empty() && direct.empty(); }
};

struct GraphState {
  const devrt_backend_table* backend = nullptr;
  Device device;
  void* captured_stream = nullptr;
  std::vector<GraphNode> nodes;
  std::vector<std::size_t> launches; // node index of each launch, in capture order
  std::vector<GraphRun> runs;
  std::vector<void*> recorded_events; // during capture: the events recorded, which may be waited for
  Status first_error;
  std::atomic<bool> orphaned{false}; // a module it launches was unloaded
  const char* orphan_kernel = nullptr;
  StreamPool* pool = nullptr;          // the private pool of allocations made while capturing, if any
  bool counted = false;                // counted as an object of its device (open_for_object) until destroyed
  GraphHolds holds;                    // under the touched-memory lock (graph_memory.cpp)
  std::vector<Device> touched_devices; // whose memory it touches (their DeviceGraphs); that lock too

  GraphState() noexcept = default;
  GraphState(const GraphState&) = delete;
  GraphState& operator=(const GraphState&) = delete;
  // Lets go of the memory it touched (waiting for the device first when it kept any), then of its
  // private pool.
  ~GraphState();
};

// The memory a node touches becomes the graph's to keep (called as each node is captured).
void graph_touch_node(GraphState& graph, const GraphNode& node) noexcept;
// After an update: what the graph touches is its nodes' memory again; memory it no longer touches
// goes back as its owner's free would have sent it.
void graph_retouch(GraphState& graph) noexcept;
// The graph lets go of everything it touched: kept memory is handed to the caller, who frees it.
GraphHolds graph_untouch(GraphState& graph) noexcept;

} // namespace devrt::detail

#endif // DEVRT_SRC_CORE_GRAPHS_GRAPH_STATE_HPP
