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

bool read_boolean_env(EnvName<EnvKind::boolean> name, bool fallback) noexcept {
  return read_boolean_env_named(name.name(), fallback);
}

bool read_boolean_env_named(const char* name, bool fallback) noexcept {
  const char* text = lookup_env(name);
  if (text == nullptr) return fallback;
  bool value = fallback;
  if (!parse_boolean(text, value)) {
    DEVRT_LOG(warning, name, "=", text, " is not a boolean (1, true, on, yes or 0, false, off, no); using ",
              fallback ? "1" : "0");
  }
  return value;
}

std::uint64_t read_number_env(EnvName<EnvKind::number> name, std::uint64_t fallback) noexcept {
  return read_number_env_entry(name.entry(), fallback);
}

std::uint64_t read_number_env_entry(const EnvVariable& variable, std::uint64_t fallback) noexcept {
  const char* text = lookup_env(variable.name);
  if (text == nullptr) return fallback;
  std::uint64_t value = 0;
  if (!parse_unsigned(text, value) || value < variable.min || value > variable.max) {
    DEVRT_LOG(warning, variable.name, "=", text, " is not a whole number from ", variable.min, " to ", variable.max,
              "; using ", fallback);
    return fallback;
  }
  return value;
}

const char* read_path_env(EnvName<EnvKind::path> name) noexcept {
  const char* text = lookup_env(name.name());
  if (text == nullptr || text[0] == '/') return text;
  DEVRT_LOG(warning, name.name(), "=", text, " is not an absolute path; ignored");
  return nullptr;
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
