// SPDX-License-Identifier: Apache-2.0
// Memory scopes: TVM's names, its texture flattening rule, and a device's limits per scope.
#include "core/memory/memory_scope.hpp"

#include <devrt/backend/registry.hpp>

namespace devrt {
namespace {

constexpr std::string_view kScopeNames[kMemoryScopeCount] = {
    "global", "global.texture", "global.texture-nhwc", "global.texture-weight", "global.vtcm",
};

// "[2, 3, 4]" in messages.
detail::ShapeText shape_text(std::span<const std::int64_t> shape) noexcept { return {shape.data(), shape.size()}; }

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

// How many axes a texture of `scope` needs: TVM's flattening splits at a separator that must lie
// before the last axis.
std::size_t min_texture_rank(MemoryScope scope) noexcept { return scope == MemoryScope::texture_nhwc ? 3 : 2; }

// The checks every texture form shares: a texture scope, enough axes, no negative axis; the 2-D
// form (`rgba`) also wants 4 channels last and no empty axis.
Status check_texture_shape(const char* call, MemoryScope scope, std::span<const std::int64_t> shape,
                           bool rgba) noexcept {
  if (!is_texture_scope(scope)) {
    return make_error(ErrorCode::invalid_argument, call, ": '", to_string(scope), "' is not a texture scope");
  }
  const std::size_t min_rank = min_texture_rank(scope);
  if (shape.size() < min_rank) {
    return make_error(ErrorCode::invalid_argument, call, ": shape ", shape_text(shape), " in '", to_string(scope),
                      "' needs at least ", min_rank, " axes (the last holds a texel's channels)");
  }
  if (rgba && shape.back() != kTextureChannels) {
    return make_error(ErrorCode::invalid_argument, call, ": shape ", shape_text(shape), " in '", to_string(scope),
                      "' must end in an axis of 4 (a texel's RGBA channels), not ", shape.back());
  }
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0 || (rgba && shape[i] == 0)) {
      return make_error(ErrorCode::invalid_argument, call, ": shape ", shape_text(shape), " in '", to_string(scope),
                        "': axis ", i, " is ", shape[i],
                        rgba ? " (a texture has no empty rows)" : " (an axis is never negative)");
    }
  }
  return Status();
}

// The product of shape[first, last) (axes of at least 0), multiplied in order as TVM does, or
// out_of_range past INT64_MAX.
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

bool is_channel_type(DataType type) noexcept {
  const bool integer = (type.code == DataTypeCode::signed_int || type.code == DataTypeCode::unsigned_int) &&
                       (type.bits == 8 || type.bits == 16 || type.bits == 32);
  const bool floating = type.code == DataTypeCode::floating && (type.bits == 16 || type.bits == 32);
  return type.lanes == 1 && (integer || floating);
}

} // namespace

std::string_view to_string(TextureLayout layout) noexcept {
  switch (layout) {
  case TextureLayout::image_array: return "image_array";
  case TextureLayout::image2d: return "image2d";
  }
  return "unknown texture layout";
}

Result<TextureLayout> parse_texture_layout(std::string_view name) noexcept {
  if (name.empty() || name == "image_array") return TextureLayout::image_array;
  if (name == "image2d") return TextureLayout::image2d;
  return make_error(ErrorCode::invalid_argument, "unknown texture layout '", name,
                    "' (image_array: TVM >= 0.23, the default; image2d: TVM <= 0.22)");
}

Result<TextureExtent> texture_extent(MemoryScope scope, std::span<const std::int64_t> shape) noexcept {
  DEVRT_RETURN_IF_ERROR(check_texture_shape("texture_extent", scope, shape, true));
  // TVM 0.22's DefaultTextureLayoutSeparator: texture-nhwc of rank 3 split after its first axis.
  const std::size_t separator = scope == MemoryScope::texture_weight                      ? 1
                                : scope == MemoryScope::texture_nhwc && shape.size() == 3 ? 1
                                : scope == MemoryScope::texture_nhwc                      ? 2
                                                                                          : shape.size() - 2;
  DEVRT_ASSIGN_OR_RETURN(std::uint64_t height, texture_side("texture_extent", scope, shape, 0, separator, "height"));
  DEVRT_ASSIGN_OR_RETURN(std::uint64_t width,
                         texture_side("texture_extent", scope, shape, separator, shape.size() - 1, "width"));
  return TextureExtent{width, height, 1};
}

Result<TextureExtent> texture_array_extent(MemoryScope scope, std::span<const std::int64_t> shape) noexcept {
  constexpr const char* kCall = "texture_array_extent";
  DEVRT_RETURN_IF_ERROR(check_texture_shape(kCall, scope, shape, false));
  // TVM main's DefaultTextureLayoutSeparator and ApplyTexture2DFlattening: of the axes before the
  // pack, those before separator - 1 make the layers, the one at separator - 1 the height, the rest
  // the width. A separator of 0 (global.texture of rank 2) puts every axis in the layers.
  const std::size_t rank = shape.size();
  const std::size_t separator = scope == MemoryScope::texture_weight ? 1
                                : scope == MemoryScope::texture_nhwc ? 2
                                                                     : rank - 2;
  const std::size_t layer_end = separator == 0 ? rank - 1 : separator - 1;
  const std::size_t height_end = separator == 0 ? rank - 1 : separator;
  DEVRT_ASSIGN_OR_RETURN(std::uint64_t layers, texture_side(kCall, scope, shape, 0, layer_end, "layer count"));
  DEVRT_ASSIGN_OR_RETURN(std::uint64_t height, texture_side(kCall, scope, shape, layer_end, height_end, "height"));
  DEVRT_ASSIGN_OR_RETURN(std::uint64_t width, texture_side(kCall, scope, shape, height_end, rank - 1, "width"));
  return TextureExtent{width, height, layers};
}

Result<DataType> texel_channel_type(DataType element, std::int64_t pack) noexcept {
  if (element.lanes == 1 && pack == kTextureChannels && is_channel_type(element)) return element;
  std::int64_t bits = 0;
  if (element.lanes == 1 && pack > 0 && !__builtin_mul_overflow(pack, std::int64_t{element.bits}, &bits)) {
    if (bits == 128) return DataType::float32();
    if (bits == 64) return DataType{DataTypeCode::floating, 16, 1};
  }
  return make_error(ErrorCode::invalid_argument, "a pack of ", pack, " ", element,
                    " makes no texel: a texel holds 4 channels of int8/16/32, uint8/16/32 or float16/32, or a pack "
                    "of 64 bits (RGBA float16) or 128 bits (RGBA float32)");
}

Status detail::check_texture_fits(const ScopeLimits& limits, DataType dtype, TextureExtent extent) noexcept {
  if (!is_channel_type(dtype)) {
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

Result<detail::TexturePlacement> detail::place_texture(const ScopeLimits& limits, DataType dtype,
                                                       std::span<const std::int64_t> shape,
                                                       TextureLayout layout) noexcept {
  if (layout == TextureLayout::image2d) {
    DEVRT_ASSIGN_OR_RETURN(TextureExtent flat, texture_extent(limits.scope, shape));
    DEVRT_RETURN_IF_ERROR(check_texture_fits(limits, dtype, flat));
    return TexturePlacement{flat, dtype, false};
  }
  if (layout != TextureLayout::image_array) {
    return make_error(ErrorCode::invalid_argument, "texture layout ", static_cast<std::int32_t>(layout),
                      " does not exist (image_array 0, image2d 1)");
  }
  DEVRT_ASSIGN_OR_RETURN(TextureExtent extent, texture_array_extent(limits.scope, shape));
  if (extent.width == 0 || extent.height == 0 || extent.layers == 0 || shape.back() == 0) {
    return make_error(ErrorCode::invalid_argument, "shape ", shape_text(shape), " in '", to_string(limits.scope),
                      "' is an empty texture (", extent.width, " x ", extent.height, " x ", extent.layers,
                      " texels of ", shape.back(), " elements): an image has no empty side");
  }
  Result<DataType> channel = texel_channel_type(dtype, shape.back());
  if (!channel.ok()) {
    return make_error(ErrorCode::invalid_argument, "shape ", shape_text(shape), " in '", to_string(limits.scope),
                      "': ", channel.status().message());
  }
  if (limits.max_layers == 0) {
    return make_error(ErrorCode::unsupported, "'", to_string(limits.scope),
                      "': this device has no image arrays (TVM >= 0.23's layout); TextureLayout::image2d makes the "
                      "2-D images of TVM <= 0.22");
  }
  Status fits = check_texture_fits(limits, *channel, extent);
  if (!fits.ok() && *channel != dtype) {
    return make_error(fits.code(), fits.message(), " (texels of 4 ", *channel, " channels, each a pack of ",
                      shape.back(), " ", dtype, ")");
  }
  DEVRT_RETURN_IF_ERROR(fits);
  return TexturePlacement{extent, *channel, true};
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
