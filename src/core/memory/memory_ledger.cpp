// SPDX-License-Identifier: Apache-2.0
// A device's memory ledger (core/memory/memory_ledger.hpp): bytes and allocations live and at
// their peak, per scope and per pool, and the allocation history when it is on.
#include "core/memory/memory_ledger.hpp"

#include <devrt/config.hpp>

#if !DEVRT_BARE_METAL
#include <chrono>
#include <cstdio>
#include <unordered_map>

#include "support/environment.hpp"
#include "support/json.hpp"
#endif

namespace devrt::detail {

std::atomic<bool> g_memory_history{false};

namespace {
std::atomic<int> g_history_state{-1}; // -1 until the environment has been read
} // namespace

bool history_enabled() noexcept {
  int state = g_history_state.load(std::memory_order_relaxed);
  if (state < 0) {
#if !DEVRT_BARE_METAL
    int from_env = read_boolean_env("DEVRT_MEMORY_HISTORY", false) ? 1 : 0;
#else
    int from_env = 0;
#endif
    if (g_history_state.compare_exchange_strong(state, from_env, std::memory_order_relaxed)) {
      g_memory_history.store(from_env != 0, std::memory_order_relaxed);
      state = from_env;
    }
  }
  return state != 0;
}

void set_history_state(bool enabled) noexcept {
  g_history_state.store(enabled ? 1 : 0, std::memory_order_relaxed);
  g_memory_history.store(enabled, std::memory_order_relaxed);
}

void MemoryLedger::raise_peaks(ScopeLedger& scope) noexcept {
  raise_peak(scope.reserved_peak, scope.reserved());
  raise_peak(scope.allocated_peak, scope.allocated_sample());
  std::size_t reserved = 0;
  std::size_t allocated = 0;
  std::uint32_t used = used_scopes_.load(std::memory_order_relaxed);
  if (used == 1) { // global memory only, as on most devices
    reserved = global().reserved();
    allocated = global().allocated_sample();
  } else {
    for (std::int32_t s = 0; s < kMemoryScopeCount; ++s) {
      if ((used & (1u << s)) == 0) continue;
      reserved += scopes_[s].reserved();
      allocated += scopes_[s].allocated_sample();
    }
  }
  raise_peak(total_.reserved_peak, reserved);
  raise_peak(total_.allocated_peak, allocated);
}

void MemoryLedger::allocated(MemoryScope scope, std::size_t bytes) noexcept {
  ScopeLedger& ledger = scopes_[static_cast<std::int32_t>(scope)];
  const std::uint32_t bit = 1u << static_cast<std::int32_t>(scope);
  if ((used_scopes_.load(std::memory_order_relaxed) & bit) == 0) used_scopes_.fetch_or(bit, std::memory_order_relaxed);
  ledger.direct_count.fetch_add(1, std::memory_order_relaxed);
  ledger.direct_bytes.fetch_add(bytes, std::memory_order_relaxed);
  raise_peaks(ledger);
}

void MemoryLedger::freed(MemoryScope scope, std::size_t bytes) noexcept {
  ScopeLedger& ledger = scopes_[static_cast<std::int32_t>(scope)];
  ledger.direct_count.fetch_sub(1, std::memory_order_relaxed);
  ledger.direct_bytes.fetch_sub(bytes, std::memory_order_relaxed);
}

void MemoryLedger::pool_reserved(std::size_t bytes) noexcept {
  global().pooled_reserved.fetch_add(bytes, std::memory_order_relaxed);
  raise_peaks(global());
}

void MemoryLedger::pool_unreserved(std::size_t bytes) noexcept {
  global().pooled_reserved.fetch_sub(bytes, std::memory_order_relaxed);
}

void MemoryLedger::pool_shared_grew(std::size_t bytes) noexcept {
  global().pooled_shared.fetch_add(bytes, std::memory_order_relaxed);
}

void MemoryLedger::pool_shared_shrank(std::size_t bytes) noexcept {
  global().pooled_shared.fetch_sub(bytes, std::memory_order_relaxed);
  raise_peaks(global());
}

void MemoryLedger::observe_allocated(MemoryScope scope, std::size_t scope_bytes, std::size_t total_bytes) noexcept {
  raise_peak(scopes_[static_cast<std::int32_t>(scope)].allocated_peak, scope_bytes);
  raise_peak(total_.allocated_peak, total_bytes);
}

void MemoryLedger::reset_peak(std::size_t global_allocated, std::size_t total_allocated) noexcept {
  std::size_t reserved = 0;
  for (ScopeLedger& ledger : scopes_) {
    ledger.reserved_peak.store(ledger.reserved(), std::memory_order_relaxed);
    ledger.allocated_peak.store(ledger.direct_bytes.load(std::memory_order_relaxed), std::memory_order_relaxed);
    reserved += ledger.reserved();
  }
  global().allocated_peak.store(global_allocated, std::memory_order_relaxed);
  total_.reserved_peak.store(reserved, std::memory_order_relaxed);
  total_.allocated_peak.store(total_allocated, std::memory_order_relaxed);
}

// ---- The history ------------------------------------------------------------------------------
#if !DEVRT_BARE_METAL

struct HistoryTable {
  struct Entry {
    std::size_t bytes;
    MemoryScope scope;
    std::chrono::steady_clock::time_point made;
  };
  std::unordered_map<void*, Entry> live;
};

MemoryLedger::~MemoryLedger() { delete history_; }

void MemoryLedger::remember(MemoryScope scope, void* address, std::size_t bytes) noexcept {
  auto now = std::chrono::steady_clock::now();
  LockGuard lock(history_mutex_);
  if (history_ == nullptr) history_ = new (std::nothrow) HistoryTable;
  if (history_ == nullptr) return; // no host memory to remember it: the snapshot lacks it
  history_->live[address] = HistoryTable::Entry{bytes, scope, now};
}

void MemoryLedger::forget(void* address) noexcept {
  LockGuard lock(history_mutex_);
  if (history_ != nullptr) history_->live.erase(address);
}

void MemoryLedger::clear_history() noexcept {
  LockGuard lock(history_mutex_);
  delete history_;
  history_ = nullptr;
}

void MemoryLedger::append_history_json(std::string& out) const {
  auto now = std::chrono::steady_clock::now();
  LockGuard lock(history_mutex_);
  if (history_ == nullptr) return;
  bool first = true;
  for (const auto& [address, entry] : history_->live) {
    if (!first) out += ',';
    first = false;
    char text[32];
    std::snprintf(text, sizeof text, "0x%llx",
                  static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(address)));
    out += "{\"address\":\"";
    out += text;
    out += "\",\"bytes\":";
    out += std::to_string(entry.bytes);
    out += ",\"scope\":";
    append_json_string(out, to_string(entry.scope));
    out += ",\"age_ns\":";
    out += std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(now - entry.made).count());
    out += '}';
  }
}

#else
MemoryLedger::~MemoryLedger() = default;
void MemoryLedger::remember(MemoryScope, void*, std::size_t) noexcept {}
void MemoryLedger::forget(void*) noexcept {}
void MemoryLedger::clear_history() noexcept {}
void MemoryLedger::append_history_json(std::string&) const {}
#endif

} // namespace devrt::detail
