// SPDX-License-Identifier: Apache-2.0
// The texture checks Tensor::empty makes before it asks a backend for a texture (internal).
#ifndef DEVRT_SRC_CORE_MEMORY_SCOPE_HPP
#define DEVRT_SRC_CORE_MEMORY_SCOPE_HPP

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

// Where a texture of `shape` goes on a device with `limits`: its 2-D form when that fits, else its
// layered form when that does, else the 2-D form's error (out_of_range, naming both forms' sizes
// when the layered one exists). Thread-safe.
Result<TextureExtent> place_texture(const ScopeLimits& limits, DataType dtype,
                                    std::span<const std::int64_t> shape) noexcept;

} // namespace devrt::detail

#endif // DEVRT_SRC_CORE_MEMORY_SCOPE_HPP
