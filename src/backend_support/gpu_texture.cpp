// SPDX-License-Identifier: Apache-2.0
// Images over buffers whose rows the caller places: the pitch and the bytes they cover.
#include "backend_support/gpu_texture.hpp"

#include <devrt/device.hpp>

namespace devrt {

Result<detail::PitchedImage> detail::pitched_image(const devrt_texture_desc& desc, std::uint64_t pitch_alignment,
                                                   std::size_t available) noexcept {
  const std::uint64_t texel_bytes = kTextureChannels * (desc.type_bits / 8u);
  const std::uint64_t alignment = pitch_alignment == 0 ? 1 : pitch_alignment;
  std::uint64_t padded = 0, row_pitch = 0, rows = 0, bytes = 0;
  if (__builtin_add_overflow(desc.width, alignment - 1, &padded) ||
      __builtin_mul_overflow(padded / alignment * alignment, texel_bytes, &row_pitch) ||
      __builtin_mul_overflow(desc.height, desc.layers, &rows) || __builtin_mul_overflow(row_pitch, rows, &bytes) ||
      bytes > SIZE_MAX) {
    return make_error(ErrorCode::out_of_range, "an image of ", desc.width, " x ", desc.height, " x ", desc.layers,
                      " texels over a buffer overflows its size");
  }
  if (bytes > available) {
    return make_error(ErrorCode::invalid_argument, "an image of ", desc.width, " x ", desc.height, " x ", desc.layers,
                      " texels with rows of ", row_pitch, " bytes (the device's pitch alignment: ", alignment,
                      " texels) needs ", bytes, " bytes of the buffer, which has ", available);
  }
  return PitchedImage{static_cast<std::size_t>(row_pitch), static_cast<std::size_t>(bytes)};
}

} // namespace devrt
