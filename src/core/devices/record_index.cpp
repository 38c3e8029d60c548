// SPDX-License-Identifier: Apache-2.0
// The index of open device records (core/devices/device_record.hpp) and their opening: what a
// lookup and BackendRef read, in a unit of its own, so that code which only looks records up or
// calls a backend through BackendRef (in every backend plugin) links none of the pools and their
// thread-local caches (record_closing.cpp closes records, and with them the pools).
#include "core/devices/device_record.hpp"

#include <devrt/backend/direct.hpp>

#include <new>
#include <utility>

#include <devrt/log.hpp>

namespace devrt::detail {

std::atomic<DeviceRecord*> g_indexed_records[kMaxDeviceKinds][kIndexedDeviceIds];
std::atomic<DeviceRecord*> g_unindexed{nullptr};
Mutex g_records_mutex;
std::uint64_t g_openings = 0;
std::atomic<std::uint32_t> g_generation{1};

namespace {

#if !DEVRT_BARE_METAL
// Devices of backend tables outside the global registry (a registry of a caller's own): opened on
// first use, closed at shutdown. Under g_records_mutex.
struct ForeignDevice {
  BackendRef backend;
  devrt_backend_device device;
  ForeignDevice* next;
};
ForeignDevice* g_foreign = nullptr;
#endif

[[gnu::cold]] Status open_failed(BackendRef backend, std::int32_t id, std::int32_t code,
                                 const devrt_error& err) noexcept {
  std::string_view reason(err.message);
  if (reason.size() > DEVRT_ERROR_MESSAGE_CAPACITY - 1)
    reason = std::string_view(reason.data(), DEVRT_ERROR_MESSAGE_CAPACITY - 1); // not substr: it links a throw
  return make_error(static_cast<ErrorCode>(code), backend.name(), ":", id,
                    " open_device: ", reason.empty() ? error_code_name(static_cast<ErrorCode>(code)) : reason);
}

// Opens `device` with its backend (device->index set, device->state null). Under g_records_mutex.
Status open_with_backend(BackendRef backend, devrt_backend_device* device) noexcept {
  devrt_error err;
  err.message[0] = '\0';
  err.message[1] = '\0';
  std::int32_t code = backend.table()->open_device(device, &err);
  if (code == 0) return Status();
  device->state = nullptr;
  return open_failed(backend, device->index, code, err);
}

} // namespace

std::uint32_t current_generation() noexcept { return g_generation.load(std::memory_order_relaxed); }

DeviceRecord* find_unindexed_record(Device device) noexcept {
  for (DeviceRecord* record = g_unindexed.load(std::memory_order_acquire); record != nullptr;
       record = record->next_unindexed.load(std::memory_order_acquire)) {
    if (record->device() == device) return record;
  }
  return nullptr;
}

namespace {
// A record closed after shutdown by its last object stays published for a moment (until its
// closer unpublishes it): it is not used again, the device is opened anew.
bool usable(const DeviceRecord* record) noexcept {
  return record != nullptr && record->objects.load(std::memory_order_relaxed) >= 0;
}
} // namespace

Result<DeviceRecord*> open_device_record(Device device) noexcept {
  if (DeviceRecord* record = find_device_record(device); usable(record)) [[likely]]
    return record;
  static_cast<void>(history_enabled()); // DEVRT_MEMORY_HISTORY, before the first allocation
  Result<BackendRef> backend = backend_for(device);
  if (!backend.ok()) return std::move(backend).status();
  LockGuard lock(g_records_mutex);
  if (DeviceRecord* record = find_device_record(device); usable(record)) return record; // another thread's
  auto* record = new (std::nothrow) DeviceRecord(device, *backend, g_openings + 1);
  if (record == nullptr) return make_error(ErrorCode::out_of_memory, "opening ", device, ": no host memory");
#if !DEVRT_BARE_METAL // firmware opens backend devices in open_backend_device's table instead
  if (Status opened = open_with_backend(*backend, &record->backend_device); !opened.ok()) {
    delete record;
    return opened;
  }
#endif
  ++g_openings;
  if (device.id < kIndexedDeviceIds) {
    g_indexed_records[static_cast<std::int32_t>(device.kind)][device.id].store(record, std::memory_order_release);
  } else {
    record->next_unindexed.store(g_unindexed.load(std::memory_order_relaxed), std::memory_order_relaxed);
    g_unindexed.store(record, std::memory_order_release);
  }
  return record;
}

#if !DEVRT_BARE_METAL
namespace {
DeviceRecord* g_closed_records = nullptr; // under g_records_mutex

// Closes a record that shutdown() left open, now that its last object is gone.
[[gnu::cold, gnu::noinline]] void close_unused_record(DeviceRecord* record) noexcept {
  LockGuard lock(g_records_mutex);
  std::int64_t none = 0;
  if (!record->closing.load(std::memory_order_relaxed) ||
      !record->objects.compare_exchange_strong(none, DeviceRecord::kClosedRecord, std::memory_order_acq_rel)) {
    return; // used again meanwhile, or closed by another thread
  }
  unpublish_record(record);
  Status closed = close_backend_device(record->backend(), record->backend_device);
  if (!closed.ok()) DEVRT_LOG(error, "closing ", record->device(), " after its last object: ", closed.message());
  record->next_closed = g_closed_records;
  g_closed_records = record;
}
} // namespace

bool count_unrecorded_object(BackendRef backend) noexcept { return Registry::global().find(backend.kind()) != backend; }

Result<const devrt_backend_device*> open_for_object(BackendRef backend, std::int32_t id) noexcept {
  for (;;) {
    Result<const devrt_backend_device*> device = open_backend_device(backend, id);
    if (!device.ok()) return device;
    if (count_object_on(backend, id, *device)) return device;
    // Closed between the lookup and the count: the next lookup opens the device again.
  }
}

void object_count_fell(DeviceRecord* record, std::int64_t objects) noexcept {
  if (objects <= 0) { // not counted (made through another path): undone
    record->objects.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  close_unused_record(record);
}

DeviceRecord* take_closed_records() noexcept { return std::exchange(g_closed_records, nullptr); }

void unpublish_record(DeviceRecord* record) noexcept {
  const Device device = record->device();
  if (device.id < kIndexedDeviceIds) {
    std::atomic<DeviceRecord*>& slot = g_indexed_records[static_cast<std::int32_t>(device.kind)][device.id];
    if (slot.load(std::memory_order_relaxed) == record) slot.store(nullptr, std::memory_order_release);
    return;
  }
  // Unlinked, its own link kept: a walk that is on it goes on to the rest of the list.
  std::atomic<DeviceRecord*>* link = &g_unindexed;
  for (DeviceRecord* r = link->load(std::memory_order_relaxed); r != nullptr;
       r = link->load(std::memory_order_relaxed)) {
    if (r == record) {
      link->store(r->next_unindexed.load(std::memory_order_relaxed), std::memory_order_release);
      return;
    }
    link = &r->next_unindexed;
  }
}
#endif

Status close_backend_device(BackendRef backend, devrt_backend_device& device) noexcept {
  devrt_error err;
  err.message[0] = '\0';
  err.message[1] = '\0';
  std::int32_t code = backend.table()->close_device(&device, &err);
  device.state = nullptr;
  if (code == 0) return Status();
  std::string_view reason(err.message);
  if (reason.size() > DEVRT_ERROR_MESSAGE_CAPACITY - 1)
    reason = std::string_view(reason.data(), DEVRT_ERROR_MESSAGE_CAPACITY - 1); // not substr: it links a throw
  return make_error(static_cast<ErrorCode>(code), backend.name(), ":", device.index, " close_device: ", reason);
}

#if DEVRT_BARE_METAL
// Firmware opens devices without records (no pools or figures to keep there): a fixed table, in
// the order of opening, for the global registry's backends and others alike. Under
// g_records_mutex once filled.
namespace {
constexpr std::size_t kBareDevices = 16;
struct BareDevice {
  const devrt_backend_table* table;
  devrt_backend_device device;
};
BareDevice g_bare[kBareDevices];
std::size_t g_bare_count = 0;
} // namespace

Result<const devrt_backend_device*> open_backend_device(BackendRef backend, std::int32_t id) noexcept {
  LockGuard lock(g_records_mutex);
  for (std::size_t i = 0; i < g_bare_count; ++i) {
    if (g_bare[i].table == backend.table() && g_bare[i].device.index == id) return &g_bare[i].device;
  }
  DEVRT_RETURN_IF_ERROR(backend.check_device(id));
  if (g_bare_count == kBareDevices) {
    return make_error(ErrorCode::out_of_memory, "opening ", Device{backend.kind(), id}, ": ", kBareDevices,
                      " devices are open, the most a firmware build keeps");
  }
  BareDevice& slot = g_bare[g_bare_count];
  slot = BareDevice{backend.table(), devrt_backend_device{id, 0, nullptr, backend.table()->context}};
  DEVRT_RETURN_IF_ERROR(open_with_backend(backend, &slot.device));
  ++g_bare_count;
  return &slot.device;
}

Status close_foreign_devices() noexcept {
  Status first_error;
  for (; g_bare_count > 0; --g_bare_count) {
    BareDevice& open = g_bare[g_bare_count - 1];
    Status status = close_backend_device(BackendRef(open.table), open.device);
    if (first_error.ok() && !status.ok()) first_error = std::move(status);
  }
  return first_error;
}
#else
Result<const devrt_backend_device*> open_backend_device(BackendRef backend, std::int32_t id) noexcept {
  const Device device{backend.kind(), id};
  if (DeviceRecord* record = find_device_record(device); usable(record)) {
    if (record->backend() == backend) [[likely]]
      return &record->backend_device;
  }
  if (Registry::global().find(backend.kind()) == backend) {
    Result<DeviceRecord*> record = open_device_record(device);
    if (!record.ok()) return std::move(record).status();
    return &(*record)->backend_device;
  }
  DEVRT_RETURN_IF_ERROR(backend.check_device(id));
  LockGuard lock(g_records_mutex);
  for (ForeignDevice* foreign = g_foreign; foreign != nullptr; foreign = foreign->next) {
    if (foreign->backend == backend && foreign->device.index == id) return &foreign->device;
  }
  auto* foreign = new (std::nothrow)
      ForeignDevice{backend, devrt_backend_device{id, 0, nullptr, backend.table()->context}, g_foreign};
  if (foreign == nullptr) return make_error(ErrorCode::out_of_memory, "opening ", device, ": no host memory");
  if (Status opened = open_with_backend(backend, &foreign->device); !opened.ok()) {
    delete foreign;
    return opened;
  }
  g_foreign = foreign;
  return &foreign->device;
}

Status close_foreign_devices() noexcept {
  Status first_error;
  while (ForeignDevice* foreign = g_foreign) {
    g_foreign = foreign->next;
    Status status = close_backend_device(foreign->backend, foreign->device);
    if (first_error.ok() && !status.ok()) first_error = std::move(status);
    delete foreign;
  }
  return first_error;
}
#endif

} // namespace devrt::detail

namespace devrt::direct::detail {

Result<const BackendDevice*> registered_device(Device device) noexcept {
  Result<BackendRef> backend = Registry::global().get(device.kind);
  if (!backend.ok()) return std::move(backend).status();
  return devrt::detail::open_backend_device(*backend, device.id);
}

} // namespace devrt::direct::detail
