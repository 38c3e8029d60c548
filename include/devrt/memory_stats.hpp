// SPDX-License-Identifier: Apache-2.0
// What a device's memory is used for, as PyTorch's torch.cuda.memory_stats users expect: bytes
// and allocations in use, bytes reserved from the backend (in use plus cached), peaks since the
// last reset, the Buffer cache's hits and misses, by memory scope; and, while the history is on,
// a snapshot of every live allocation. devrt::shutdown() closes the devices the core opened.
#ifndef DEVRT_MEMORY_STATS_HPP
#define DEVRT_MEMORY_STATS_HPP

#include <cstdint>
#include <string>

#include <devrt/device.hpp>
#include <devrt/status.hpp>

namespace devrt {

// The figures of one memory scope (or of all of them).
//
// allocated: held by Buffers, Tensors, Workspaces and textures now. reserved: taken from the
// backend, allocated plus cached. Current figures are exact. reserved_bytes_peak is exact;
// allocated_bytes_peak is exact for memory that does not come from a pool, and for pooled memory
// it is read where an allocation passes the pool's shared list or the backend, counting the few
// blocks each thread keeps for itself as allocated, so it may exceed the true peak by what those
// thread caches held, never fall below it.
struct ScopeMemoryStats {
  std::uint64_t allocated_bytes = 0;
  std::uint64_t allocated_bytes_peak = 0;
  std::uint64_t allocations = 0; // live allocations
  std::uint64_t reserved_bytes = 0;
  std::uint64_t reserved_bytes_peak = 0;
};

struct MemoryStats {
  ScopeMemoryStats total;
  ScopeMemoryStats scopes[kMemoryScopeCount]; // by MemoryScope
  std::uint64_t cached_bytes = 0;             // free blocks kept by the Buffer cache and workspace pool
  std::uint64_t cache_hits = 0;               // allocations the caches served
  std::uint64_t cache_misses = 0;             // allocations the caches passed to the backend
  bool history = false;                       // whether live allocations are being remembered
  // Stream-ordered allocation (Buffer::allocate(device, n, stream)), counted apart from the figures
  // above: bytes its pools hold from the backend (graphs' private pools included), free bytes in
  // them, bytes held by graphs' private pools, and the allocations served from a free block or
  // passed to the backend.
  std::uint64_t stream_pool_bytes = 0;
  std::uint64_t stream_pool_cached_bytes = 0;
  std::uint64_t graph_pool_bytes = 0;
  std::uint64_t stream_pool_hits = 0;
  std::uint64_t stream_pool_misses = 0;
  // Memory its owners freed while a live graph touched it (devrt/graph.hpp): kept by the graphs,
  // still counted as allocated above, given back when the last graph touching it is destroyed.
  std::uint64_t graph_held_bytes = 0;
  std::uint64_t graph_held_allocations = 0;
};

// The device's figures. Opens the device's record (invalid_argument for a device that does not
// exist, unavailable for a backend that cannot be used). Thread-safe.
Result<MemoryStats> memory_stats(Device device) noexcept;

// Sets the device's peaks to their current figures. Thread-safe.
Status reset_peak_memory_stats(Device device) noexcept;

// Turns the allocation history on or off for every device (also DEVRT_MEMORY_HISTORY=1 at start):
// while on, each allocation is remembered with its size, scope and time until it is freed, at
// the cost of a lock per allocation. Turning it off forgets what was remembered. Thread-safe.
void set_memory_history(bool enabled) noexcept;
bool memory_history_enabled() noexcept;

// The device's live allocations remembered by the history, as JSON:
// {"device":"cuda:0","history":true,"allocations":[{"address":"0x...","bytes":N,"scope":"global",
// "age_ns":N},...]} (no allocations while the history is off). Thread-safe.
Result<std::string> memory_snapshot(Device device) noexcept;

// Closes every device the core opened, the most recently opened first: waits for each device's
// work, gives its cached Buffer and workspace memory back to the backend, drops its detected
// target, statistics and history, and closes the device with its backend. A device on which the
// application still holds objects (Buffers, Streams, Events, Modules, Graphs) stays open and
// usable until the last of them is destroyed, which closes it. Safe to call twice and from an
// atexit handler; a later call that needs a device opens it again. Not to be called while other
// threads use devrt. Returns the first failure.
Status shutdown() noexcept;

} // namespace devrt

#endif // DEVRT_MEMORY_STATS_HPP
