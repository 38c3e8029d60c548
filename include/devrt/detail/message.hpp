// SPDX-License-Identifier: Apache-2.0
// A fixed-capacity message builder: concatenates strings and integers without the heap, without
// locale and without a format-string parser, so that error paths cost little code in firmware.
#ifndef DEVRT_DETAIL_MESSAGE_HPP
#define DEVRT_DETAIL_MESSAGE_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace devrt::detail {

class MessageBuilder {
public:
  static constexpr std::size_t kCapacity = 480;

  MessageBuilder() noexcept { buffer_[0] = '\0'; }

  MessageBuilder& append(std::string_view text) noexcept {
    for (char c : text) {
      if (length_ + 1 >= kCapacity) {
        truncated_ = true;
        break;
      }
      buffer_[length_++] = c;
    }
    buffer_[length_] = '\0';
    return *this;
  }

  MessageBuilder& append_unsigned(std::uint64_t value, unsigned base = 10) noexcept {
    char digits[24];
    std::size_t n = 0;
    do {
      unsigned d = static_cast<unsigned>(value % base);
      digits[n++] = static_cast<char>(d < 10 ? '0' + d : 'a' + (d - 10));
      value /= base;
    } while (value != 0);
    char ordered[24];
    for (std::size_t i = 0; i < n; ++i) ordered[i] = digits[n - 1 - i];
    return append(std::string_view(ordered, n));
  }

  MessageBuilder& append_signed(std::int64_t value) noexcept {
    if (value < 0) {
      append("-");
      return append_unsigned(~static_cast<std::uint64_t>(value) + 1);
    }
    return append_unsigned(static_cast<std::uint64_t>(value));
  }

  MessageBuilder& append_pointer(const void* p) noexcept {
    append("0x");
    return append_unsigned(reinterpret_cast<std::uintptr_t>(p), 16);
  }

  std::string_view view() const noexcept { return {buffer_, length_}; }
  const char* c_str() const noexcept { return buffer_; }
  bool truncated() const noexcept { return truncated_; }

private:
  char buffer_[kCapacity];
  std::size_t length_ = 0;
  bool truncated_ = false;
};

// Appends one value of any supported type; extended for devrt types next to their definition.
// The length of a C string stored in a buffer of `capacity` bytes, which may lack its terminator
// (strnlen, which a freestanding C library need not declare).
inline std::size_t bounded_length(const char* text, std::size_t capacity) noexcept {
  const char* end = std::char_traits<char>::find(text, capacity, '\0');
  return end != nullptr ? static_cast<std::size_t>(end - text) : capacity;
}

inline void append_part(MessageBuilder& m, std::string_view s) noexcept { m.append(s); }
inline void append_part(MessageBuilder& m, const char* s) noexcept {
  m.append(s != nullptr ? std::string_view(s) : std::string_view("(null)"));
}
inline void append_part(MessageBuilder& m, char c) noexcept { m.append(std::string_view(&c, 1)); }
inline void append_part(MessageBuilder& m, bool b) noexcept { m.append(b ? "true" : "false"); }
inline void append_part(MessageBuilder& m, const void* p) noexcept { m.append_pointer(p); }
inline void append_part(MessageBuilder& m, void* p) noexcept { m.append_pointer(p); }
// clang-format off
template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>)
void append_part(MessageBuilder& m, T value) noexcept {
  if constexpr (std::is_signed_v<T>) {
    m.append_signed(static_cast<std::int64_t>(value));
  } else {
    m.append_unsigned(static_cast<std::uint64_t>(value));
  }
}
// clang-format on

// An unsigned value printed in hexadecimal (no prefix): append_parts(m, "0x", Hex{v}).
struct Hex {
  std::uint64_t value;
};
inline void append_part(MessageBuilder& m, Hex hex) noexcept { m.append_unsigned(hex.value, 16); }

// A shape printed as "[2, 3, 4]": append_parts(m, "shape ", ShapeText{dims, rank}).
struct ShapeText {
  const std::int64_t* dims;
  std::size_t rank;
};
inline void append_part(MessageBuilder& m, const ShapeText& shape) noexcept {
  m.append("[");
  for (std::size_t i = 0; i < shape.rank; ++i) {
    if (i > 0) m.append(", ");
    m.append_signed(shape.dims[i]);
  }
  m.append("]");
}

// One message part, type-erased so that each call site only fills an array and calls one
// out-of-line function: message code costs the same whatever the mix of part types (this keeps
// firmware images small). Text parts refer to the caller's objects, which outlive the call.
struct MessagePart {
  enum class Kind : std::uint8_t { text, sint, uint, hex, pointer, custom };
  using Appender = void (*)(MessageBuilder& m, const void* object) noexcept;
  struct Custom {
    Appender append;
    const void* object;
  };
  Kind kind;
  union {
    std::string_view text;
    std::int64_t sint;
    std::uint64_t uint;
    const void* pointer;
    Custom custom;
  };
};

template <class T>
void append_erased(MessageBuilder& m, const void* object) noexcept {
  append_part(m, *static_cast<const T*>(object));
}

// clang-format off
template <class T>
[[gnu::always_inline]] inline MessagePart to_message_part(const T& value) noexcept {
  MessagePart part{MessagePart::Kind::text, {}};
  if constexpr (std::is_same_v<T, const char*> || std::is_same_v<T, char*>) {
    part.text = value != nullptr ? std::string_view(value) : std::string_view("(null)");
  } else if constexpr (std::is_convertible_v<const T&, std::string_view> && !std::is_same_v<T, std::nullptr_t>) {
    part.text = std::string_view(value);
  } else if constexpr (std::is_same_v<T, bool>) {
    part.text = value ? std::string_view("true") : std::string_view("false");
  } else if constexpr (std::is_same_v<T, char>) {
    part.text = std::string_view(&value, 1);
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    part.kind = MessagePart::Kind::sint;
    part.sint = static_cast<std::int64_t>(value);
  } else if constexpr (std::is_integral_v<T>) {
    part.kind = MessagePart::Kind::uint;
    part.uint = static_cast<std::uint64_t>(value);
  } else if constexpr (std::is_same_v<T, Hex>) {
    part.kind = MessagePart::Kind::hex;
    part.uint = value.value;
  } else if constexpr (std::is_pointer_v<T>) {
    part.kind = MessagePart::Kind::pointer;
    part.pointer = static_cast<const void*>(value);
  } else {
    part.kind = MessagePart::Kind::custom;
    part.custom.append = &append_erased<T>;
    part.custom.object = &value;
  }
  return part;
}
// clang-format on

// Appends every part in order. Thread-safe (touches only `m`).
void append_message_parts(MessageBuilder& m, const MessagePart* parts, std::size_t count) noexcept;

template <class... Parts>
void append_parts(MessageBuilder& m, const Parts&... parts) noexcept {
  if constexpr (sizeof...(Parts) > 0) {
    const MessagePart list[] = {to_message_part(parts)...};
    append_message_parts(m, list, sizeof...(Parts));
  }
}

} // namespace devrt::detail

#endif // DEVRT_DETAIL_MESSAGE_HPP
