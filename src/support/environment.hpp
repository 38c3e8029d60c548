// SPDX-License-Identifier: Apache-2.0
// Reading DEVRT_* variables strictly: a number is digits only, without sign, space or overflow
// (never wrapped or truncated), and a list keeps its non-empty items. Pure functions, fuzzed
// (test/fuzz/environment_fuzz.cpp). Not public API.
#ifndef DEVRT_SRC_SUPPORT_ENVIRONMENT_HPP
#define DEVRT_SRC_SUPPORT_ENVIRONMENT_HPP

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace devrt::detail {

// The unsigned decimal `text` stands for, or false (empty, a sign, any non-digit, or more than
// UINT64_MAX). Thread-safe.
bool parse_unsigned(std::string_view text, std::uint64_t& out) noexcept;

// The boolean `text` stands for: exactly 1, true, on or yes; 0, false, off or no (lower case);
// false for anything else, `out` untouched. Thread-safe.
bool parse_boolean(std::string_view text, bool& out) noexcept;

// Variable `name` as a boolean: `fallback` when unset or empty; when set to anything
// parse_boolean refuses, a warning naming the variable and its value, and `fallback` (the one
// rule for every boolean DEVRT_* variable). Thread-safe.
bool read_boolean_env(const char* name, bool fallback) noexcept;

// Calls visit(item) for each non-empty item of `text` between `separator`s ("a::b:" gives a, b;
// none for null), in order, until visit returns true; true then. No heap. Thread-safe.
template <class Visit>
bool visit_list(const char* text, char separator, Visit visit) noexcept {
  if (text == nullptr) return false;
  std::string_view rest = text;
  while (!rest.empty()) {
    std::size_t end = rest.find(separator);
    std::string_view item = rest.substr(0, end);
    if (!item.empty() && visit(item)) return true;
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  return false;
}

// The non-empty items of `text` between `separator`s, as visit_list walks them. Thread-safe.
std::vector<std::string> split_list(const char* text, char separator);

} // namespace devrt::detail

#endif // DEVRT_SRC_SUPPORT_ENVIRONMENT_HPP
