// SPDX-License-Identifier: Apache-2.0
// One record per device the core has opened: the device object its backend opened, the count of the
// device's objects, and one slot per room that keeps state per device (memory's DeviceMemory, the
// detected target, graphs' DeviceGraphs). A record is made on the device's first use that needs
// one, after its backend said the device exists (open_device), and lives until devrt::shutdown()
// finds none of the device's objects left, or else until the last of them is destroyed
// (close_device then); the hot path reaches it with two loads, no lock and no search.
#ifndef DEVRT_SRC_CORE_DEVICES_DEVICE_RECORD_HPP
#define DEVRT_SRC_CORE_DEVICES_DEVICE_RECORD_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>

#include <devrt/backend/detail/mutex.hpp>
#include <devrt/backend/registry.hpp>
#include <devrt/config.hpp>
#include <devrt/device.hpp>
#include <devrt/status.hpp>

#include "core/memory/device_memory.hpp"

namespace devrt {
class Target;
} // namespace devrt

namespace devrt::detail {

std::uint32_t current_generation() noexcept;

// A room's slot that the record keeps by pointer, for a room whose headers the devices room may
// not include: the room derives its slot from this, makes it on the device's first need and sets
// `destroy`, which the record calls when it is deleted (at a shutdown, no other thread in devrt).
struct RoomSlot {
  void (*destroy)(RoomSlot* slot) noexcept = nullptr;
};

class DeviceRecord {
public:
  DeviceRecord(Device device, BackendRef backend, std::uint64_t opening) noexcept
      : backend_device{device.id, 0, nullptr, backend.table()->context}, device_(device), backend_(backend),
        opening_(opening), generation_(current_generation()) {}
  DeviceRecord(const DeviceRecord&) = delete;
  DeviceRecord& operator=(const DeviceRecord&) = delete;

  Device device() const noexcept { return device_; }
  BackendRef backend() const noexcept { return backend_; }
  // Records are closed in the reverse of this order.
  std::uint64_t opening() const noexcept { return opening_; }

  // The memory room's slot: pools and ledger (memory/device_memory.hpp; filled and closed there).
  DeviceMemory memory;
  // The devices room's slot: the detected target (devrt::detect_target), null until first detected.
  std::atomic<const Target*> target{nullptr};
  // The device as its backend opened it (open_device), which every per-device call of the backend
  // takes; closed (close_device) when the record is. Hosted builds only: firmware keeps its open
  // devices in a table of its own (record_index.cpp).
  devrt_backend_device backend_device{0, 0, nullptr, nullptr};
  // The next record of the list of those with ids of kIndexedDeviceIds and above.
  std::atomic<DeviceRecord*> next_unindexed{nullptr};
  // The device's objects made through BackendRef and not destroyed yet (allocations, textures,
  // streams, events, modules, backend graphs, Graphs); kClosedRecord once the record is closed, so
  // far below zero that what is added or taken off later leaves it negative.
  std::atomic<std::int64_t> objects{0};
  static constexpr std::int64_t kClosedRecord = INT64_MIN / 2;
  // Set by shutdown() on a record whose device still had objects: the last one closes the device.
  // Cleared by the next object made on it (the application went on using the device).
  std::atomic<bool> closing{false};
  // The next of the records closed by object_destroyed (take_closed_records).
  DeviceRecord* next_closed = nullptr;
#if !DEVRT_BARE_METAL
  // The graphs room's slot (graphs/device_graphs.hpp), kept by pointer: the capture in progress,
  // the device's live graphs and the memory graphs touch on it. Null until graphs first need it;
  // deleted with the record.
  std::atomic<RoomSlot*> graphs{nullptr};
  ~DeviceRecord() {
    if (RoomSlot* slot = graphs.load(std::memory_order_relaxed)) slot->destroy(slot);
  }
#endif

  // Which generation of records this is (a shutdown starts the next): a tag from ledger_allocated
  // is honoured only by a record of the same generation.
  std::uint32_t generation() const noexcept { return generation_; }

private:
  Device device_;
  BackendRef backend_;
  std::uint64_t opening_;
  std::uint32_t generation_;
};

// Devices with ids below this are found by indexing; the rare others by a walk of a list.
inline constexpr std::int32_t kIndexedDeviceIds = DEVRT_BARE_METAL ? 4 : 64;
extern std::atomic<DeviceRecord*> g_indexed_records[kMaxDeviceKinds][kIndexedDeviceIds];
// The records of ids from kIndexedDeviceIds on, a list pushed under the records' mutex.
extern std::atomic<DeviceRecord*> g_unindexed;
DeviceRecord* find_unindexed_record(Device device) noexcept;

// The record of `device` if it is open, else null. Lock-free; thread-safe.
inline DeviceRecord* find_device_record(Device device) noexcept {
  auto kind = static_cast<std::uint32_t>(device.kind);
  if (kind >= static_cast<std::uint32_t>(kMaxDeviceKinds) || device.id < 0) [[unlikely]]
    return nullptr;
  if (device.id < kIndexedDeviceIds) [[likely]]
    return g_indexed_records[kind][device.id].load(std::memory_order_acquire);
  return find_unindexed_record(device);
}

// The device object of backend's device `id` when its record is open (hosted builds), else null:
// the lock-free first step of open_backend_device. Thread-safe.
inline const devrt_backend_device* find_backend_device(BackendRef backend, std::int32_t id) noexcept {
#if !DEVRT_BARE_METAL
  DeviceRecord* record = find_device_record(Device{backend.kind(), id});
  if (record != nullptr && record->backend() == backend) [[likely]]
    return &record->backend_device;
#else
  static_cast<void>(backend);
  static_cast<void>(id);
#endif
  return nullptr;
}

// Calls fn for every open record. Not while shutdown() runs. Thread-safe.
void for_each_device_record(void (*fn)(DeviceRecord&)) noexcept;

// The record of `device`, opening it on first use: the global registry's backend must say the
// device exists (the error names backend and device otherwise). Thread-safe.
Result<DeviceRecord*> open_device_record(Device device) noexcept;

// The device object of backend's device `id` that its per-device functions take: the open
// record's, opening the record on first use when `backend` is the global registry's; for a table of
// another registry, one opened on first use and closed at shutdown. The error names backend and
// device. Thread-safe; lock-free once open.
Result<const devrt_backend_device*> open_backend_device(BackendRef backend, std::int32_t id) noexcept;
#if !DEVRT_BARE_METAL
// The device object for a call that makes an object of the device (an allocation, texture,
// stream, event, module or backend graph): as open_backend_device, with the object counted in the
// device's record until object_destroyed, so that the device stays open for it. Thread-safe.
Result<const devrt_backend_device*> open_for_object(BackendRef backend, std::int32_t id) noexcept;
// count_object_on for a device of no record of the global registry's: a foreign table's device (not
// counted; true), or a record closed since the lookup (false).
bool count_unrecorded_object(BackendRef backend) noexcept;
// object_destroyed's rare cases: the count was `objects` before it fell, 0 or less (an object
// counted by no record), or 1 on a record that shutdown() left open (its last object is gone).
void object_count_fell(DeviceRecord* record, std::int64_t objects) noexcept;

// Counts an object about to be made on `device`, which open_backend_device returned for backend's
// device `id`; false when its record was closed meanwhile (then open_for_object opens it again). One
// read-modify-write: a closed record's count is far below zero, so adding to it leaves it negative.
// Thread-safe.
inline bool count_object_on(BackendRef backend, std::int32_t id, const devrt_backend_device* device) noexcept {
  DeviceRecord* record = find_device_record(Device{backend.kind(), id});
  if (record == nullptr || &record->backend_device != device) [[unlikely]]
    return count_unrecorded_object(backend);
  if (record->objects.fetch_add(1, std::memory_order_relaxed) < 0) [[unlikely]]
    return false;
  if (record->closing.load(std::memory_order_relaxed)) [[unlikely]] // the application went on using it
    record->closing.store(false, std::memory_order_relaxed);
  return true;
}

// An object counted by open_for_object was destroyed, or its making failed: the last object of a
// device that shutdown() left open closes it. Thread-safe.
inline void object_destroyed(BackendRef backend, std::int32_t id) noexcept {
  DeviceRecord* record = find_device_record(Device{backend.kind(), id});
  if (record == nullptr || record->backend() != backend) [[unlikely]]
    return; // a foreign table's device: not counted
  const std::int64_t objects = record->objects.fetch_sub(1, std::memory_order_acq_rel);
  if (objects <= 0 || (objects == 1 && record->closing.load(std::memory_order_acquire))) [[unlikely]]
    object_count_fell(record, objects);
}
// Records closed after shutdown() by their last object's destruction: kept (a lookup may still
// read them) until the next shutdown deletes them. Under g_records_mutex.
DeviceRecord* take_closed_records() noexcept;
// Takes `record` out of the index, so that lookups no longer find it. Under g_records_mutex.
void unpublish_record(DeviceRecord* record) noexcept;
#else // firmware counts nothing: its devices close at shutdown
inline Result<const devrt_backend_device*> open_for_object(BackendRef backend, std::int32_t id) noexcept {
  return open_backend_device(backend, id);
}
inline void object_destroyed(BackendRef, std::int32_t) noexcept {}
#endif
// Closes a device with its backend (close_device); its state is null afterwards.
Status close_backend_device(BackendRef backend, devrt_backend_device& device) noexcept;
// Closes the devices open_backend_device opened for tables outside the global registry.
// Under g_records_mutex.
Status close_foreign_devices() noexcept;

// Serialises opening and closing; never taken on a lookup.
extern Mutex g_records_mutex;
extern std::uint64_t g_openings; // under g_records_mutex
// Which generation of records is open; a shutdown starts the next.
extern std::atomic<std::uint32_t> g_generation;

// Deletes a target the record kept (target_detection.cpp). Null is a no-op.
void delete_target(const Target* target) noexcept;

// What a room above devices gives back of a closing record's slot (shutdown() passes the memory
// room's release_device_memory). Under g_records_mutex.
using ReleaseSlots = Status (*)(DeviceRecord& record) noexcept;
// Closes every open record, the most recently opened first: waits for the device, lets
// `release_slots` give back what the rooms hold on it, drops the detected target. Not to be called
// while another thread uses devrt. Returns the first failure; every record is closed regardless.
Status close_device_records(ReleaseSlots release_slots) noexcept;

} // namespace devrt::detail

#endif // DEVRT_SRC_CORE_DEVICES_DEVICE_RECORD_HPP
