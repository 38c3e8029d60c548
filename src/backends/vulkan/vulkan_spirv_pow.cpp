// SPDX-License-Identifier: Apache-2.0
// GLSL.std.450 Pow, defined where SPIR-V leaves it undefined (vulkan_spirv.hpp, define_pow).
#include <bit>
#include <cmath>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "vulkan_spirv.hpp"
#include "vulkan_spirv_opcodes.hpp"

namespace devrt::vulkan {
// Names of its own: a unity build compiles this file in one unit with vulkan_spirv.cpp.
namespace pow_rewrite {
namespace {

// SPIR-V's universal limit on the id bound.
constexpr std::uint32_t kMaxIdBound = 0x3fffff;
// The most lanes a SPIR-V vector has (16, with the Vector16 capability).
constexpr std::uint32_t kMaxLanes = 16;
// The largest constant integer exponent lowered to multiplications.
constexpr std::uint32_t kMaxMultipliedExponent = 4;

// The constants a general rewrite compares and selects with, as bits of one float width.
struct FloatBits {
  std::uint32_t zero, one, half, infinity, nan;
};
constexpr FloatBits kFloat32Bits{0, 0x3f800000, 0x3f000000, 0x7f800000, 0x7fc00000};
constexpr FloatBits kFloat16Bits{0, 0x3c00, 0x3800, 0x7c00, 0x7e00};

// A float or a vector of floats: its scalar type, width and lane count.
struct FloatShape {
  std::uint32_t scalar = 0;
  std::uint32_t width = 0;
  std::uint32_t lanes = 1;
};

// The ids a general rewrite of one result type uses, declared before the first function.
struct TypeSupport {
  std::uint32_t bool_type = 0;
  std::uint32_t zero = 0, one = 0, half = 0, infinity = 0, nan = 0;
};

// What one pass over the module finds.
struct Scan {
  std::uint32_t bound = 0;
  std::size_t first_function = 0; // word index; 0 when the module has no function
  std::vector<std::uint32_t> glsl_sets;
  std::vector<std::size_t> pows; // word indices of GLSL.std.450 Pow instructions
  std::uint32_t bool_type = 0;
  std::unordered_map<std::uint32_t, std::uint32_t> float_width;                         // scalar float type -> bits
  std::unordered_map<std::uint32_t, std::pair<std::uint32_t, std::uint32_t>> vectors;   // type -> (component, lanes)
  std::unordered_map<std::uint32_t, std::uint32_t> bool_vectors;                        // lanes -> type
  std::unordered_map<std::uint32_t, std::pair<std::uint32_t, std::uint32_t>> constants; // id -> (type, bits)
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> composites;             // id -> constituents
  std::unordered_map<std::uint32_t, std::uint32_t> conversions;                         // OpFConvert id -> operand
};

bool is_glsl(const Scan& scan, std::uint32_t set) {
  for (std::uint32_t id : scan.glsl_sets) {
    if (id == set) return true;
  }
  return false;
}

void record(Scan& scan, const std::uint32_t* op, std::uint32_t count, std::size_t at) {
  const std::uint32_t opcode = op[0] & 0xffffu;
  switch (opcode) {
  case spirv::kOpExtInstImport:
    if (count >= 3 &&
        std::string_view(reinterpret_cast<const char*>(op + 2), (count - 2) * 4u).starts_with("GLSL.std.450")) {
      scan.glsl_sets.push_back(op[1]);
    }
    break;
  case spirv::kOpExtInst:
    if (count == 7 && op[4] == spirv::kGlslPow && is_glsl(scan, op[3])) scan.pows.push_back(at);
    break;
  case spirv::kOpTypeBool:
    if (count >= 2 && scan.bool_type == 0) scan.bool_type = op[1];
    break;
  case spirv::kOpTypeFloat:
    if (count >= 3) scan.float_width[op[1]] = op[2];
    break;
  case spirv::kOpTypeVector:
    if (count < 4) break;
    scan.vectors[op[1]] = {op[2], op[3]};
    if (op[2] == scan.bool_type && scan.bool_type != 0) scan.bool_vectors.emplace(op[3], op[1]);
    break;
  case spirv::kOpConstant:
    if (count == 4 && scan.float_width.count(op[1]) != 0) scan.constants[op[2]] = {op[1], op[3]};
    break;
  case spirv::kOpConstantComposite:
    if (count >= 3) scan.composites[op[2]] = std::vector<std::uint32_t>(op + 3, op + count);
    break;
  case spirv::kOpFConvert:
    if (count == 4) scan.conversions[op[2]] = op[3];
    break;
  case spirv::kOpFunction:
    if (scan.first_function == 0) scan.first_function = at;
    break;
  default: break;
  }
}

Result<Scan> scan_module(std::span<const std::uint32_t> words) {
  if (words.size() < 5 || words[0] != 0x07230203) {
    return make_error(ErrorCode::invalid_argument, "SPIR-V: no module header to rewrite");
  }
  Scan scan;
  scan.bound = words[3];
  for (std::size_t i = 5; i < words.size();) {
    const std::uint32_t count = words[i] >> 16;
    if (count == 0 || i + count > words.size()) {
      return make_error(ErrorCode::invalid_argument, "SPIR-V: instruction at word ", i, " (opcode ", words[i] & 0xffffu,
                        ") has a bad word count ", count);
    }
    record(scan, &words[i], count, i);
    i += count;
  }
  return scan;
}

// The value of a 16- or 32-bit float's bits.
double float_value(std::uint32_t bits, std::uint32_t width) {
  if (width == 32) return std::bit_cast<float>(bits);
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  const double mantissa = bits & 0x3ffu;
  // A NaN or an infinity is no small integer: both read as infinity here.
  const double magnitude = exponent == 0    ? std::ldexp(mantissa, -24)
                           : exponent == 31 ? HUGE_VAL
                                            : std::ldexp(1024 + mantissa, static_cast<int>(exponent) - 25);
  return (bits & 0x8000u) != 0 ? -magnitude : magnitude;
}

// The small positive integer a scalar is: a constant, or a constant through a few conversions.
std::optional<std::uint32_t> small_integer(const Scan& scan, std::uint32_t id) {
  for (int conversions = 0; conversions < 4; ++conversions) {
    auto conversion = scan.conversions.find(id);
    if (conversion == scan.conversions.end()) break;
    id = conversion->second;
  }
  auto constant = scan.constants.find(id);
  if (constant == scan.constants.end()) return std::nullopt;
  const auto width = scan.float_width.find(constant->second.first); // recorded with its constant
  const double value = float_value(constant->second.second, width->second);
  for (std::uint32_t n = 1; n <= kMaxMultipliedExponent; ++n) {
    if (value == n) return n;
  }
  return std::nullopt;
}

// The small positive integer a Pow's exponent always is (such a scalar, or a vector of one), else
// nothing.
std::optional<std::uint32_t> multiplied_exponent(const Scan& scan, std::uint32_t id) {
  auto composite = scan.composites.find(id);
  if (composite == scan.composites.end()) return small_integer(scan, id);
  if (composite->second.empty() || composite->second.size() > kMaxLanes) return std::nullopt;
  std::optional<std::uint32_t> first = small_integer(scan, composite->second[0]);
  for (std::uint32_t part : composite->second) {
    if (small_integer(scan, part) != first) return std::nullopt;
  }
  return first;
}

std::optional<FloatShape> float_shape(const Scan& scan, std::uint32_t type) {
  FloatShape shape;
  shape.scalar = type;
  if (auto vector = scan.vectors.find(type); vector != scan.vectors.end()) {
    shape.scalar = vector->second.first;
    shape.lanes = vector->second.second;
    if (shape.lanes < 2 || shape.lanes > kMaxLanes) return std::nullopt;
  }
  auto width = scan.float_width.find(shape.scalar);
  if (width == scan.float_width.end() || (width->second != 16 && width->second != 32)) return std::nullopt;
  shape.width = width->second;
  return shape;
}

// Writes instructions; hands out new ids above the module's bound.
class Writer {
public:
  explicit Writer(std::uint32_t bound) : next_id_(bound) {}
  // Past SPIR-V's limit the ids are wrong, and the rewrite is refused before they are used.
  std::uint32_t id() { return static_cast<std::uint32_t>(next_id_++); }
  std::uint64_t bound() const { return next_id_; }
  void op(std::vector<std::uint32_t>& out, std::uint32_t opcode, std::initializer_list<std::uint32_t> operands) {
    out.push_back(static_cast<std::uint32_t>(operands.size() + 1) << 16 | opcode);
    out.insert(out.end(), operands);
  }

private:
  std::uint64_t next_id_; // wide: a bound near 2^32 must not wrap past the check
};

// Declares what general rewrites need (bool types, constants), once per result type, in `globals`.
class Declarations {
public:
  Declarations(const Scan& scan, Writer& writer) : scan_(scan), writer_(writer), bool_type_(scan.bool_type) {}

  const TypeSupport& support(std::uint32_t type, const FloatShape& shape) {
    if (auto found = by_type_.find(type); found != by_type_.end()) return found->second;
    TypeSupport support;
    support.bool_type = bool_of(shape.lanes);
    const FloatBits& bits = shape.width == 16 ? kFloat16Bits : kFloat32Bits;
    const std::uint32_t values[5] = {bits.zero, bits.one, bits.half, bits.infinity, bits.nan};
    std::uint32_t* ids[5] = {&support.zero, &support.one, &support.half, &support.infinity, &support.nan};
    for (int i = 0; i < 5; ++i) {
      const std::uint32_t scalar = writer_.id();
      writer_.op(globals, spirv::kOpConstant, {shape.scalar, scalar, values[i]});
      *ids[i] = scalar;
      if (shape.lanes > 1) {
        *ids[i] = writer_.id();
        globals.push_back((3 + shape.lanes) << 16 | spirv::kOpConstantComposite);
        globals.insert(globals.end(), {type, *ids[i]});
        globals.insert(globals.end(), shape.lanes, scalar);
      }
    }
    return by_type_.emplace(type, support).first->second;
  }

  std::vector<std::uint32_t> globals;

private:
  std::uint32_t bool_of(std::uint32_t lanes) {
    if (bool_type_ == 0) {
      bool_type_ = writer_.id();
      writer_.op(globals, spirv::kOpTypeBool, {bool_type_});
    }
    if (lanes == 1) return bool_type_;
    if (auto found = scan_.bool_vectors.find(lanes); found != scan_.bool_vectors.end()) return found->second;
    if (auto made = bool_vectors_.find(lanes); made != bool_vectors_.end()) return made->second;
    const std::uint32_t vector = writer_.id();
    writer_.op(globals, spirv::kOpTypeVector, {vector, bool_type_, lanes});
    return bool_vectors_.emplace(lanes, vector).first->second;
  }

  const Scan& scan_;
  Writer& writer_;
  std::uint32_t bool_type_;
  std::unordered_map<std::uint32_t, std::uint32_t> bool_vectors_;
  std::unordered_map<std::uint32_t, TypeSupport> by_type_;
};

// x^n as n - 1 multiplications (n from 1 to 4), into `result`.
void emit_multiplied(Writer& w, std::vector<std::uint32_t>& out, std::uint32_t type, std::uint32_t result,
                     std::uint32_t x, std::uint32_t n) {
  if (n == 1) {
    w.op(out, spirv::kOpCopyObject, {type, result, x});
  } else if (n == 2) {
    w.op(out, spirv::kOpFMul, {type, result, x, x});
  } else {
    const std::uint32_t square = w.id();
    w.op(out, spirv::kOpFMul, {type, square, x, x});
    w.op(out, spirv::kOpFMul, {type, result, square, n == 3 ? x : square});
  }
}

// pow(x, y) with C's results: pow(|x|, y), 1 where y is 0 or |x| is 1, 0 or +inf for a zero base,
// negated where x < 0 and y is an odd integer, NaN where x is negative and finite and y is not an
// integer. Into `result`.
void emit_general(Writer& w, std::vector<std::uint32_t>& out, std::uint32_t type, std::uint32_t result,
                  std::uint32_t glsl, std::uint32_t x, std::uint32_t y, const TypeSupport& s) {
  const std::uint32_t b = s.bool_type;
  auto value = [&](std::uint32_t opcode, std::initializer_list<std::uint32_t> operands, std::uint32_t of_type) {
    const std::uint32_t id = w.id();
    std::vector<std::uint32_t> all{of_type, id};
    all.insert(all.end(), operands);
    out.push_back(static_cast<std::uint32_t>(all.size() + 1) << 16 | opcode);
    out.insert(out.end(), all.begin(), all.end());
    return id;
  };
  const std::uint32_t magnitude = value(spirv::kOpExtInst, {glsl, spirv::kGlslFAbs, x}, type);
  const std::uint32_t power = value(spirv::kOpExtInst, {glsl, spirv::kGlslPow, magnitude, y}, type);
  const std::uint32_t unit =
      value(spirv::kOpLogicalOr,
            {value(spirv::kOpFOrdEqual, {magnitude, s.one}, b), value(spirv::kOpFOrdEqual, {y, s.zero}, b)}, b);
  const std::uint32_t zero_base = value(spirv::kOpFOrdEqual, {magnitude, s.zero}, b);
  const std::uint32_t negative_exponent = value(spirv::kOpFOrdLessThan, {y, s.zero}, b);
  const std::uint32_t of_zero = value(spirv::kOpSelect, {negative_exponent, s.infinity, s.zero}, type);
  const std::uint32_t unsigned_power =
      value(spirv::kOpSelect, {unit, s.one, value(spirv::kOpSelect, {zero_base, of_zero, power}, type)}, type);
  const std::uint32_t integer =
      value(spirv::kOpFOrdEqual, {value(spirv::kOpExtInst, {glsl, spirv::kGlslTrunc, y}, type), y}, b);
  const std::uint32_t halved = value(spirv::kOpFMul, {y, s.half}, type);
  const std::uint32_t odd =
      value(spirv::kOpLogicalAnd,
            {integer, value(spirv::kOpFOrdNotEqual,
                            {value(spirv::kOpExtInst, {glsl, spirv::kGlslTrunc, halved}, type), halved}, b)},
            b);
  const std::uint32_t negative = value(spirv::kOpFOrdLessThan, {x, s.zero}, b);
  const std::uint32_t flip = value(spirv::kOpLogicalAnd, {negative, odd}, b);
  const std::uint32_t signed_power =
      value(spirv::kOpSelect, {flip, value(spirv::kOpFNegate, {unsigned_power}, type), unsigned_power}, type);
  const std::uint32_t finite_negative =
      value(spirv::kOpLogicalAnd, {negative, value(spirv::kOpLogicalNot, {value(spirv::kOpIsInf, {x}, b)}, b)}, b);
  const std::uint32_t undefined =
      value(spirv::kOpLogicalAnd, {finite_negative, value(spirv::kOpLogicalNot, {integer}, b)}, b);
  w.op(out, spirv::kOpSelect, {type, result, undefined, s.nan, signed_power});
}

} // namespace

Result<SpirvPowRewrite> rewrite_pows(std::span<const std::uint32_t> words) {
  DEVRT_ASSIGN_OR_RETURN(Scan scan, scan_module(words));
  SpirvPowRewrite rewrite;
  if (scan.pows.empty() || scan.first_function == 0) return rewrite;
  Writer writer(scan.bound);
  Declarations declarations(scan, writer);
  // Each Pow's replacement, by word index; a Pow whose types are not 16- or 32-bit floats stays.
  std::unordered_map<std::size_t, std::vector<std::uint32_t>> replacements;
  for (std::size_t at : scan.pows) {
    const std::uint32_t* op = &words[at];
    const std::uint32_t type = op[1], result = op[2], glsl = op[3], x = op[5], y = op[6];
    std::optional<FloatShape> shape = float_shape(scan, type);
    if (!shape || at < scan.first_function) continue;
    std::vector<std::uint32_t>& out = replacements[at];
    if (std::optional<std::uint32_t> n = multiplied_exponent(scan, y)) {
      emit_multiplied(writer, out, type, result, x, *n);
    } else {
      emit_general(writer, out, type, result, glsl, x, y, declarations.support(type, *shape));
    }
    ++rewrite.rewritten;
  }
  if (writer.bound() != scan.bound && writer.bound() > kMaxIdBound) {
    return make_error(ErrorCode::unsupported, "SPIR-V: defining its ", rewrite.rewritten,
                      " Pow instructions needs ids up to ", writer.bound(), ", past SPIR-V's limit of ", kMaxIdBound);
  }
  if (rewrite.rewritten == 0) return rewrite;
  rewrite.words.reserve(words.size() + declarations.globals.size() + replacements.size() * 64);
  rewrite.words.assign(words.begin(), words.begin() + 5);
  rewrite.words[3] = static_cast<std::uint32_t>(writer.bound());
  for (std::size_t i = 5; i < words.size();) {
    const std::uint32_t count = words[i] >> 16;
    if (i == scan.first_function) {
      rewrite.words.insert(rewrite.words.end(), declarations.globals.begin(), declarations.globals.end());
    }
    if (auto replaced = replacements.find(i); replaced != replacements.end()) {
      rewrite.words.insert(rewrite.words.end(), replaced->second.begin(), replaced->second.end());
    } else {
      rewrite.words.insert(rewrite.words.end(), words.begin() + static_cast<std::ptrdiff_t>(i),
                           words.begin() + static_cast<std::ptrdiff_t>(i + count));
    }
    i += count;
  }
  return rewrite;
}

} // namespace pow_rewrite

Result<SpirvPowRewrite> define_pow(std::span<const std::uint32_t> words) noexcept {
  return pow_rewrite::rewrite_pows(words);
}

} // namespace devrt::vulkan
