// SPDX-License-Identifier: Apache-2.0
// Memory scopes: TVM's names, its texture flattening rule, and a device's limits per scope.
#include "core/memory_scope.hpp"

#include <devrt/registry.hpp>

namespace devrt {
namespace {

constexpr std::string_view kScopeNames[kMemoryScopeCount] = {
    "global", "global.texture", "global.texture-nhwc", "global.texture-weight", "global.vtcm",
};

// "[2, 3, 4]" in messages.
detail::ShapeText shape_text(std::span<const std::int64_t> shape) noexcept { return {shape.data(), shape.size()}; }

// TVM's DefaultTextureLayoutSeparator: the axes before it make the rows.
std::size_t texture_separator(MemoryScope scope, std::size_t rank) noexcept {
  switch (scope) {
  case MemoryScope::texture_weight: return 1;
  case MemoryScope::texture_nhwc: return rank == 3 ? 1 : 2;
  default: return rank - 2;
  }
}

} // namespace

std::string_view to_string(MemoryScope scope) noexcept {
  auto index = static_cast<std::int32_t>(scope);
  return index >= 0 && index < kMemoryScopeCount ? kScopeNames[index] : std::string_view("unknown scope");
}

Result<MemoryScope> parse_memory_scope(std::string_view name) noexcept {
  if (name.empty()) return MemoryScope::global;
  for (std::int32_t i = 0; i < kMemoryScopeCount; ++i) {
    if (kScopeNames[i] == name) return static_cast<MemoryScope>(i);
  }
  return make_error(ErrorCode::invalid_argument, "unknown memory scope '", name,
                    "' (global, global.texture, global.texture-nhwc, global.texture-weight, global.vtcm)");
}

namespace {

// The checks every texture form shares: a texture scope, enough axes, 4 channels last, no empty
// or negative axis.
Status check_texture_shape(const char* call, MemoryScope scope, std::span<const std::int64_t> shape) noexcept {
  if (!is_texture_scope(scope)) {
    return make_error(ErrorCode::invalid_argument, call, ": '", to_string(scope), "' is not a texture scope");
  }
  const std::size_t min_rank = scope == MemoryScope::texture_nhwc ? 3 : 2;
  if (shape.size() < min_rank) {
    return make_error(ErrorCode::invalid_argument, call, ": shape ", shape_text(shape), " in '", to_string(scope),
                      "' needs at least ", min_rank, " axes (the last holds the 4 channels)");
  }
  if (shape.back() != kTextureChannels) {
    return make_error(ErrorCode::invalid_argument, call, ": shape ", shape_text(shape), " in '", to_string(scope),
                      "' must end in an axis of 4 (a texel's RGBA channels), not ", shape.back());
  }
  for (std::size_t i = 0; i + 1 < shape.size(); ++i) {
    if (shape[i] <= 0) {
      return make_error(ErrorCode::invalid_argument, call, ": shape ", shape_text(shape), " in '", to_string(scope),
                        "': axis ", i, " is ", shape[i], " (a texture has no empty rows)");
    }
  }
  return Status();
}

// The product of shape[first, last) (positive axes) as a side, or out_of_range past INT64_MAX.
Result<std::uint64_t> texture_side(const char* call, MemoryScope scope, std::span<const std::int64_t> shape,
                                   std::size_t first, std::size_t last, const char* side) noexcept {
  std::int64_t product = 1;
  for (std::size_t i = first; i < last; ++i) {
    if (__builtin_mul_overflow(product, shape[i], &product)) {
      return make_error(ErrorCode::out_of_range, call, ": shape ", shape_text(shape), " in '", to_string(scope),
                        "': its ", side, " overflows int64");
    }
  }
  return static_cast<std::uint64_t>(product);
}

} // namespace

Result<TextureExtent> texture_extent(MemoryScope scope, std::span<const std::int64_t> shape) noexcept {
  DEVRT_RETURN_IF_ERROR(check_texture_shape("texture_extent", scope, shape));
  const std::size_t separator = texture_separator(scope, shape.size());
  DEVRT_ASSIGN_OR_RETURN(std::uint64_t height, texture_side("texture_extent", scope, shape, 0, separator, "height"));
  DEVRT_ASSIGN_OR_RETURN(std::uint64_t width,
                         texture_side("texture_extent", scope, shape, separator, shape.size() - 1, "width"));
  return TextureExtent{width, height, 1};
}

Result<TextureExtent> texture_array_extent(MemoryScope scope, std::span<const std::int64_t> shape) noexcept {
  constexpr const char* kCall = "texture_array_extent";
  DEVRT_RETURN_IF_ERROR(check_texture_shape(kCall, scope, shape));
  const std::size_t separator = texture_separator(scope, shape.size());
  if (scope == MemoryScope::texture_weight || separator < 2) {
    return make_error(ErrorCode::invalid_argument, kCall, ": shape ", shape_text(shape), " in '", to_string(scope),
                      "' has no layered form (its rows come from one axis)");
  }
  // The rows' last axis is the image height, the product of the axes before it the layers; each
  // side on its own must fit, not the 2-D form's rows (layers times height).
  DEVRT_ASSIGN_OR_RETURN(std::uint64_t layers, texture_side(kCall, scope, shape, 0, separator - 1, "layer count"));
  DEVRT_ASSIGN_OR_RETURN(std::uint64_t width, texture_side(kCall, scope, shape, separator, shape.size() - 1, "width"));
  return TextureExtent{width, static_cast<std::uint64_t>(shape[separator - 1]), layers};
}

Status detail::check_texture_fits(const ScopeLimits& limits, DataType dtype, TextureExtent extent) noexcept {
  const bool integer = (dtype.code == DataTypeCode::signed_int || dtype.code == DataTypeCode::unsigned_int) &&
                       (dtype.bits == 8 || dtype.bits == 16 || dtype.bits == 32);
  const bool floating = dtype.code == DataTypeCode::floating && (dtype.bits == 16 || dtype.bits == 32);
  const bool channel_type = dtype.lanes == 1 && (integer || floating);
  if (!channel_type) {
    return make_error(ErrorCode::unsupported, "'", to_string(limits.scope), "': ", dtype,
                      " is no texel channel type (int8/16/32, uint8/16/32, float16/32)");
  }
  if (dtype.code == DataTypeCode::floating && dtype.bits == 16 && !limits.half_texels) {
    return make_error(ErrorCode::unsupported, "'", to_string(limits.scope), "': this device has no float16 texels");
  }
  if (extent.width > limits.max_width || extent.height > limits.max_height) {
    return make_error(ErrorCode::out_of_range, "'", to_string(limits.scope), "': a texture of ", extent.width, " x ",
                      extent.height, " texels exceeds the device's ", limits.max_width, " x ", limits.max_height);
  }
  if (extent.layers > 1 && extent.layers > limits.max_layers) {
    return make_error(ErrorCode::out_of_range, "'", to_string(limits.scope), "': an image array of ", extent.layers,
                      " layers exceeds the device's ", limits.max_layers);
  }
  return Status();
}

Result<TextureExtent> detail::place_texture(const ScopeLimits& limits, DataType dtype,
                                            std::span<const std::int64_t> shape) noexcept {
  DEVRT_ASSIGN_OR_RETURN(TextureExtent flat, texture_extent(limits.scope, shape));
  Status fits = check_texture_fits(limits, dtype, flat);
  if (fits.ok()) return flat;
  if (fits.code() != ErrorCode::out_of_range) return fits;
  Result<TextureExtent> layered = texture_array_extent(limits.scope, shape);
  if (!layered.ok()) return fits;
  Status layered_fits = check_texture_fits(limits, dtype, *layered);
  if (!layered_fits.ok()) {
    return make_error(ErrorCode::out_of_range, fits.message(), "; as an image array: ", layered_fits.message());
  }
  return *layered;
}

Result<ScopeLimits> scope_limits(Device device, MemoryScope scope) noexcept {
  auto index = static_cast<std::int32_t>(scope);
  if (index < 0 || index >= kMemoryScopeCount) {
    return make_error(ErrorCode::invalid_argument, "scope_limits on ", device, ": memory scope ", index,
                      " does not exist");
  }
  DEVRT_ASSIGN_OR_RETURN(BackendRef backend, backend_for(device));
  return backend.scope_limits(device.id, scope);
}

} // namespace devrt
