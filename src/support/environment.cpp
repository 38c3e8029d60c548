// SPDX-License-Identifier: Apache-2.0
#include "support/environment.hpp"

#include <cstdlib>
#include <limits>

#include <devrt/log.hpp>

namespace devrt::detail {

bool parse_unsigned(std::string_view text, std::uint64_t& out) noexcept {
  if (text.empty()) return false;
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return false;
    value = value * 10 + digit;
  }
  out = value;
  return true;
}

bool parse_boolean(std::string_view text, bool& out) noexcept {
  for (std::string_view yes : {"1", "true", "on", "yes"}) {
    if (text == yes) return out = true, true;
  }
  for (std::string_view no : {"0", "false", "off", "no"}) {
    if (text == no) return out = false, true;
  }
  return false;
}

bool read_boolean_env(const char* name, bool fallback) noexcept {
  const char* text = std::getenv(name); // NOLINT(concurrency-mt-unsafe)
  if (text == nullptr || text[0] == '\0') return fallback;
  bool value = fallback;
  if (!parse_boolean(text, value)) {
    DEVRT_LOG(warning, name, "=", text, " is not a boolean (1, true, on, yes or 0, false, off, no); using ",
              fallback ? "1" : "0");
  }
  return value;
}

std::vector<std::string> split_list(const char* text, char separator) {
  std::vector<std::string> items;
  visit_list(text, separator, [&items](std::string_view item) {
    items.emplace_back(item);
    return false;
  });
  return items;
}

} // namespace devrt::detail
