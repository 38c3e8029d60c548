// SPDX-License-Identifier: Apache-2.0
// A strict RFC 8259 reader's pieces and JSON string escaping, shared by the target parser
// (core/devices/target.cpp) and devrt-info's JSON output. Internal: not installed.
#ifndef DEVRT_SRC_SUPPORT_JSON_HPP
#define DEVRT_SRC_SUPPORT_JSON_HPP

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <devrt/status.hpp>

namespace devrt::detail {

// Appends `text` as a JSON string: quoted, with '"', '\\' and control characters escaped.
void append_json_string(std::string& out, std::string_view text);
// `text` as a JSON string.
std::string json_string(std::string_view text);

// Reads JSON tokens from `text`; a parser drives it value by value. Errors are invalid_argument,
// "<prefix>: <what> at line L, column C (byte B)". Strings must be valid UTF-8; numbers are
// integers only. Not thread-safe (one reader, one thread).
class JsonReader {
public:
  static constexpr int kEnd = -1;

  JsonReader(std::string_view text, const char* prefix) noexcept : text_(text), prefix_(prefix) {}

  // The next byte, or kEnd.
  int peek() const noexcept { return pos_ < text_.size() ? static_cast<unsigned char>(text_[pos_]) : kEnd; }
  bool consume(char c) noexcept {
    if (peek() != static_cast<unsigned char>(c)) return false;
    ++pos_;
    return true;
  }
  void skip_space() noexcept {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  std::size_t position() const noexcept { return pos_; }
  bool at_end() const noexcept { return pos_ == text_.size(); }

  Status error(const char* what) const noexcept { return error_at(pos_, what); }
  [[gnu::cold]] Status error_at(std::size_t at, const char* what) const noexcept;

  // Each reads the token at the current position (a string starts at its quote).
  Status read_literal(std::string_view word) noexcept;
  Status read_integer(std::int64_t* out) noexcept;
  Status read_string(std::string* out) noexcept;

private:
  Status read_hex4(std::uint32_t* out) noexcept;
  Status read_utf8(std::string* out) noexcept;

  std::string_view text_;
  const char* prefix_;
  std::size_t pos_ = 0;
};

} // namespace devrt::detail

#endif // DEVRT_SRC_SUPPORT_JSON_HPP
