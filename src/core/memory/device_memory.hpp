// SPDX-License-Identifier: Apache-2.0
// The memory room's slot in a device's record: the Buffer cache, the process-wide workspace pool,
// the stream-ordered pools and the ledger of one device. The record (devices/device_record.hpp)
// keeps it by value, so that the hot path reaches a pool with the record's two loads; this header
// is the one of the memory room the devices room includes, and it declares data only. The memory
// room fills the slot (memory.cpp, workspace_pool.cpp, stream_pool.cpp) and closes it
// (memory_records.hpp: release_device_memory).
#ifndef DEVRT_SRC_CORE_MEMORY_DEVICE_MEMORY_HPP
#define DEVRT_SRC_CORE_MEMORY_DEVICE_MEMORY_HPP

#include <atomic>

#include <devrt/backend/detail/mutex.hpp>

#include "core/memory/memory_ledger.hpp"

namespace devrt {
class WorkspacePool;
} // namespace devrt

namespace devrt::detail {

class StreamPool;

struct DeviceMemory {
  // The Buffer cache: null until decided, then a pool or no_cache().
  std::atomic<WorkspacePool*> buffer_cache{nullptr};
  // The process-wide workspace pool (devrt::workspace_pool), null until first asked for.
  std::atomic<WorkspacePool*> workspace_pool{nullptr};
  // Allocations outside the pools, and the live-allocation history.
  MemoryLedger ledger;
  // Stream-ordered allocation (stream_pool.cpp): the device's pool, made at the first
  // stream-ordered allocation (the slot holds a reference), and the private pools of the device's
  // live graphs, linked through the pools under pools_mutex.
  std::atomic<StreamPool*> stream_pool{nullptr};
  Mutex pools_mutex;
  StreamPool* graph_pools = nullptr;

  // The Buffer cache's value for "decided: no cache" (memory_records.cpp).
  static WorkspacePool* no_cache() noexcept;
};

} // namespace devrt::detail

#endif // DEVRT_SRC_CORE_MEMORY_DEVICE_MEMORY_HPP
