// SPDX-License-Identifier: Apache-2.0
// {fmt} formatters for devrt types. Optional: include it where you format with fmt; the rest of
// devrt does not depend on fmt.
#ifndef DEVRT_FORMAT_HPP
#define DEVRT_FORMAT_HPP

#include <fmt/format.h>

#include <devrt/device.hpp>
#include <devrt/status.hpp>

template <>
struct fmt::formatter<devrt::Device> : fmt::formatter<std::string_view> {
  template <class Context>
  auto format(devrt::Device device, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(devrt::to_string(device), ctx);
  }
};

template <>
struct fmt::formatter<devrt::Status> : fmt::formatter<std::string_view> {
  template <class Context>
  auto format(const devrt::Status& status, Context& ctx) const {
    if (status.ok()) return fmt::formatter<std::string_view>::format("ok", ctx);
    return fmt::format_to(ctx.out(), "{}: {}", devrt::error_code_name(status.code()), status.message());
  }
};

#endif // DEVRT_FORMAT_HPP
