// SPDX-License-Identifier: Apache-2.0
#include "support/json.hpp"

#include <limits>

namespace devrt::detail {

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  for (char c : text) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        constexpr char kHex[] = "0123456789abcdef";
        out += "\\u00";
        out += kHex[static_cast<unsigned char>(c) >> 4];
        out += kHex[static_cast<unsigned char>(c) & 0xf];
      } else {
        out += c;
      }
    }
  }
  out += '"';
}

std::string json_string(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

Status JsonReader::error_at(std::size_t at, const char* what) const noexcept {
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < at && i < text_.size(); ++i) {
    if (text_[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  if (at >= text_.size()) {
    return make_error(ErrorCode::invalid_argument, prefix_, ": ", what, " at end of input (line ", line, ", column ",
                      column, ", byte ", at, ")");
  }
  return make_error(ErrorCode::invalid_argument, prefix_, ": ", what, " at line ", line, ", column ", column, " (byte ",
                    at, ")");
}

Status JsonReader::read_literal(std::string_view word) noexcept {
  if (text_.substr(pos_, word.size()) != word) return error("unknown literal");
  pos_ += word.size();
  return Status();
}

Status JsonReader::read_integer(std::int64_t* out) noexcept {
  std::size_t start = pos_;
  bool negative = consume('-');
  if (peek() < '0' || peek() > '9') return error("expected a digit");
  if (peek() == '0' && pos_ + 1 < text_.size() && text_[pos_ + 1] >= '0' && text_[pos_ + 1] <= '9') {
    return error("leading zeros are not allowed");
  }
  std::uint64_t magnitude = 0;
  while (peek() >= '0' && peek() <= '9') {
    auto digit = static_cast<std::uint64_t>(peek() - '0');
    if (magnitude > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
      return error_at(start, "integer out of range");
    }
    magnitude = magnitude * 10 + digit;
    ++pos_;
  }
  if (peek() == '.' || peek() == 'e' || peek() == 'E') return error("only integers are supported");
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (magnitude > kMax + (negative ? 1 : 0)) return error_at(start, "integer out of range");
  *out = negative ? static_cast<std::int64_t>(~magnitude + 1) : static_cast<std::int64_t>(magnitude);
  return Status();
}

static int hex_value(int c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Status JsonReader::read_hex4(std::uint32_t* out) noexcept {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i) {
    int digit = hex_value(peek());
    if (digit < 0) return error("expected 4 hex digits after \\u");
    value = value * 16 + static_cast<std::uint32_t>(digit);
    ++pos_;
  }
  *out = value;
  return Status();
}

static void append_utf8(std::string* out, std::uint32_t cp) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xc0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xe0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    *out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    *out += static_cast<char>(0xf0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    *out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

// One UTF-8 sequence starting at pos_ (lead byte >= 0x80), copied to out when well-formed.
Status JsonReader::read_utf8(std::string* out) noexcept {
  auto lead = static_cast<std::uint32_t>(peek());
  std::size_t length = 0;
  std::uint32_t cp = 0;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
    cp = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    cp = lead & 0x0f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    cp = lead & 0x07;
  } else {
    return error("invalid UTF-8");
  }
  if (text_.size() - pos_ < length) return error("truncated UTF-8 sequence");
  for (std::size_t i = 1; i < length; ++i) {
    auto byte = static_cast<unsigned char>(text_[pos_ + i]);
    if ((byte & 0xc0) != 0x80) return error("invalid UTF-8");
    cp = (cp << 6) | (byte & 0x3f);
  }
  bool overlong = (length == 3 && cp < 0x800) || (length == 4 && cp < 0x10000);
  if (overlong || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return error("invalid UTF-8");
  out->append(text_.substr(pos_, length));
  pos_ += length;
  return Status();
}

Status JsonReader::read_string(std::string* out) noexcept {
  ++pos_; // the opening quote
  for (;;) {
    int c = peek();
    if (c == kEnd) return error("unterminated string");
    if (c == '"') {
      ++pos_;
      return Status();
    }
    if (c < 0x20) return error("control character in a string");
    if (c >= 0x80) {
      DEVRT_RETURN_IF_ERROR(read_utf8(out));
      continue;
    }
    if (c != '\\') {
      *out += static_cast<char>(c);
      ++pos_;
      continue;
    }
    ++pos_;
    int escape = peek();
    ++pos_;
    switch (escape) {
    case '"': *out += '"'; break;
    case '\\': *out += '\\'; break;
    case '/': *out += '/'; break;
    case 'b': *out += '\b'; break;
    case 'f': *out += '\f'; break;
    case 'n': *out += '\n'; break;
    case 'r': *out += '\r'; break;
    case 't': *out += '\t'; break;
    case 'u': {
      std::uint32_t cp = 0;
      DEVRT_RETURN_IF_ERROR(read_hex4(&cp));
      if (cp >= 0xdc00 && cp <= 0xdfff) return error("unpaired low surrogate");
      if (cp >= 0xd800 && cp <= 0xdbff) {
        if (!consume('\\') || !consume('u')) return error("unpaired high surrogate");
        std::uint32_t low = 0;
        DEVRT_RETURN_IF_ERROR(read_hex4(&low));
        if (low < 0xdc00 || low > 0xdfff) return error("unpaired high surrogate");
        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
      }
      append_utf8(out, cp);
      break;
    }
    default: --pos_; return error("unknown escape");
    }
  }
}

} // namespace devrt::detail
