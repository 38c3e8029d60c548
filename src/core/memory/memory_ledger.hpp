// SPDX-License-Identifier: Apache-2.0
// A device's memory ledger: what was allocated outside the pools (uncached Buffers, scoped memory,
// textures), by memory scope, and, while the history is on, every live allocation with its size,
// scope and time. Part of the device record (core/devices/device_record.hpp); read by
// memory_stats().
#ifndef DEVRT_SRC_CORE_MEMORY_MEMORY_LEDGER_HPP
#define DEVRT_SRC_CORE_MEMORY_MEMORY_LEDGER_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include <devrt/backend/detail/mutex.hpp>
#include <devrt/config.hpp>
#include <devrt/device.hpp>

namespace devrt::detail {

// The figures of one scope. The counters change where memory is taken from or given back to the
// backend (paths that call the backend anyway) and where a pool's shared list changes (under the
// pool's lock): two atomic adds per allocation and two per free outside the pools. The peaks are
// raised with a load and a compare (a compare-exchange only when a peak grows). size_t: lock-free
// on 32-bit firmware too.
struct ScopeLedger {
  std::atomic<std::size_t> direct_bytes{0}; // live allocations outside the pools
  std::atomic<std::size_t> direct_count{0};
  std::atomic<std::size_t> pooled_reserved{0}; // the pools' blocks, in use and free
  std::atomic<std::size_t> pooled_shared{0};   // free blocks on the pools' shared lists
  std::atomic<std::size_t> reserved_peak{0};
  std::atomic<std::size_t> allocated_peak{0}; // sampled: reserved - pooled_shared

  std::size_t reserved() const noexcept {
    return direct_bytes.load(std::memory_order_relaxed) + pooled_reserved.load(std::memory_order_relaxed);
  }
  // What is out of the shared lists: allocated plus the blocks threads keep for themselves.
  std::size_t allocated_sample() const noexcept {
    std::size_t held = reserved();
    std::size_t shared = pooled_shared.load(std::memory_order_relaxed);
    return held > shared ? held - shared : 0;
  }
};

struct HistoryTable; // live allocations while the history is on (hosted builds)

class MemoryLedger {
public:
  MemoryLedger() noexcept = default;
  MemoryLedger(const MemoryLedger&) = delete;
  MemoryLedger& operator=(const MemoryLedger&) = delete;
  ~MemoryLedger();

  // An allocation outside the pools was made or given back. Thread-safe.
  void allocated(MemoryScope scope, std::size_t bytes) noexcept;
  void freed(MemoryScope scope, std::size_t bytes) noexcept;
  // A pool of this device (global memory) took from or gave back to the backend, or its shared
  // list changed. Thread-safe.
  void pool_reserved(std::size_t bytes) noexcept;
  void pool_unreserved(std::size_t bytes) noexcept;
  void pool_shared_grew(std::size_t bytes) noexcept;
  void pool_shared_shrank(std::size_t bytes) noexcept;

  // The history: a live allocation of any kind (pooled ones included) made or freed. Thread-safe.
  void remember(MemoryScope scope, void* address, std::size_t bytes) noexcept;
  void forget(void* address) noexcept;
  // Appends the live allocations as JSON objects, separated by commas. Thread-safe.
  void append_history_json(std::string& out) const;
  void clear_history() noexcept;

  const ScopeLedger& scope(MemoryScope scope) const noexcept { return scopes_[static_cast<std::int32_t>(scope)]; }
  // The peaks of all scopes together (its counters stay zero: the scopes' sums are the totals).
  const ScopeLedger& total() const noexcept { return total_; }
  // Raises the allocated peaks to figures read now (the pools' exact in-use bytes).
  void observe_allocated(MemoryScope scope, std::size_t scope_bytes, std::size_t total_bytes) noexcept;
  // Sets every peak to its current figure. Thread-safe.
  void reset_peak(std::size_t global_allocated, std::size_t total_allocated) noexcept;

private:
  ScopeLedger& global() noexcept { return scopes_[0]; }
  // Raises the peaks of `scope` and of the total to the figures now.
  void raise_peaks(ScopeLedger& scope) noexcept;

  ScopeLedger scopes_[kMemoryScopeCount];
  ScopeLedger total_;
  // Bit s: scope s has held memory (the total's peaks sum only those). Global's is always set.
  std::atomic<std::uint32_t> used_scopes_{1};
#if !DEVRT_BARE_METAL
  mutable Mutex history_mutex_;
  HistoryTable* history_ = nullptr; // under history_mutex_
#endif
};

// Whether allocations are remembered (set_memory_history). Read on the Buffer fast path.
extern std::atomic<bool> g_memory_history;
// The same, reading DEVRT_MEMORY_HISTORY on first use; set_memory_history() overrides it. Thread-safe.
bool history_enabled() noexcept;
// Sets the history's state alone; set_memory_history (memory_stats.cpp) also tells the Buffer
// path (memory.cpp), which this unit does not link: device records, and so every backend plugin,
// link this unit without the pools.
void set_history_state(bool enabled) noexcept;
// Tells Buffer::allocate (memory.cpp) that the history was turned on or off.
void buffer_history_changed(bool on) noexcept;

// Raises `peak` to `value` when it is higher. Thread-safe.
inline void raise_peak(std::atomic<std::size_t>& peak, std::size_t value) noexcept {
  std::size_t seen = peak.load(std::memory_order_relaxed);
  while (value > seen && !peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

} // namespace devrt::detail

#endif // DEVRT_SRC_CORE_MEMORY_MEMORY_LEDGER_HPP
