// SPDX-License-Identifier: Apache-2.0
// Memory figures for applications (devrt/memory_stats.hpp): a device's ledger, pools and
// graph holdings summed, peaks reset, the history switched and snapshotted.
#include <devrt/memory_stats.hpp>

#include <devrt/backend/workspace_pool.hpp>

#include "core/devices/device_record.hpp"
#include "core/execution/capture_hooks.hpp"
#include "core/memory/memory_records.hpp"
#include "core/memory/stream_pool.hpp"
#include "support/json.hpp"

namespace devrt {
namespace {

using detail::DeviceRecord;

// What the device's pools hold: their figures summed (global memory).
struct PooledFigures {
  std::size_t in_use_bytes = 0;
  std::size_t in_use_blocks = 0;
  std::size_t cached_bytes = 0;
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
};

PooledFigures pooled_figures(const DeviceRecord& record) noexcept {
  PooledFigures figures;
  for (const auto* slot : {&record.memory.buffer_cache, &record.memory.workspace_pool}) {
    WorkspacePool* pool = slot->load(std::memory_order_acquire);
    if (pool == nullptr || pool == detail::DeviceMemory::no_cache()) continue;
    PoolStats stats = pool->stats();
    figures.in_use_bytes += stats.reserved_bytes - stats.cached_bytes;
    figures.in_use_blocks +=
        static_cast<std::size_t>(stats.backend_allocations - stats.backend_frees) - stats.cached_blocks;
    figures.cached_bytes += stats.cached_bytes;
    figures.hits += stats.hits;
    figures.misses += stats.backend_allocations;
  }
  return figures;
}

ScopeMemoryStats scope_figures(const detail::ScopeLedger& ledger, std::size_t pooled_bytes,
                               std::size_t pooled_blocks) noexcept {
  ScopeMemoryStats stats;
  stats.allocated_bytes = ledger.direct_bytes.load(std::memory_order_relaxed) + pooled_bytes;
  stats.allocations = ledger.direct_count.load(std::memory_order_relaxed) + pooled_blocks;
  stats.allocated_bytes_peak = ledger.allocated_peak.load(std::memory_order_relaxed);
  stats.reserved_bytes = ledger.reserved();
  stats.reserved_bytes_peak = ledger.reserved_peak.load(std::memory_order_relaxed);
  return stats;
}

ScopeMemoryStats& operator+=(ScopeMemoryStats& sum, const ScopeMemoryStats& part) noexcept {
  sum.allocated_bytes += part.allocated_bytes;
  sum.allocations += part.allocations;
  sum.reserved_bytes += part.reserved_bytes;
  return sum;
}

// The device's allocated bytes now: every scope's unpooled memory and the pools' blocks in use.
std::size_t allocated_now(const detail::MemoryLedger& ledger, std::size_t pooled_bytes) noexcept {
  std::size_t bytes = pooled_bytes;
  for (std::int32_t scope = 0; scope < kMemoryScopeCount; ++scope)
    bytes += ledger.scope(static_cast<MemoryScope>(scope)).direct_bytes.load(std::memory_order_relaxed);
  return bytes;
}

} // namespace

Result<MemoryStats> memory_stats(Device device) noexcept {
  DEVRT_ASSIGN_OR_RETURN(DeviceRecord * record, detail::open_device_record(device));
  if (DEVRT_BARE_METAL) {
    return make_error(ErrorCode::unsupported, "memory_stats(", device,
                      "): bare-metal builds keep no memory figures (their code size budgets)");
  }
  PooledFigures pooled = pooled_figures(*record);
  detail::MemoryLedger& ledger = record->memory.ledger;
  // The exact figure read now may be above a sampled peak that missed it.
  ledger.observe_allocated(MemoryScope::global,
                           ledger.scope(MemoryScope::global).direct_bytes.load(std::memory_order_relaxed) +
                               pooled.in_use_bytes,
                           allocated_now(ledger, pooled.in_use_bytes));
  MemoryStats stats;
  for (std::int32_t scope = 0; scope < kMemoryScopeCount; ++scope) {
    bool is_global = scope == static_cast<std::int32_t>(MemoryScope::global);
    stats.scopes[scope] = scope_figures(ledger.scope(static_cast<MemoryScope>(scope)),
                                        is_global ? pooled.in_use_bytes : 0, is_global ? pooled.in_use_blocks : 0);
    stats.total += stats.scopes[scope];
  }
  stats.total.allocated_bytes_peak = ledger.total().allocated_peak.load(std::memory_order_relaxed);
  stats.total.reserved_bytes_peak = ledger.total().reserved_peak.load(std::memory_order_relaxed);
  stats.cached_bytes = pooled.cached_bytes;
  stats.cache_hits = pooled.hits;
  stats.cache_misses = pooled.misses;
  stats.history = memory_history_enabled();
#if !DEVRT_BARE_METAL
  const detail::StreamPoolFigures streams = detail::stream_pool_figures(device);
  stats.stream_pool_bytes = streams.reserved_bytes;
  stats.stream_pool_cached_bytes = streams.cached_bytes;
  stats.graph_pool_bytes = streams.graph_bytes;
  stats.stream_pool_hits = streams.hits;
  stats.stream_pool_misses = streams.misses;
  const detail::GraphMemoryFigures graphs = detail::g_keep_alive_hooks.figures(device);
  stats.graph_held_bytes = graphs.held_bytes;
  stats.graph_held_allocations = graphs.held_allocations;
#endif
  return stats;
}

Status reset_peak_memory_stats(Device device) noexcept {
  DEVRT_ASSIGN_OR_RETURN(DeviceRecord * record, detail::open_device_record(device));
  PooledFigures pooled = pooled_figures(*record);
  detail::MemoryLedger& ledger = record->memory.ledger;
  ledger.reset_peak(ledger.scope(MemoryScope::global).direct_bytes.load(std::memory_order_relaxed) +
                        pooled.in_use_bytes,
                    allocated_now(ledger, pooled.in_use_bytes));
  return Status();
}

void set_memory_history(bool enabled) noexcept {
  detail::set_history_state(enabled);
#if !DEVRT_BARE_METAL
  detail::buffer_history_changed(enabled);
#endif
  if (enabled) return;
  detail::for_each_device_record([](DeviceRecord& record) { record.memory.ledger.clear_history(); });
}

bool memory_history_enabled() noexcept { return detail::history_enabled(); }

Result<std::string> memory_snapshot(Device device) noexcept {
  DEVRT_ASSIGN_OR_RETURN(DeviceRecord * record, detail::open_device_record(device));
  std::string json = "{\"device\":";
  detail::append_json_string(json, to_string(device));
  json += ",\"history\":";
  json += memory_history_enabled() ? "true" : "false";
  json += ",\"allocations\":[";
  record->memory.ledger.append_history_json(json);
  json += "]}";
  return json;
}

Status shutdown() noexcept {
  Status first_error = detail::close_device_records(&detail::release_device_memory);
  detail::sweep_kept_pools();
  return first_error;
}

} // namespace devrt
