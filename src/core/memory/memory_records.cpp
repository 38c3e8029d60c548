// SPDX-License-Identifier: Apache-2.0
// The memory room's side of the device records (core/memory/memory_records.hpp): a closing
// record's pools given back, the pools kept while Buffers still use them, and the ledger's and
// history's entry points per device.
#include "core/memory/memory_records.hpp"

#include <devrt/backend/detail/mutex.hpp>

#include <new>

namespace devrt::detail {

namespace {

// Pools closed while Buffers still held their memory: kept (reachable) until a shutdown finds
// them unused.
struct KeptPool {
  WorkspacePool* pool = nullptr;
  KeptPool* next = nullptr;
};
Mutex g_kept_mutex;
KeptPool* g_kept = nullptr; // under g_kept_mutex

// Gives a closed record's pool back: its free blocks now, the pool itself once nothing of it is
// in use (Buffers alive at shutdown free into it later, straight to the backend).
Status close_pool(WorkspacePool* pool) noexcept {
  if (pool == nullptr || pool == DeviceMemory::no_cache()) return Status();
  bool still_used = false;
  Status status = close_device_pool(pool, &still_used);
  if (!still_used) return status;
  auto* kept = new (std::nothrow) KeptPool;
  if (kept != nullptr) {
    LockGuard lock(g_kept_mutex);
    kept->pool = pool;
    kept->next = g_kept;
    g_kept = kept;
  }
  return status;
}

} // namespace

WorkspacePool* DeviceMemory::no_cache() noexcept {
  static char tag;
  return reinterpret_cast<WorkspacePool*>(&tag);
}

Status release_device_memory(DeviceRecord& record) noexcept {
#if !DEVRT_BARE_METAL
  close_stream_pool(record);
#endif
  Status first_error = close_pool(record.memory.buffer_cache.exchange(nullptr));
  Status workspace = close_pool(record.memory.workspace_pool.exchange(nullptr));
  if (first_error.ok()) first_error = std::move(workspace);
  return first_error;
}

void sweep_kept_pools() noexcept {
  LockGuard lock(g_kept_mutex);
  KeptPool** link = &g_kept;
  while (KeptPool* kept = *link) {
    if (!delete_unused_pool(kept->pool)) {
      link = &kept->next;
      continue;
    }
    *link = kept->next;
    delete kept;
  }
}

#if !DEVRT_BARE_METAL
// A tag: the record's generation (28 bits) and the scope plus one (4 bits).
std::uint32_t ledger_allocated(Device device, MemoryScope scope, void* address, std::size_t bytes) noexcept {
  Result<DeviceRecord*> record = open_device_record(device);
  if (!record.ok()) return 0;
  MemoryLedger& ledger = (*record)->memory.ledger;
  ledger.allocated(scope, bytes);
  if (g_memory_history.load(std::memory_order_relaxed)) ledger.remember(scope, address, bytes);
  return ((*record)->generation() << 4) | static_cast<std::uint32_t>(static_cast<std::int32_t>(scope) + 1);
}

void ledger_freed(Device device, std::uint32_t tag, void* address, std::size_t bytes) noexcept {
  DeviceRecord* record = find_device_record(device);
  if (tag == 0 || record == nullptr || (record->generation() & 0x0fffffffu) != tag >> 4) return;
  record->memory.ledger.freed(static_cast<MemoryScope>(static_cast<std::int32_t>(tag & 15u) - 1), bytes);
  if (g_memory_history.load(std::memory_order_relaxed)) record->memory.ledger.forget(address);
}
#endif

void history_remember(Device device, MemoryScope scope, void* address, std::size_t bytes) noexcept {
  if (DeviceRecord* record = find_device_record(device)) record->memory.ledger.remember(scope, address, bytes);
}

void history_forget(Device device, void* address) noexcept {
  if (DeviceRecord* record = find_device_record(device)) record->memory.ledger.forget(address);
}

} // namespace devrt::detail
