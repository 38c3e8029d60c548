// SPDX-License-Identifier: Apache-2.0
#include <devrt/dtype.hpp>

#include <charconv>

namespace devrt {
namespace {

constexpr std::string_view kCodeNames[] = {"int", "uint", "float", "handle", "bfloat", "complex", "bool"};

std::string_view code_name(DataTypeCode code) noexcept {
  auto index = static_cast<std::size_t>(code);
  return index < std::size(kCodeNames) ? kCodeNames[index] : std::string_view();
}

} // namespace

Status check_data_type(DataType type) noexcept {
  if (code_name(type.code).empty()) {
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
  std::string_view name = code_name(type.code);
  if (type.code == DataTypeCode::boolean && type.bits == 8) {
    m.append("bool");
  } else {
    if (name.empty()) {
      m.append("code");
      m.append_unsigned(static_cast<unsigned>(type.code));
      m.append("_");
    } else {
      m.append(name);
    }
    m.append_unsigned(type.bits);
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
  auto malformed = [&] { return make_error(ErrorCode::invalid_argument, "malformed dtype '", text, "'"); };
  std::string_view rest = text;
  std::uint16_t lanes = 1;
  // "float32x4": lanes follow an 'x' that follows the bit count ("complex64" has an 'x' too).
  if (std::size_t x = rest.rfind('x');
      x != std::string_view::npos && x > 0 && rest[x - 1] >= '0' && rest[x - 1] <= '9') {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(rest.data() + x + 1, rest.data() + rest.size(), value);
    if (ec != std::errc() || end != rest.data() + rest.size() || value == 0 || value > 0xffff) return malformed();
    lanes = static_cast<std::uint16_t>(value);
    rest = rest.substr(0, x);
  }
  if (rest == "bool") return DataType{DataTypeCode::boolean, 8, lanes};
  for (std::size_t code = 0; code < std::size(kCodeNames); ++code) {
    std::string_view name = kCodeNames[code];
    if (rest.size() <= name.size() || rest.substr(0, name.size()) != name) continue;
    std::string_view digits = rest.substr(name.size());
    if (digits.front() < '0' || digits.front() > '9') continue; // "uint8" is not "int" + "8"
    unsigned bits = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), bits);
    if (ec != std::errc() || end != digits.data() + digits.size() || bits == 0 || bits > 255) return malformed();
    return DataType{static_cast<DataTypeCode>(code), static_cast<std::uint8_t>(bits), lanes};
  }
  return malformed();
}

} // namespace devrt
