// SPDX-License-Identifier: Apache-2.0
// Element types: DLPack's (code, bits, lanes) triple with names and sizes.
#ifndef DEVRT_DTYPE_HPP
#define DEVRT_DTYPE_HPP

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include <dlpack/dlpack.h>

#include <devrt/detail/message.hpp>
#include <devrt/status.hpp>

namespace devrt {

// DLDataTypeCode's numbering (DLPack 1.x adds bool = 6 to 0.6's five codes, and 1.1 the 8-, 6-
// and 4-bit floating-point formats of OCP and the ML accelerators, 7-17).
enum class DataTypeCode : std::uint8_t {
  signed_int = 0,
  unsigned_int = 1,
  floating = 2,
  opaque_handle = 3,
  bfloat = 4,
  complex = 5,
  boolean = 6,
  float8_e3m4 = 7,
  float8_e4m3 = 8,
  float8_e4m3b11fnuz = 9,
  float8_e4m3fn = 10,
  float8_e4m3fnuz = 11,
  float8_e5m2 = 12,
  float8_e5m2fnuz = 13,
  float8_e8m0fnu = 14,
  float6_e2m3fn = 15,
  float6_e3m2fn = 16,
  float4_e2m1fn = 17,
};

// One element type. `lanes` > 1 is a short vector (float32x4). A plain value; thread-safe.
struct DataType {
  DataTypeCode code = DataTypeCode::floating;
  std::uint8_t bits = 32;
  std::uint16_t lanes = 1;

  friend constexpr bool operator==(const DataType&, const DataType&) = default;

  // Bytes per element, all lanes included. Valid for the byte-sized types devrt stores.
  constexpr std::size_t size_bytes() const noexcept { return static_cast<std::size_t>(bits) / 8 * lanes; }
  // The alignment an element needs in memory: its scalar size when that is a power of two, else 1.
  constexpr std::size_t alignment() const noexcept {
    std::size_t scalar = bits / 8u;
    return scalar != 0 && (scalar & (scalar - 1)) == 0 ? scalar : 1;
  }

  DLDataType to_dlpack() const noexcept { return DLDataType{static_cast<std::uint8_t>(code), bits, lanes}; }
  static constexpr DataType from_dlpack(const DLDataType& type) noexcept {
    return DataType{static_cast<DataTypeCode>(type.code), type.bits, type.lanes};
  }

  static constexpr DataType int8() noexcept { return {DataTypeCode::signed_int, 8, 1}; }
  static constexpr DataType int16() noexcept { return {DataTypeCode::signed_int, 16, 1}; }
  static constexpr DataType int32() noexcept { return {DataTypeCode::signed_int, 32, 1}; }
  static constexpr DataType int64() noexcept { return {DataTypeCode::signed_int, 64, 1}; }
  static constexpr DataType uint8() noexcept { return {DataTypeCode::unsigned_int, 8, 1}; }
  static constexpr DataType uint16() noexcept { return {DataTypeCode::unsigned_int, 16, 1}; }
  static constexpr DataType uint32() noexcept { return {DataTypeCode::unsigned_int, 32, 1}; }
  static constexpr DataType uint64() noexcept { return {DataTypeCode::unsigned_int, 64, 1}; }
  static constexpr DataType float16() noexcept { return {DataTypeCode::floating, 16, 1}; }
  static constexpr DataType float32() noexcept { return {DataTypeCode::floating, 32, 1}; }
  static constexpr DataType float64() noexcept { return {DataTypeCode::floating, 64, 1}; }
  static constexpr DataType bfloat16() noexcept { return {DataTypeCode::bfloat, 16, 1}; }
  static constexpr DataType boolean() noexcept { return {DataTypeCode::boolean, 8, 1}; }
};

// The DataType of a C++ arithmetic type (data_type_of<float>() == DataType::float32()).
template <class T>
constexpr DataType data_type_of() noexcept {
  static_assert(std::is_arithmetic_v<T>, "data_type_of<T>: T must be an arithmetic type");
  if constexpr (std::is_same_v<T, bool>) {
    return DataType::boolean();
  } else if constexpr (std::is_floating_point_v<T>) {
    return DataType{DataTypeCode::floating, static_cast<std::uint8_t>(sizeof(T) * 8), 1};
  } else if constexpr (std::is_signed_v<T>) {
    return DataType{DataTypeCode::signed_int, static_cast<std::uint8_t>(sizeof(T) * 8), 1};
  } else {
    return DataType{DataTypeCode::unsigned_int, static_cast<std::uint8_t>(sizeof(T) * 8), 1};
  }
}

// Why devrt cannot store elements of this type, or ok: bits must be a non-zero multiple of 8,
// lanes non-zero, the code one DLPack defines. Thread-safe.
Status check_data_type(DataType type) noexcept;

// TVM's names: "float32", "int8x4", "bool", "handle", "bfloat16", "float8_e4m3fn", "void" (an
// opaque handle of 0 bits and 0 lanes); an unknown code prints as "code<N>_<bits>". Thread-safe.
std::string to_string(DataType type);

// Parses the names TVM and DLPack use, with an optional "x<lanes>" suffix (1 to 65535 lanes):
// int and uint of 1, 2, 4, 8, 16, 32 or 64 bits; float of 16, 32 or 64; bfloat16; complex64 and
// complex128; bool; handle (64 bits) or handle<N>; void; the DLPack 1.1 names float8_e3m4,
// float8_e4m3, float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz,
// float8_e8m0fnu, float6_e2m3fn, float6_e3m2fn, float4_e2m1fn. TVM's short forms "int", "uint"
// and "float" mean 32 bits, "bfloat" 16. Anything else (float33, bfloat32, complex32, int 0
// lanes) is invalid_argument naming the text. Thread-safe.
Result<DataType> parse_data_type(std::string_view text) noexcept;

namespace detail {
void append_part(MessageBuilder& m, DataType type) noexcept;
} // namespace detail

} // namespace devrt

#endif // DEVRT_DTYPE_HPP
