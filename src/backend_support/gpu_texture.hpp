// SPDX-License-Identifier: Apache-2.0
// Texture layout arithmetic the GPU backends share (internal; a backend helper).
#ifndef DEVRT_SRC_BACKEND_SUPPORT_GPU_TEXTURE_HPP
#define DEVRT_SRC_BACKEND_SUPPORT_GPU_TEXTURE_HPP

#include <devrt/backend/backend_abi.h>
#include <devrt/status.hpp>

#include <cstddef>
#include <cstdint>

namespace devrt::detail {

// An image over `available` bytes of a buffer whose rows the caller places (OpenCL's
// cl_khr_image2d_from_buffer): rows of `desc.width` texels padded to a multiple of
// `pitch_alignment` texels (CL_DEVICE_IMAGE_PITCH_ALIGNMENT; 0 means none), layer after layer.
// invalid_argument naming both sizes when the image needs more than `available`, out_of_range
// when its size overflows. Thread-safe.
struct PitchedImage {
  std::size_t row_pitch = 0;
  std::size_t bytes = 0;
};
Result<PitchedImage> pitched_image(const devrt_texture_desc& desc, std::uint64_t pitch_alignment,
                                   std::size_t available) noexcept;

} // namespace devrt::detail

#endif // DEVRT_SRC_BACKEND_SUPPORT_GPU_TEXTURE_HPP
