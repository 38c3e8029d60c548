// SPDX-License-Identifier: Apache-2.0
// The graphs room's slot in a device's record (devices/device_record.hpp keeps it by pointer): the
// capture in progress on the device, the device's live graphs, and the ranges of the device's
// memory that live graphs touch. Made on the device's first need (claim_device_graphs), deleted
// with the record. Each part is guarded by its own lock: captures by graph.cpp's captures mutex,
// graphs by its graphs mutex, ranges by graph_memory.cpp's touched-memory mutex.
#ifndef DEVRT_SRC_CORE_GRAPHS_DEVICE_GRAPHS_HPP
#define DEVRT_SRC_CORE_GRAPHS_DEVICE_GRAPHS_HPP

#include <cstdint>
#include <vector>

#include <devrt/device.hpp>

#include "core/devices/device_record.hpp"

namespace devrt::detail {

struct GraphState;

// A capture in progress: the stream captured and the graph it records into. A graph counts as an
// object of its device, so the record outlives it.
struct Capture {
  void* stream = nullptr;
  GraphState* graph = nullptr;
};

// [begin, end) of the device's memory that `graph` touches. By address for backends whose
// allocations are addresses (a view may point inside an allocation), else by handle (begin is the
// allocation's handle, end begin + 1).
struct TouchedRange {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
  GraphState* graph = nullptr;
};

struct DeviceGraphs : RoomSlot {
  // The capture on the device; capture.graph null when none. Under the captures mutex.
  Capture capture;
  // The device's live graphs (made by end_capture, gone with their Graph). Under the graphs mutex.
  std::vector<GraphState*> graphs;
  // What live graphs touch of the device's memory, ordered by start (a free finds its own in a
  // binary search), and the longest range ever registered (how far before a freed address an
  // overlapping one may start). Under the touched-memory mutex.
  std::vector<TouchedRange> touched;
  std::uintptr_t longest_range = 1;
};

// The record's graphs slot, or null when graphs never needed it. Lock-free.
inline DeviceGraphs* device_graphs(const DeviceRecord* record) noexcept {
  return record != nullptr ? static_cast<DeviceGraphs*>(record->graphs.load(std::memory_order_acquire)) : nullptr;
}
// The record's graphs slot, made on first use; null only when there is no host memory for it.
// Thread-safe.
DeviceGraphs* claim_device_graphs(DeviceRecord& record) noexcept;

} // namespace devrt::detail

#endif // DEVRT_SRC_CORE_GRAPHS_DEVICE_GRAPHS_HPP
