// SPDX-License-Identifier: Apache-2.0
// devrt::backends() and devrt::devices(): the registry walk behind <devrt/discovery.hpp>.
#include <devrt/discovery.hpp>

#include <devrt/backend/registry.hpp>

namespace devrt {

std::vector<BackendInfo> backends() noexcept {
  const Registry& registry = Registry::global();
  std::vector<BackendInfo> out;
  out.reserve(registry.size());
  for (std::size_t i = 0; i < registry.size(); ++i) {
    const BackendRef backend = registry.at(i);
    BackendInfo info;
    info.name = backend.name();
    info.kind = backend.kind();
    if (Status available = backend.availability(); !available.ok()) {
      info.reason = std::string(available.message());
    } else if (Result<std::int32_t> count = backend.device_count(); !count.ok()) {
      info.reason = std::string(count.status().message());
    } else {
      info.available = true;
      info.device_count = *count;
    }
    out.push_back(std::move(info));
  }
  return out;
}

std::vector<Device> devices() noexcept {
  std::vector<Device> out;
  for (const BackendInfo& backend : backends()) {
    for (std::int32_t id = 0; id < backend.device_count; ++id) out.push_back(Device{backend.kind, id});
  }
  return out;
}

} // namespace devrt
