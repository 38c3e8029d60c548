// SPDX-License-Identifier: Apache-2.0
// An attribute chosen at run time, as one value of any attribute's type (what tools, the C API and
// backends pass around). Code that knows the attribute when compiled uses the typed
// get_attribute<A>() of <devrt/attribute.hpp>, which needs no std::variant.
#ifndef DEVRT_BACKEND_ATTRIBUTE_VALUE_HPP
#define DEVRT_BACKEND_ATTRIBUTE_VALUE_HPP

#include <cstdint>
#include <string>
#include <variant>

#include <devrt/attribute.hpp>
#include <devrt/device.hpp>
#include <devrt/status.hpp>

namespace devrt {

// An attribute's value; std::monostate means "this backend does not report it", which is not an
// error. Value type; thread-safe to read.
using AttributeValue = std::variant<std::monostate, bool, std::int64_t, std::string, Dim3>;

// One attribute by run-time id; monostate when the backend does not report it. Thread-safe.
Result<AttributeValue> get_attribute(Device device, Attribute attribute) noexcept;

} // namespace devrt

#endif // DEVRT_BACKEND_ATTRIBUTE_VALUE_HPP
