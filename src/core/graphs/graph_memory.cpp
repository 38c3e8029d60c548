// SPDX-License-Identifier: Apache-2.0
// The memory rule of captured graphs (devrt/graph.hpp, docs/graphs.md "Memory a graph touches"):
// every range of device memory a captured launch or copy names is registered as touched by its
// graph, from the moment it is captured until the graph is destroyed. When the owner of touched
// memory frees it (a Buffer, a Workspace, a Tensor's storage, a direct::Buffer), the free is not
// done: the graph takes the owner over and frees it when it is destroyed, so that no replay reads
// or writes memory that has become someone else's. The check costs one relaxed load while no graph
// touches memory.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include <devrt/backend/detail/mutex.hpp>
#include <devrt/backend/direct.hpp>
#include <devrt/backend/registry.hpp>
#include <devrt/log.hpp>

#include "core/devices/device_record.hpp"
#include "core/execution/capture_hooks.hpp"
#include "core/graphs/device_graphs.hpp"
#include "core/graphs/graph_state.hpp"
#include "core/memory/stream_pool.hpp"
#include "core/tensors/tensor_internal.hpp"

namespace devrt::detail {

std::atomic<int> g_touched_ranges{0};

namespace {

// The touched-memory lock: every device's ranges (DeviceGraphs::touched) and every graph's holds.
// Taken before the records' mutex (add_range may open a record), never after it.
Mutex g_touched_mutex;

// The first of `slot`'s ranges that starts at or after `begin`.
std::vector<TouchedRange>::iterator first_from(DeviceGraphs& slot, std::uintptr_t begin) noexcept {
  return std::lower_bound(slot.touched.begin(), slot.touched.end(), begin,
                          [](const TouchedRange& r, std::uintptr_t b) { return r.begin < b; });
}

bool by_address(Device device) noexcept {
  BackendRef backend = Registry::global().find(device.kind);
  return backend && backend.spans_are_addresses();
}

TouchedRange range_of(Device device, const void* data, std::size_t offset, std::size_t bytes, bool handle) noexcept {
  const auto base = reinterpret_cast<std::uintptr_t>(data);
  if (handle || !by_address(device)) return TouchedRange{base, base + 1, nullptr};
  const std::uintptr_t begin = base + offset;
  const std::uintptr_t span = bytes == 0 ? 1 : bytes;
  return TouchedRange{begin, begin + span < begin ? UINTPTR_MAX : begin + span, nullptr};
}

// The graphs slot of `device`'s record, opening the record (the memory of a device used only
// through the compile-time path has none yet) and making the slot; null when the device is not the
// global registry's or there is no host memory. Caller holds g_touched_mutex.
DeviceGraphs* touched_slot(Device device) noexcept {
  DeviceRecord* record = find_device_record(device);
  if (record == nullptr) {
    Result<DeviceRecord*> opened = open_device_record(device);
    if (!opened.ok()) return nullptr;
    record = *opened;
  }
  return claim_device_graphs(*record);
}

// Caller holds g_touched_mutex.
void add_range(GraphState& graph, Device device, TouchedRange range) noexcept {
  if (range.begin == 0) return; // no memory (a zero-size span)
  DeviceGraphs* slot = touched_slot(device);
  if (slot == nullptr) {
    DEVRT_LOG(error, graph.device, " graph: cannot register the memory it touches on ", device);
    return;
  }
  if (std::find(graph.touched_devices.begin(), graph.touched_devices.end(), device) == graph.touched_devices.end())
    graph.touched_devices.push_back(device);
  range.graph = &graph;
  auto at = first_from(*slot, range.begin);
  for (auto same = at; same != slot->touched.end() && same->begin == range.begin; ++same) {
    if (same->graph == &graph && same->end == range.end) return;
  }
  slot->touched.insert(at, range);
  slot->longest_range = std::max(slot->longest_range, range.end - range.begin);
  g_touched_ranges.fetch_add(1, std::memory_order_relaxed);
}

// Caller holds g_touched_mutex.
void touch_node(GraphState& graph, const GraphNode& node) noexcept {
  if (node.kind == DEVRT_GRAPH_NODE_LAUNCH) {
    for (const devrt_kernel_arg& arg : node.args) {
      if (arg.kind == DEVRT_ARG_SCALAR || arg.buffer == nullptr) continue;
      const Device device{static_cast<DeviceKind>(arg.device_kind), arg.device_id};
      add_range(graph, device, range_of(device, arg.buffer, arg.offset, arg.size, arg.kind == DEVRT_ARG_TEXTURE));
    }
    return;
  }
  if (node.kind != DEVRT_GRAPH_NODE_COPY && node.kind != kHostCopyNode) return;
  const devrt_copy_desc& copy = node.copy;
  add_range(graph, node.src_device, range_of(node.src_device, copy.src, copy.src_offset, copy.nbytes, false));
  add_range(graph, node.dst_device, range_of(node.dst_device, copy.dst, copy.dst_offset, copy.nbytes, false));
}

// Caller holds g_touched_mutex.
void remove_ranges(GraphState& graph) noexcept {
  for (Device device : graph.touched_devices) {
    DeviceGraphs* slot = device_graphs(find_device_record(device));
    if (slot == nullptr) continue; // the record was closed, its ranges with it
    const std::size_t before = slot->touched.size();
    std::erase_if(slot->touched, [&](const TouchedRange& r) { return r.graph == &graph; });
    g_touched_ranges.fetch_sub(static_cast<int>(before - slot->touched.size()), std::memory_order_relaxed);
  }
  graph.touched_devices.clear();
}

// The graph touching `bytes` at `data` on `device`, or null. Caller holds g_touched_mutex.
GraphState* toucher(Device device, const void* data, std::size_t bytes, bool handle) noexcept {
  DeviceGraphs* slot = device_graphs(find_device_record(device));
  if (slot == nullptr) return nullptr;
  const bool addresses = !handle && by_address(device);
  const TouchedRange freed = range_of(device, data, 0, bytes, !addresses);
  if (!addresses) {
    auto at = first_from(*slot, freed.begin);
    return at != slot->touched.end() && at->begin == freed.begin ? at->graph : nullptr;
  }
  // A range overlapping [begin, end) starts before end, and no earlier than the longest range before begin.
  const std::uintptr_t earliest = freed.begin > slot->longest_range ? freed.begin - slot->longest_range : 0;
  for (auto r = first_from(*slot, earliest); r != slot->touched.end() && r->begin < freed.end; ++r) {
    if (freed.begin < r->end) return r->graph;
  }
  return nullptr;
}

} // namespace

void graph_touch_node(GraphState& graph, const GraphNode& node) noexcept {
  LockGuard lock(g_touched_mutex);
  touch_node(graph, node);
}

GraphHolds graph_untouch(GraphState& graph) noexcept {
  LockGuard lock(g_touched_mutex);
  remove_ranges(graph);
  return std::exchange(graph.holds, GraphHolds{});
}

namespace {

// Frees what a graph kept: each owner's free runs again, so memory another live graph still
// touches is taken over by that one. The device has finished every replay first (the frees that
// wait, Buffer's cache among them, would wait too; the others would not).
void free_holds(const GraphState& graph, GraphHolds holds) noexcept {
  if (holds.empty()) return;
  BackendRef backend(graph.backend);
  if (backend.has_device_synchronize()) {
    Status idle = backend.device_synchronize(graph.device.id);
    if (!idle.ok())
      DEVRT_LOG(warning, "graph: freeing the memory it kept without its replays finished: ", idle.message());
  }
  holds.buffers.clear();
  holds.workspaces.clear();
  for (TensorStorage* storage : holds.storages) release(storage);
  for (const DirectHold& kept : holds.direct) {
    if (direct::detail::graph_keeps_direct(kept.device, kept.data, kept.bytes, kept.free)) continue;
    Status freed = kept.free(kept.device, kept.data);
    if (!freed.ok()) DEVRT_LOG(error, "graph: ", freed.message());
  }
}

} // namespace

void graph_retouch(GraphState& graph) noexcept {
  GraphHolds holds;
  {
    LockGuard lock(g_touched_mutex);
    remove_ranges(graph);
    for (const GraphNode& node : graph.nodes) touch_node(graph, node);
    holds = std::exchange(graph.holds, GraphHolds{});
  }
  free_holds(graph, std::move(holds)); // what the graph still touches comes straight back
}

GraphState::~GraphState() {
  free_holds(*this, graph_untouch(*this));
  if (pool != nullptr) release_graph_pool(pool);
  if (counted) object_destroyed(BackendRef(backend), device.id);
}

bool graph_keeps(Buffer& buffer) noexcept {
  LockGuard lock(g_touched_mutex);
  GraphState* graph = toucher(buffer.device(), buffer.data(), buffer.size(), false);
  if (graph == nullptr) return false;
  graph->holds.buffers.push_back(std::move(buffer));
  return true;
}

bool graph_keeps(Workspace& workspace, Device device) noexcept {
  LockGuard lock(g_touched_mutex);
  GraphState* graph = toucher(device, workspace.data(), workspace.size(), false);
  if (graph == nullptr) return false;
  graph->holds.workspaces.push_back(WorkspaceHold{device, std::move(workspace)});
  return true;
}

bool graph_keeps(TensorStorage* storage) noexcept {
  LockGuard lock(g_touched_mutex);
  GraphState* graph = toucher(storage->device, storage->base, storage->bytes, storage->texture_backend != nullptr);
  if (graph == nullptr) return false;
  storage->refs.store(1, std::memory_order_relaxed); // the graph's reference
  graph->holds.storages.push_back(storage);
  return true;
}

GraphMemoryFigures graph_memory_figures(Device device) noexcept {
  GraphMemoryFigures figures;
  LockGuard lock(g_touched_mutex);
  DeviceGraphs* slot = device_graphs(find_device_record(device));
  if (slot == nullptr) return figures;
  std::vector<const GraphState*> seen;
  for (const TouchedRange& r : slot->touched) {
    if (std::find(seen.begin(), seen.end(), r.graph) != seen.end()) continue;
    seen.push_back(r.graph);
    const GraphHolds& holds = r.graph->holds;
    auto count = [&](Device on, std::size_t bytes) {
      if (on != device) return;
      figures.held_bytes += bytes;
      ++figures.held_allocations;
    };
    for (const Buffer& b : holds.buffers) count(b.device(), b.size());
    for (const WorkspaceHold& w : holds.workspaces) count(w.device, w.workspace.size());
    for (const TensorStorage* s : holds.storages) count(s->device, s->bytes);
    for (const DirectHold& d : holds.direct) count(d.device, d.bytes);
  }
  return figures;
}

const KeepAliveHooks g_keep_alive_hooks = {static_cast<bool (*)(Buffer&) noexcept>(&graph_keeps),
                                           static_cast<bool (*)(Workspace&, Device) noexcept>(&graph_keeps),
                                           static_cast<bool (*)(TensorStorage*) noexcept>(&graph_keeps),
                                           &graph_memory_figures};

} // namespace devrt::detail

namespace devrt::direct::detail {

bool graph_keeps_direct(Device device, void* data, std::size_t bytes,
                        Status (*free)(Device device, void* data) noexcept) noexcept {
  if (!devrt::detail::graphs_touch_memory()) return false;
  devrt::detail::LockGuard lock(devrt::detail::g_touched_mutex);
  devrt::detail::GraphState* graph = devrt::detail::toucher(device, data, bytes, false);
  if (graph == nullptr) return false;
  graph->holds.direct.push_back(devrt::detail::DirectHold{device, data, bytes, free});
  return true;
}

} // namespace devrt::direct::detail
