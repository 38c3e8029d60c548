// SPDX-License-Identifier: Apache-2.0
// Host-side arithmetic the engines lack: avg's division, and float16/bfloat16 reductions
// (computed in float and rounded to nearest even, as NCCL does).
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "comm/engine.hpp"

namespace devrt::comm::detail {
namespace {

float half_to_float(std::uint16_t half) noexcept {
  std::uint32_t sign = static_cast<std::uint32_t>(half & 0x8000u) << 16;
  std::uint32_t exponent = (half >> 10) & 0x1fu;
  std::uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-24
    float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign != 0 ? -magnitude : magnitude;
  }
  std::uint32_t bits =
      exponent == 31 ? sign | 0x7f800000u | (mantissa << 13) : sign | ((exponent + 112) << 23) | (mantissa << 13);
  return std::bit_cast<float>(bits);
}

std::uint16_t float_to_half(float value) noexcept {
  std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  std::uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude >= 0x7f800000u)
    return static_cast<std::uint16_t>(sign | 0x7c00u | (magnitude > 0x7f800000u ? 0x200u : 0u));
  if (magnitude >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u); // rounds to >= 65520: inf
  if (magnitude < 0x38800000u) { // below 2^-14: a subnormal half, round(value * 2^24)
    auto scaled = static_cast<std::uint32_t>(std::nearbyint(std::bit_cast<float>(magnitude) * 0x1p24f));
    return static_cast<std::uint16_t>(sign | scaled);
  }
  std::uint32_t half = (((magnitude >> 23) - 112) << 10) | ((magnitude & 0x7fffffu) >> 13);
  std::uint32_t rest = magnitude & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u) != 0)) ++half;
  return static_cast<std::uint16_t>(sign | half);
}

float bfloat_to_float(std::uint16_t value) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(value) << 16);
}

std::uint16_t float_to_bfloat(float value) noexcept {
  std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u); // quiet NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

float apply(ReduceOp op, float a, float b) noexcept {
  switch (op) {
  case ReduceOp::prod: return a * b;
  case ReduceOp::min: return std::fmin(a, b);
  case ReduceOp::max: return std::fmax(a, b);
  case ReduceOp::sum:
  case ReduceOp::avg: break;
  }
  return a + b;
}

template <class T>
void divide(std::byte* data, std::size_t count, int divisor) noexcept {
  for (std::size_t i = 0; i < count; ++i) {
    T value;
    std::memcpy(&value, data + i * sizeof(T), sizeof(T));
    value = static_cast<T>(value / static_cast<T>(divisor));
    std::memcpy(data + i * sizeof(T), &value, sizeof(T));
  }
}

template <class Signed, class Unsigned>
void divide_integer(std::byte* data, std::size_t count, bool is_signed, int divisor) noexcept {
  if (is_signed) {
    divide<Signed>(data, count, divisor);
  } else {
    divide<Unsigned>(data, count, divisor);
  }
}

} // namespace

void reduce_half(const void* in, void* inout, std::size_t count, bool bfloat, ReduceOp op) noexcept {
  const auto* a = static_cast<const std::byte*>(in);
  auto* b = static_cast<std::byte*>(inout);
  for (std::size_t i = 0; i < count; ++i) {
    std::uint16_t x = 0;
    std::uint16_t y = 0;
    std::memcpy(&x, a + 2 * i, 2);
    std::memcpy(&y, b + 2 * i, 2);
    float result =
        bfloat ? apply(op, bfloat_to_float(x), bfloat_to_float(y)) : apply(op, half_to_float(x), half_to_float(y));
    std::uint16_t out = bfloat ? float_to_bfloat(result) : float_to_half(result);
    std::memcpy(b + 2 * i, &out, 2);
  }
}

void divide_in_place(std::byte* data, std::size_t count, DataType dtype, int divisor) noexcept {
  bool is_signed = dtype.code == DataTypeCode::signed_int;
  if (dtype.code == DataTypeCode::signed_int || dtype.code == DataTypeCode::unsigned_int) {
    switch (dtype.bits) {
    case 8: divide_integer<std::int8_t, std::uint8_t>(data, count, is_signed, divisor); return;
    case 16: divide_integer<std::int16_t, std::uint16_t>(data, count, is_signed, divisor); return;
    case 32: divide_integer<std::int32_t, std::uint32_t>(data, count, is_signed, divisor); return;
    case 64: divide_integer<std::int64_t, std::uint64_t>(data, count, is_signed, divisor); return;
    default: return;
    }
  }
  if (dtype.bits == 16) {
    bool bfloat = dtype.code == DataTypeCode::bfloat;
    for (std::size_t i = 0; i < count; ++i) {
      std::uint16_t value = 0;
      std::memcpy(&value, data + 2 * i, 2);
      float quotient = (bfloat ? bfloat_to_float(value) : half_to_float(value)) / static_cast<float>(divisor);
      value = bfloat ? float_to_bfloat(quotient) : float_to_half(quotient);
      std::memcpy(data + 2 * i, &value, 2);
    }
  } else if (dtype.bits == 32) {
    divide<float>(data, count, divisor);
  } else if (dtype.bits == 64) {
    divide<double>(data, count, divisor);
  }
}

} // namespace devrt::comm::detail
