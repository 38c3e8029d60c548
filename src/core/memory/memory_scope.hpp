// SPDX-License-Identifier: Apache-2.0
// The texture checks Tensor::empty makes before it asks a backend for a texture (internal).
#ifndef DEVRT_SRC_CORE_MEMORY_MEMORY_SCOPE_HPP
#define DEVRT_SRC_CORE_MEMORY_MEMORY_SCOPE_HPP

#include <devrt/device.hpp>
#include <devrt/dtype.hpp>
#include <devrt/status.hpp>

#include <cstdint>
#include <span>

namespace devrt::detail {

// Whether a texture of `dtype` elements can hold `extent` on a device with `limits`: ok, or
// out_of_range naming the extent and the limit it passes, or unsupported for an element type that
// is no texel channel (int8/16/32, uint8/16/32, float16/32; float16 only with half_texels).
// Thread-safe.
Status check_texture_fits(const ScopeLimits& limits, DataType dtype, TextureExtent extent) noexcept;

// How a texture is made on the device: its extent, the type of each of a texel's 4 channels (the
// element type, or for a pack other than 4 the float type of the pack's bits), and whether it is
// an image array (even of one layer) or a 2-D image. A plain value.
struct TexturePlacement {
  TextureExtent extent;
  DataType channel;
  bool image_array = true;
};

// Where a texture of `shape` goes on a device with `limits` in `layout`: image_array by TVM main's
// rule (texture_array_extent, texel_channel_type), image2d by TVM 0.22's (texture_extent). Errors:
// the shape's (invalid_argument, out_of_range), an empty texture (invalid_argument), a device
// without image arrays for image_array (unsupported), then check_texture_fits's. Thread-safe.
Result<TexturePlacement> place_texture(const ScopeLimits& limits, DataType dtype, std::span<const std::int64_t> shape,
                                       TextureLayout layout) noexcept;

} // namespace devrt::detail

#endif // DEVRT_SRC_CORE_MEMORY_MEMORY_SCOPE_HPP
