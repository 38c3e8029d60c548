// SPDX-License-Identifier: Apache-2.0
// devrt::detect_target: a device described by its backend, kept in the device's record. Apart
// from the Target class (target.cpp), which backends and plugins use without device records.
#include <devrt/target.hpp>

#include <devrt/backend/detail/mutex.hpp>
#include <devrt/backend/registry.hpp>

#include <algorithm>
#include <iterator>
#include <new>

#include "core/devices/device_record.hpp"

namespace devrt {

namespace {

// TVM's detect_target_from_device covers these kinds, and devrt adds WebGPU and remote devices
// (the target of the device on its server).
constexpr DeviceKind kDetectionKinds[] = {DeviceKind::cpu,     DeviceKind::cuda,   DeviceKind::rocm,
                                          DeviceKind::opencl,  DeviceKind::vulkan, DeviceKind::metal,
                                          DeviceKind::hexagon, DeviceKind::webgpu, DeviceKind::remote};

// Serialises storing a detected target in its device's record (detection itself runs unlocked).
detail::Mutex g_target_mutex;

[[gnu::cold]] Status cannot_detect(Device device, const Status& reason) noexcept {
  return make_error(ErrorCode::unavailable, "cannot detect device ", device,
                    ": make sure the device and its driver are installed and devrt was built with that backend (",
                    reason.message(), ")");
}

} // namespace

std::span<const DeviceKind> target_detection_kinds() noexcept { return kDetectionKinds; }

namespace detail {
void delete_target(const Target* target) noexcept { delete target; }
} // namespace detail

Result<Target> detect_target(Device device) noexcept {
  if (std::find(std::begin(kDetectionKinds), std::end(kDetectionKinds), device.kind) == std::end(kDetectionKinds)) {
    detail::MessageBuilder kinds;
    for (DeviceKind kind : kDetectionKinds) {
      if (!kinds.view().empty()) kinds.append(", ");
      kinds.append(device_kind_name(kind));
    }
    std::string_view name = device_kind_name(device.kind);
    return make_error(ErrorCode::invalid_argument, "auto detection for device kind ",
                      name.empty() ? std::string_view("(unknown)") : name,
                      " is not supported; supported kinds: ", kinds.view());
  }
  if (detail::DeviceRecord* record = detail::find_device_record(device)) {
    if (const Target* known = record->target.load(std::memory_order_acquire)) return *known;
  }
  Result<detail::DeviceRecord*> record = detail::open_device_record(device);
  if (!record.ok()) return cannot_detect(device, record.status());
  BackendRef backend = (*record)->backend();
  Result<std::string> json = backend.detect_target(device.id);
  if (!json.ok()) {
    if (json.status().code() == ErrorCode::unavailable) return cannot_detect(device, json.status());
    return std::move(json).status();
  }
  Result<Target> target = Target::from_json(*json);
  if (!target.ok()) {
    return make_error(ErrorCode::internal, backend.name(), ":", device.id,
                      " detect_target: ", target.status().message());
  }
  detail::LockGuard lock(g_target_mutex);
  if (const Target* known = (*record)->target.load(std::memory_order_acquire)) return *known; // another thread's
  // Kept in the device's record until devrt::shutdown().
  if (auto* kept = new (std::nothrow) Target(*target)) (*record)->target.store(kept, std::memory_order_release);
  return target;
}

} // namespace devrt
