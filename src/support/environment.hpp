// SPDX-License-Identifier: Apache-2.0
// Reading the environment, one rule per kind of variable (docs/environment.md): every read is
// secure_getenv's (a set-user-ID or set-group-ID program sees no variable and uses its defaults),
// every name is checked against support/environment_variables.hpp when compiling, a number is
// digits only, without sign, space or overflow (never wrapped or truncated), and a bad value is
// named in a warning with what devrt does instead. The parsers are pure functions, fuzzed
// (test/fuzz/environment_fuzz.cpp). Not public API.
#ifndef DEVRT_SRC_SUPPORT_ENVIRONMENT_HPP
#define DEVRT_SRC_SUPPORT_ENVIRONMENT_HPP

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/environment_variables.hpp" // IWYU pragma: export

namespace devrt::detail {

// The unsigned decimal `text` stands for, or false (empty, a sign, any non-digit, or more than
// UINT64_MAX). Thread-safe.
bool parse_unsigned(std::string_view text, std::uint64_t& out) noexcept;

// The boolean `text` stands for: exactly 1, true, on or yes; 0, false, off or no (lower case);
// false for anything else, `out` untouched. Thread-safe.
bool parse_boolean(std::string_view text, bool& out) noexcept;

// A boolean variable: `fallback` when unset or empty; when set to anything parse_boolean refuses,
// a warning naming the variable and its value, and `fallback`. Thread-safe.
bool read_boolean_env(EnvName<EnvKind::boolean> name, bool fallback) noexcept;
// The same for a name known only at run time (devrt_environment_flag: a caller's own variable).
bool read_boolean_env_named(const char* name, bool fallback) noexcept;

// A number variable: `fallback` when unset or empty; when not digits or outside the table's
// [min, max], a warning naming the variable, its value, the range and `fallback`, and `fallback`.
// Thread-safe.
std::uint64_t read_number_env(EnvName<EnvKind::number> name, std::uint64_t fallback) noexcept;
// The same for a table entry found at run time (the test that tries a bad value of each).
std::uint64_t read_number_env_entry(const EnvVariable& variable, std::uint64_t fallback) noexcept;

// A path variable: its value when it is an absolute path; nullptr when unset or empty; when
// relative, a warning (a path relative to whatever folder the process runs in is never used) and
// nullptr. Thread-safe.
const char* read_path_env(EnvName<EnvKind::path> name) noexcept;

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
