// SPDX-License-Identifier: Apache-2.0
#include <devrt/backend/registry.hpp>
#include <devrt/devrt.hpp>
#include <devrt/discovery.hpp>

#include <catch2/catch.hpp>

#include <cstring>

using devrt::Device;
using devrt::DeviceKind;

TEST_CASE("devices print as kind:index", "[device]") {
  CHECK(devrt::to_string(Device{DeviceKind::cpu, 0}) == "cpu:0");
  CHECK(devrt::to_string(Device{DeviceKind::cuda, 1}) == "cuda:1");
  CHECK(devrt::to_string(Device{DeviceKind::cuda_host, 0}) == "cuda_host:0");
  CHECK(devrt::to_string(Device{static_cast<DeviceKind>(77), 3}) == "kind<77>:3");
}

TEST_CASE("devices convert to and from DLDevice unchanged", "[device][dlpack]") {
  for (int kind : {1, 2, 3, 4, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}) {
    Device device{static_cast<DeviceKind>(kind), 5};
    DLDevice dl = device.to_dlpack();
    std::int32_t raw_type = 0;
    std::memcpy(&raw_type, &dl.device_type, sizeof raw_type);
    CHECK(raw_type == kind);
    CHECK(dl.device_id == 5);
    CHECK(Device::from_dlpack(dl) == device);
    CHECK_FALSE(devrt::device_kind_name(device.kind).empty());
    CHECK(*devrt::parse_device_kind(devrt::device_kind_name(device.kind)) == device.kind);
  }
  CHECK(static_cast<int>(DeviceKind::cuda) == kDLCUDA);
  CHECK(static_cast<int>(DeviceKind::opencl) == kDLOpenCL);
  CHECK(static_cast<int>(DeviceKind::vulkan) == kDLVulkan);
  CHECK(static_cast<int>(DeviceKind::rocm) == kDLROCM);
}

TEST_CASE("device strings parse, and malformed ones are refused", "[device]") {
  CHECK(*devrt::parse_device("cuda:1") == Device{DeviceKind::cuda, 1});
  CHECK(*devrt::parse_device("cpu") == Device{DeviceKind::cpu, 0});
  CHECK(*devrt::parse_device("opencl:12") == Device{DeviceKind::opencl, 12});
  for (const char* bad : {"", "gpu:0", "cuda:", "cuda:-1", "cuda:1x", "cuda:99999999999", ":0", "cuda:0:1"}) {
    INFO(bad);
    devrt::Result<Device> r = devrt::parse_device(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == devrt::ErrorCode::invalid_argument);
  }
  CHECK(devrt::parse_device_kind("nope").status().code() == devrt::ErrorCode::not_found);
}

TEST_CASE("attributes have stable names and one value type each", "[attribute]") {
  CHECK(devrt::attribute_name(devrt::Attribute::exist) == "exist");
  CHECK(devrt::attribute_name(devrt::Attribute::image_pitch_alignment) == "image_pitch_alignment");
  CHECK(devrt::attribute_name(static_cast<devrt::Attribute>(devrt::kAttributeCount)).empty());
  CHECK(devrt::attribute_type(devrt::Attribute::exist) == devrt::AttributeType::boolean);
  CHECK(devrt::attribute_type(devrt::Attribute::device_name) == devrt::AttributeType::string);
  CHECK(devrt::attribute_type(devrt::Attribute::max_thread_dimensions) == devrt::AttributeType::dim3);
  CHECK(devrt::attribute_type(devrt::Attribute::warp_size) == devrt::AttributeType::integer);
  STATIC_REQUIRE(std::is_same_v<devrt::attribute_t<devrt::Attribute::device_name>, std::string>);
  STATIC_REQUIRE(std::is_same_v<devrt::attribute_t<devrt::Attribute::max_thread_dimensions>, devrt::Dim3>);
  STATIC_REQUIRE(std::is_same_v<devrt::attribute_t<devrt::Attribute::total_global_memory>, std::int64_t>);
}

TEST_CASE("typed attribute queries on the CPU", "[attribute]") {
  Device cpu{DeviceKind::cpu, 0};
  CHECK(*devrt::get_attribute<devrt::Attribute::exist>(cpu) == true);
  CHECK(*devrt::get_attribute<devrt::Attribute::exist>(Device{DeviceKind::cpu, 1}) == false);
  CHECK(*devrt::get_attribute<devrt::Attribute::exist>(Device{DeviceKind::cpu, -1}) == false);
  CHECK(*devrt::get_attribute<devrt::Attribute::exist>(Device{static_cast<DeviceKind>(31), 0}) == false);
  CHECK(*devrt::get_attribute<devrt::Attribute::exist>(Device{static_cast<DeviceKind>(-5), 0}) == false);

  auto name = devrt::get_attribute<devrt::Attribute::device_name>(cpu);
  REQUIRE(name.ok());
  REQUIRE(name->has_value());
  CHECK_FALSE((*name)->empty());

  auto warp = devrt::get_attribute<devrt::Attribute::warp_size>(cpu);
  REQUIRE(warp.ok());
  CHECK_FALSE(warp->has_value()); // not reported is not an error

  // The host's free memory does not move with devrt's allocations: left unreported, as TVM does.
  auto available = devrt::get_attribute<devrt::Attribute::available_global_memory>(cpu);
  REQUIRE(available.ok());
  CHECK_FALSE(available->has_value());

  auto missing = devrt::get_attribute<devrt::Attribute::device_name>(Device{DeviceKind::cpu, 4});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == devrt::ErrorCode::invalid_argument);
  CHECK(missing.status().message().find("cpu:4") != std::string_view::npos);
}

TEST_CASE("backends() lists every registered backend with its availability, devices() every device", "[device]") {
  const std::vector<devrt::BackendInfo> backends = devrt::backends();
  const devrt::Registry& registry = devrt::Registry::global();
  REQUIRE(backends.size() == registry.size());
  REQUIRE_FALSE(backends.empty());
  CHECK(backends.front().name == "cpu");
  CHECK(backends.front().available);
  CHECK(backends.front().device_count == 1);
  std::size_t present = 0;
  for (std::size_t i = 0; i < backends.size(); ++i) {
    const devrt::BackendInfo& backend = backends[i];
    INFO(backend.name << ": " << backend.reason);
    CHECK(backend.name == registry.at(i).name());
    CHECK(backend.kind == registry.at(i).kind());
    // Available with a count, or not with the reason and none.
    CHECK(backend.available == backend.reason.empty());
    if (!backend.available) CHECK(backend.device_count == 0);
    present += static_cast<std::size_t>(backend.device_count);
    if (backend.available) CHECK(backend.device_count == devrt::device_count(backend.kind));
  }
  const std::vector<Device> devices = devrt::devices();
  CHECK(devices.size() == present);
  CHECK(devices.front() == devrt::kHostDevice);
  for (const Device device : devices) CHECK(devrt::device_exists(device));
}
