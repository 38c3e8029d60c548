// SPDX-License-Identifier: Apache-2.0
// The index of open device records (core/device_record.hpp): what a lookup reads, in a unit of its
// own, so that code which only looks records up (BackendRef::check_device, in every backend
// plugin) links none of the pools and their thread-local caches.
#include "core/device_record.hpp"

namespace devrt::detail {

std::atomic<DeviceRecord*> g_indexed_records[kMaxDeviceKinds][kIndexedDeviceIds];
std::atomic<DeviceRecord*> g_unindexed{nullptr};

DeviceRecord* find_unindexed_record(Device device) noexcept {
  for (DeviceRecord* record = g_unindexed.load(std::memory_order_acquire); record != nullptr;
       record = record->next_unindexed.load(std::memory_order_acquire)) {
    if (record->device() == device) return record;
  }
  return nullptr;
}

} // namespace devrt::detail
