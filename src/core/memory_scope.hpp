// SPDX-License-Identifier: Apache-2.0
// The texture checks Tensor::empty makes before it asks a backend for a texture (internal).
#ifndef DEVRT_SRC_CORE_MEMORY_SCOPE_HPP
#define DEVRT_SRC_CORE_MEMORY_SCOPE_HPP

#include <devrt/device.hpp>
#include <devrt/dtype.hpp>
#include <devrt/status.hpp>

namespace devrt::detail {

// Whether a texture of `dtype` elements can hold `extent` on a device with `limits`: ok, or
// out_of_range naming the extent and the limit it passes, or unsupported for an element type that
// is no texel channel (int8/16/32, uint8/16/32, float16/32; float16 only with half_texels).
// Thread-safe.
Status check_texture_fits(const ScopeLimits& limits, DataType dtype, TextureExtent extent) noexcept;

} // namespace devrt::detail

#endif // DEVRT_SRC_CORE_MEMORY_SCOPE_HPP
