// SPDX-License-Identifier: Apache-2.0
// Closing device records (core/devices/device_record.hpp): shutdown's walk over them, each record's
// rooms' slots released (by the function shutdown passes) and its target dropped, the devices
// closed.
#include "core/devices/device_record.hpp"

#include <devrt/log.hpp>

#include <algorithm>
#include <new>

namespace devrt::detail {

namespace {

// Gives back what the rooms hold on a record's device (release_slots) and drops its target; the
// first error.
Status release_holdings(DeviceRecord& record, ReleaseSlots release_slots) noexcept {
  Status first_error = release_slots(record);
  delete_target(record.target.exchange(nullptr));
  return first_error;
}

// Gives back what the core holds on a record's device: waits for the device, releases the rooms'
// slots, drops its target. The record stays published meanwhile, so that the backend calls this
// makes (through BackendRef, by index) find it without opening anything.
Status release_record(DeviceRecord* record, ReleaseSlots release_slots) noexcept {
  Status first_error;
  auto keep = [&first_error](Status status) {
    if (first_error.ok() && !status.ok()) first_error = std::move(status);
  };
  BackendRef backend = record->backend();
  if (backend.can_synchronize_device()) keep(backend.device_synchronize(record->device().id));
  keep(release_holdings(*record, release_slots));
  return first_error;
}

} // namespace

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

Status close_device_records(ReleaseSlots release_slots) noexcept {
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
    keep(release_holdings(*closed, release_slots));
    delete closed;
    closed = next;
  }
#endif
  for (std::size_t i = 0; i < n; ++i) keep(release_record(closing[i], release_slots));
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
  g_generation.store((g_generation.load(std::memory_order_relaxed) + 1) & 0x0fffffffu, std::memory_order_relaxed);
  return first_error;
}

} // namespace devrt::detail
