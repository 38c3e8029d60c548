// SPDX-License-Identifier: Apache-2.0
#include "conformance.hpp"

using devrt::Attribute;
using devrt::AttributeType;
using devrt::ErrorCode;

TEST_CASE("every device exists and nothing past the last one does", "[conformance][attribute]") {
  std::vector<devrt::Device> all = conformance::devices();
  for (const devrt::Device& device : all) CHECK(devrt::device_exists(device));
  devrt::Device past{conformance::backend().kind(), static_cast<std::int32_t>(all.size())};
  CHECK_FALSE(devrt::device_exists(past));
  CHECK_FALSE(devrt::device_exists(devrt::Device{conformance::backend().kind(), -1}));
  CHECK(*devrt::get_attribute<Attribute::exist>(past) == false);
}

TEST_CASE("every attribute answers with its declared type or 'not reported'", "[conformance][attribute]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    for (std::int32_t a = 0; a < devrt::kAttributeCount; ++a) {
      auto attribute = static_cast<Attribute>(a);
      INFO(devrt::attribute_name(attribute));
      devrt::Result<devrt::AttributeValue> value = devrt::get_attribute(device, attribute);
      REQUIRE(value.ok());
      if (std::holds_alternative<std::monostate>(*value)) continue;
      switch (devrt::attribute_type(attribute)) {
      case AttributeType::boolean: CHECK(std::holds_alternative<bool>(*value)); break;
      case AttributeType::integer:
        REQUIRE(std::holds_alternative<std::int64_t>(*value));
        CHECK(std::get<std::int64_t>(*value) >= 0);
        break;
      case AttributeType::string:
        REQUIRE(std::holds_alternative<std::string>(*value));
        CHECK_FALSE(std::get<std::string>(*value).empty());
        break;
      case AttributeType::dim3: CHECK(std::holds_alternative<devrt::Dim3>(*value)); break;
      }
    }
    CHECK(std::get<bool>(*devrt::get_attribute(device, Attribute::exist)));
    auto name = devrt::get_attribute<Attribute::device_name>(device);
    REQUIRE(name.ok());
    CHECK(name->has_value());
  }
}

TEST_CASE("memory attributes are consistent", "[conformance][attribute]") {
  for (const devrt::Device device : conformance::devices()) {
    INFO("device " << devrt::to_string(device));
    auto total = devrt::get_attribute<Attribute::total_global_memory>(device);
    auto available = devrt::get_attribute<Attribute::available_global_memory>(device);
    REQUIRE(total.ok());
    REQUIRE(available.ok());
    if (total->has_value() && available->has_value()) CHECK(**available <= **total);
  }
}

TEST_CASE("attribute queries on bad devices or ids fail clearly", "[conformance][attribute]") {
  devrt::BackendRef backend = conformance::backend();
  devrt::Device past{backend.kind(), static_cast<std::int32_t>(conformance::devices().size())};
  devrt::Result<devrt::AttributeValue> r = devrt::get_attribute(past, Attribute::device_name);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::invalid_argument);
  CHECK(conformance::contains(r.status().message(), devrt::to_string(past)));

  devrt::Result<devrt::AttributeValue> unknown = backend.attribute(0, static_cast<Attribute>(devrt::kAttributeCount));
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().code() == ErrorCode::invalid_argument);
  CHECK(backend.attribute(0, static_cast<Attribute>(-1)).status().code() == ErrorCode::invalid_argument);
}
