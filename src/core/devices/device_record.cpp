// SPDX-License-Identifier: Apache-2.0
// Closing device records (core/device_record.hpp): shutdown's walk over them, the Buffer
// caches and pools they release, the memory ledger's and history's entry points per device.
#include "core/device_record.hpp"

#include <devrt/log.hpp>

#include <algorithm>
#include <new>

namespace devrt::detail {

namespace {

// Pools closed while Buffers still held their memory: kept (reachable) until a shutdown finds
// them unused.
struct KeptPool {
  WorkspacePool* pool = nullptr;
  KeptPool* next = nullptr;
};
KeptPool* g_kept = nullptr; // under g_records_mutex

// Gives a closed record's pool back: its free blocks now, the pool itself once nothing of it is
// in use (Buffers alive at shutdown free into it later, straight to the backend).
Status close_pool(WorkspacePool* pool) noexcept {
  if (pool == nullptr || pool == DeviceRecord::no_cache()) return Status();
  bool still_used = false;
  Status status = close_device_pool(pool, &still_used);
  if (!still_used) return status;
  auto* kept = new (std::nothrow) KeptPool;
  if (kept != nullptr) {
    kept->pool = pool;
    kept->next = g_kept;
    g_kept = kept;
  }
  return status;
}

// Closes the pools the core made on a record's device and drops its target; the first error.
Status release_holdings(DeviceRecord& record) noexcept {
#if !DEVRT_BARE_METAL
  close_stream_pool(record);
#endif
  Status first_error = close_pool(record.buffer_cache.exchange(nullptr));
  Status workspace = close_pool(record.workspace_pool.exchange(nullptr));
  if (first_error.ok()) first_error = std::move(workspace);
  delete_target(record.target.exchange(nullptr));
  return first_error;
}

// Gives back what the core holds on a record's device: waits for the device, closes its pools,
// drops its target. The record stays published meanwhile, so that the backend calls this makes
// (through BackendRef, by index) find it without opening anything.
Status release_record(DeviceRecord* record) noexcept {
  Status first_error;
  auto keep = [&first_error](Status status) {
    if (first_error.ok() && !status.ok()) first_error = std::move(status);
  };
  BackendRef backend = record->backend();
  if (backend.can_synchronize_device()) keep(backend.device_synchronize(record->device().id));
  keep(release_holdings(*record));
  return first_error;
}

// Deletes the kept pools that are no longer used. Under g_records_mutex.
void sweep_kept() noexcept {
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

} // namespace

#if !DEVRT_BARE_METAL
// A tag: the record's generation (28 bits) and the scope plus one (4 bits).
std::uint32_t ledger_allocated(Device device, MemoryScope scope, void* address, std::size_t bytes) noexcept {
  Result<DeviceRecord*> record = open_device_record(device);
  if (!record.ok()) return 0;
  (*record)->memory.allocated(scope, bytes);
  if (g_memory_history.load(std::memory_order_relaxed)) (*record)->memory.remember(scope, address, bytes);
  return ((*record)->generation() << 4) | static_cast<std::uint32_t>(static_cast<std::int32_t>(scope) + 1);
}

void ledger_freed(Device device, std::uint32_t tag, void* address, std::size_t bytes) noexcept {
  DeviceRecord* record = find_device_record(device);
  if (tag == 0 || record == nullptr || (record->generation() & 0x0fffffffu) != tag >> 4) return;
  record->memory.freed(static_cast<MemoryScope>(static_cast<std::int32_t>(tag & 15u) - 1), bytes);
  if (g_memory_history.load(std::memory_order_relaxed)) record->memory.forget(address);
}
#endif

void history_remember(Device device, MemoryScope scope, void* address, std::size_t bytes) noexcept {
  if (DeviceRecord* record = find_device_record(device)) record->memory.remember(scope, address, bytes);
}

void history_forget(Device device, void* address) noexcept {
  if (DeviceRecord* record = find_device_record(device)) record->memory.forget(address);
}

WorkspacePool* DeviceRecord::no_cache() noexcept {
  static char tag;
  return reinterpret_cast<WorkspacePool*>(&tag);
}

void for_each_device_record(void (*fn)(DeviceRecord&)) noexcept {
  for (auto& kind : g_indexed_records) {
    for (auto& slot : kind) {
      if (DeviceRecord* record = slot.load(std::memory_order_acquire)) fn(*record);
    }
  }
  for (DeviceRecord* record = g_unindexed.load(std::memory_order_acquire); record != nullptr;
       record = record->next_unindexed.load(std::memory_order_acquire)) {
    fn(*record);
  }
}

Status close_device_records() noexcept {
  LockGuard lock(g_records_mutex);
  std::size_t open = 0;
  for (auto& kind : g_indexed_records) {
    for (auto& slot : kind) open += slot.load(std::memory_order_relaxed) != nullptr ? 1 : 0;
  }
  for (DeviceRecord* r = g_unindexed.load(std::memory_order_relaxed); r != nullptr;
       r = r->next_unindexed.load(std::memory_order_relaxed)) {
    ++open;
  }
  auto* closing = new (std::nothrow) DeviceRecord*[open + 1];
  if (closing == nullptr) return make_error(ErrorCode::out_of_memory, "shutdown: no host memory");
  std::size_t n = 0;
  for (auto& kind : g_indexed_records) {
    for (auto& slot : kind) {
      if (DeviceRecord* record = slot.load(std::memory_order_relaxed)) closing[n++] = record;
    }
  }
  for (DeviceRecord* r = g_unindexed.load(std::memory_order_relaxed); r != nullptr;
       r = r->next_unindexed.load(std::memory_order_relaxed)) {
    closing[n++] = r;
  }
  std::sort(closing, closing + n, [](DeviceRecord* a, DeviceRecord* b) { return a->opening() > b->opening(); });
  Status first_error;
  auto keep = [&first_error](Status status) {
    if (status.ok()) return;
    DEVRT_LOG(error, "shutdown: ", status.message());
    if (first_error.ok()) first_error = std::move(status);
  };
  // What the core holds on each device first, the most recently opened first; then the devices
  // themselves, in the same order, once no record can be found any more. A device whose objects the
  // application still holds stays open (and usable) until the last of them is destroyed.
  for (std::size_t i = 0; i < n; ++i) closing[i]->closing.store(false, std::memory_order_relaxed);
#if !DEVRT_BARE_METAL
  // Records closed by their last object since the previous shutdown: what the core made on them
  // after that (pools, whose blocks are counted on the records open now; a target) goes first.
  for (DeviceRecord* closed = take_closed_records(); closed != nullptr;) {
    DeviceRecord* next = closed->next_closed;
    keep(release_holdings(*closed));
    delete closed;
    closed = next;
  }
#endif
  for (std::size_t i = 0; i < n; ++i) keep(release_record(closing[i]));
#if DEVRT_BARE_METAL
  for (auto& kind : g_indexed_records) {
    for (auto& slot : kind) slot.store(nullptr, std::memory_order_relaxed);
  }
  g_unindexed.store(nullptr, std::memory_order_relaxed);
  for (std::size_t i = 0; i < n; ++i) delete closing[i];
#else
  for (std::size_t i = 0; i < n; ++i) {
    DeviceRecord* record = closing[i];
    record->closing.store(true, std::memory_order_release);
    std::int64_t none = 0;
    if (!record->objects.compare_exchange_strong(none, DeviceRecord::kClosedRecord, std::memory_order_acq_rel)) {
      DEVRT_LOG(debug, "shutdown: ", record->device(), " stays open until its last ", none, " objects are destroyed");
      continue;
    }
    unpublish_record(record);
    keep(close_backend_device(record->backend(), record->backend_device));
    delete record;
  }
#endif
  delete[] closing;
  keep(close_foreign_devices());
  sweep_kept();
  g_generation.store((g_generation.load(std::memory_order_relaxed) + 1) & 0x0fffffffu, std::memory_order_relaxed);
  return first_error;
}

} // namespace devrt::detail
