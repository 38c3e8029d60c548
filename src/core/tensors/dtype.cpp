// SPDX-License-Identifier: Apache-2.0
// Data types as text (devrt/dtype.hpp): parsing "float32", "int8x4" and the like, and
// checking codes, widths and lanes.
#include <devrt/dtype.hpp>

#include <array>
#include <charconv>

namespace devrt {
namespace {

// How each DLPack code is written, and the bit widths the name may carry (0: the name has none).
struct CodeName {
  std::string_view name;
  std::array<std::uint8_t, 7> widths; // the widths a name of this code may carry; 0 ends the list
  std::uint8_t fixed_bits;            // for names that carry no width ("float8_e4m3fn": 8)
};

constexpr CodeName kCodes[] = {
    {"int", {1, 2, 4, 8, 16, 32, 64}, 0},
    {"uint", {1, 2, 4, 8, 16, 32, 64}, 0},
    {"float", {16, 32, 64}, 0},
    {"handle", {}, 0}, // any width: "handle32", "handle64"
    {"bfloat", {16}, 0},
    {"complex", {64, 128}, 0},
    {"bool", {}, 8},
    {"float8_e3m4", {}, 8},
    {"float8_e4m3", {}, 8},
    {"float8_e4m3b11fnuz", {}, 8},
    {"float8_e4m3fn", {}, 8},
    {"float8_e4m3fnuz", {}, 8},
    {"float8_e5m2", {}, 8},
    {"float8_e5m2fnuz", {}, 8},
    {"float8_e8m0fnu", {}, 8},
    {"float6_e2m3fn", {}, 6},
    {"float6_e3m2fn", {}, 6},
    {"float4_e2m1fn", {}, 4},
};

const CodeName* code_entry(DataTypeCode code) noexcept {
  auto index = static_cast<std::size_t>(code);
  return index < std::size(kCodes) ? &kCodes[index] : nullptr;
}

bool width_allowed(const CodeName& entry, unsigned bits) noexcept {
  for (std::uint8_t width : entry.widths) {
    if (width == bits) return true;
  }
  return false;
}

// A decimal number filling `digits` entirely, or false.
bool parse_number(std::string_view digits, unsigned& value) noexcept {
  if (digits.empty() || digits.front() < '0' || digits.front() > '9') return false;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return ec == std::errc() && end == digits.data() + digits.size();
}

} // namespace

Status check_data_type(DataType type) noexcept {
  if (code_entry(type.code) == nullptr) {
    return make_error(ErrorCode::invalid_argument, "dtype ", type, ": unknown type code ", static_cast<int>(type.code));
  }
  if (type.bits == 0) return make_error(ErrorCode::invalid_argument, "dtype ", type, ": 0 bits per element");
  if (type.lanes == 0) return make_error(ErrorCode::invalid_argument, "dtype ", type, ": 0 lanes");
  if (type.bits % 8 != 0) {
    return make_error(ErrorCode::unsupported, "dtype ", type, ": sub-byte element types (", static_cast<int>(type.bits),
                      " bits) are not supported");
  }
  if (type.code == DataTypeCode::boolean && type.bits != 8) {
    return make_error(ErrorCode::invalid_argument, "dtype ", type, ": bool must be 8 bits");
  }
  return Status();
}

void detail::append_part(MessageBuilder& m, DataType type) noexcept {
  if (type.code == DataTypeCode::opaque_handle && type.bits == 0 && type.lanes == 0) {
    m.append("void");
    return;
  }
  const CodeName* entry = code_entry(type.code);
  if (entry == nullptr) {
    m.append("code");
    m.append_unsigned(static_cast<unsigned>(type.code));
    m.append("_");
    m.append_unsigned(type.bits);
  } else {
    m.append(entry->name);
    // A name of a fixed width prints without it when the width is that one ("bool",
    // "float8_e4m3fn"); so does the 64-bit handle, as TVM writes it.
    bool implied = (entry->fixed_bits != 0 && type.bits == entry->fixed_bits) ||
                   (type.code == DataTypeCode::opaque_handle && type.bits == 64);
    if (!implied) m.append_unsigned(type.bits);
  }
  if (type.lanes != 1) {
    m.append("x");
    m.append_unsigned(type.lanes);
  }
}

std::string to_string(DataType type) {
  detail::MessageBuilder m;
  detail::append_part(m, type);
  return std::string(m.view());
}

Result<DataType> parse_data_type(std::string_view text) noexcept {
  auto malformed = [&] {
    return make_error(ErrorCode::invalid_argument, "unknown dtype '", text,
                      "': expected int|uint{1,2,4,8,16,32,64}, float{16,32,64}, bfloat16, complex{64,128}, bool, "
                      "handle, void, a float8/float6/float4 name (float8_e4m3fn, ...), each with an optional "
                      "x<lanes>");
  };
  if (text == "void") return DataType{DataTypeCode::opaque_handle, 0, 0};
  // The longest name the text starts with ("float8_e4m3fnuz" before "float8_e4m3fn" before "float").
  const CodeName* entry = nullptr;
  std::size_t code = 0;
  for (std::size_t i = 0; i < std::size(kCodes); ++i) {
    if (text.starts_with(kCodes[i].name) && (entry == nullptr || kCodes[i].name.size() > entry->name.size())) {
      entry = &kCodes[i];
      code = i;
    }
  }
  if (entry == nullptr) return malformed();
  // remove_prefix and a length, not substr: nothing here can be out of range, and substr's
  // throwing check would link libstdc++'s __throw_out_of_range_fmt into firmware.
  std::string_view rest = text;
  rest.remove_prefix(entry->name.size());
  std::string_view lanes_text;
  if (std::size_t x = rest.find('x'); x != std::string_view::npos) {
    lanes_text = std::string_view(rest.data() + x + 1, rest.size() - x - 1);
    rest = std::string_view(rest.data(), x);
    if (lanes_text.empty()) return malformed();
  }
  unsigned bits = 0;
  if (rest.empty()) {
    // TVM's short forms: int, uint, float -> 32 bits; bfloat -> 16; handle -> 64.
    if (entry->fixed_bits != 0) {
      bits = entry->fixed_bits;
    } else if (static_cast<DataTypeCode>(code) == DataTypeCode::opaque_handle) {
      bits = 64;
    } else if (static_cast<DataTypeCode>(code) == DataTypeCode::complex) {
      return malformed();
    } else {
      bits = static_cast<DataTypeCode>(code) == DataTypeCode::bfloat ? 16u : 32u;
    }
  } else {
    if (entry->fixed_bits != 0 || !parse_number(rest, bits) || bits == 0 || bits > 255) return malformed();
    if (static_cast<DataTypeCode>(code) != DataTypeCode::opaque_handle && !width_allowed(*entry, bits)) {
      return malformed();
    }
  }
  unsigned lanes = 1;
  if (!lanes_text.empty() && (!parse_number(lanes_text, lanes) || lanes == 0 || lanes > 0xffff)) return malformed();
  return DataType{static_cast<DataTypeCode>(code), static_cast<std::uint8_t>(bits), static_cast<std::uint16_t>(lanes)};
}

} // namespace devrt
