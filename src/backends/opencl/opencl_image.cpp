// SPDX-License-Identifier: Apache-2.0
// OpenCL textures: TVM's texture scopes as CL_RGBA images (image2d_array_t; image2d_t in TVM
// <= 0.22's layout), copied whole to and from host memory (clEnqueueWriteImage /
// clEnqueueReadImage) or a buffer of the same device (clEnqueueCopyBufferToImage /
// clEnqueueCopyImageToBuffer).
#include "backend_support/gpu_texture.hpp"
#include "opencl_backend.hpp"
#include "opencl_state.hpp"

#include <string_view>

namespace devrt::opencl {
namespace {

// The channel type of a texel channel of DLPack type (code, bits); 0 for none.
cl_channel_type channel_type(std::uint8_t code, std::uint8_t bits) noexcept {
  switch (static_cast<DataTypeCode>(code)) {
  case DataTypeCode::signed_int:
    return bits == 8 ? CL_SIGNED_INT8 : bits == 16 ? CL_SIGNED_INT16 : bits == 32 ? CL_SIGNED_INT32 : 0;
  case DataTypeCode::unsigned_int:
    return bits == 8 ? CL_UNSIGNED_INT8 : bits == 16 ? CL_UNSIGNED_INT16 : bits == 32 ? CL_UNSIGNED_INT32 : 0;
  case DataTypeCode::floating: return bits == 32 ? CL_FLOAT : bits == 16 ? CL_HALF_FLOAT : 0;
  default: return 0;
  }
}

} // namespace

Result<bool> rgba_image_supported(const Api& api, const ClDevice& d, cl_channel_type type) noexcept {
  cl_uint count = 0;
  DEVRT_CL_CHECK(
      "clGetSupportedImageFormats",
      api.clGetSupportedImageFormats(d.context, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 0, nullptr, &count));
  std::vector<cl_image_format> formats(count);
  if (count > 0) {
    DEVRT_CL_CHECK("clGetSupportedImageFormats",
                   api.clGetSupportedImageFormats(d.context, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, count,
                                                  formats.data(), nullptr));
  }
  for (const cl_image_format& format : formats) {
    if (format.image_channel_order == CL_RGBA && format.image_channel_data_type == type) return true;
  }
  return false;
}

Result<ScopeLimits> OpenclBackend::scope_limits(const BackendDevice& device, MemoryScope scope) noexcept {
  const ClDevice& d = state_of(device);
  if (!is_texture_scope(scope)) {
    return make_error(ErrorCode::unsupported, "no memory scope '", to_string(scope), "' on an OpenCL device");
  }
  // Every figure is needed (OpenCL 1.2 devices with images have arrays of at least 2048 layers): a
  // device whose figures could not be read has no textures.
  if (d.image_support != CL_TRUE || d.image2d_max_width == 0 || d.image2d_max_height == 0 ||
      d.image_max_array_size == 0) {
    return make_error(ErrorCode::unsupported, "no memory scope '", to_string(scope), "': '", d.name,
                      "' has no image support (CL_DEVICE_IMAGE_SUPPORT)");
  }
  return ScopeLimits{scope,         d.image2d_max_width,   d.image2d_max_height, d.max_allocation,
                     d.half_texels, d.image_max_array_size};
}

namespace {

// The CL_RGBA format and image description of `desc` (no memory of its own yet).
Result<cl_image_desc> image_of(const devrt_texture_desc& desc, cl_image_format& format) noexcept {
  format = cl_image_format{CL_RGBA, channel_type(desc.type_code, desc.type_bits)};
  if (format.image_channel_data_type == 0) {
    return make_error(ErrorCode::unsupported, "no CL_RGBA channel type for DLPack type code ", desc.type_code, " of ",
                      desc.type_bits, " bits");
  }
  cl_image_desc image{};
  image.image_type = desc.image_array != 0 ? CL_MEM_OBJECT_IMAGE2D_ARRAY : CL_MEM_OBJECT_IMAGE2D;
  image.image_width = static_cast<std::size_t>(desc.width);
  image.image_height = static_cast<std::size_t>(desc.height);
  image.image_array_size = desc.image_array != 0 ? static_cast<std::size_t>(desc.layers) : 0;
  return image;
}

bool lists_extension(std::string_view extensions, std::string_view name) noexcept {
  for (std::size_t at = extensions.find(name); at != std::string_view::npos; at = extensions.find(name, at + 1)) {
    const bool starts = at == 0 || extensions[at - 1] == ' ';
    const bool ends = at + name.size() == extensions.size() || extensions[at + name.size()] == ' ';
    if (starts && ends) return true;
  }
  return false;
}

} // namespace

Result<void*> OpenclBackend::texture_allocate(const BackendDevice& device, const devrt_texture_desc& desc) noexcept {
  const ClDevice& d = state_of(device);
  cl_image_format format{};
  DEVRT_ASSIGN_OR_RETURN(cl_image_desc image, image_of(desc, format));
  cl_int err = CL_SUCCESS;
  cl_mem mem = runtime().api.clCreateImage(d.context, CL_MEM_READ_WRITE, &format, &image, nullptr, &err);
  if (err != CL_SUCCESS) return cl_error("clCreateImage", err);
  return static_cast<void*>(mem);
}

Result<void*> OpenclBackend::texture_view(const BackendDevice& device, devrt_texture_view_desc& view) noexcept {
  const ClDevice& d = state_of(device);
  if (!lists_extension(d.extensions, "cl_khr_image2d_from_buffer")) {
    return make_error(ErrorCode::unsupported, "'", d.name,
                      "' makes no images over buffers (it lists no cl_khr_image2d_from_buffer)");
  }
  if (view.offset != 0) {
    return make_error(ErrorCode::invalid_argument,
                      "an image over an OpenCL buffer starts at the buffer's first byte, "
                      "not at byte ",
                      view.offset, " (clCreateImage takes the whole cl_mem)");
  }
  DEVRT_ASSIGN_OR_RETURN(detail::PitchedImage pitched,
                         detail::pitched_image(*view.texture, d.image_pitch_alignment, view.available));
  cl_image_format format{};
  DEVRT_ASSIGN_OR_RETURN(cl_image_desc image, image_of(*view.texture, format));
  // TVM's AllocCLImage: the rows at the pitch, layer after layer, in the buffer (an image array
  // over a buffer is the driver's to accept: clCreateImage names its refusal).
  image.image_row_pitch = pitched.row_pitch;
  image.image_slice_pitch = view.texture->image_array != 0 ? pitched.row_pitch * image.image_height : 0;
  image.buffer = static_cast<cl_mem>(view.buffer);
  cl_int err = CL_SUCCESS;
  cl_mem mem = runtime().api.clCreateImage(d.context, CL_MEM_READ_WRITE, &format, &image, nullptr, &err);
  if (err != CL_SUCCESS) return cl_error("clCreateImage", err);
  view.row_pitch = pitched.row_pitch;
  view.layer_pitch = pitched.row_pitch * image.image_height;
  view.bytes = pitched.bytes;
  return static_cast<void*>(mem);
}

Status OpenclBackend::texture_free(const BackendDevice&, void* texture) noexcept {
  DEVRT_CL_CHECK("clReleaseMemObject", runtime().api.clReleaseMemObject(static_cast<cl_mem>(texture)));
  return Status();
}

Status OpenclBackend::texture_copy(const devrt_texture_copy_desc& desc) noexcept {
  const Api& api = runtime().api;
  cl_command_queue queue = queue_of(state_of(*desc.device), desc.stream);
  auto* image = static_cast<cl_mem>(desc.texture);
  const std::size_t origin[3] = {0, 0, 0};
  // An image array's region counts its layers in the third extent.
  const std::size_t region[3] = {static_cast<std::size_t>(desc.desc->width),
                                 static_cast<std::size_t>(desc.desc->height),
                                 static_cast<std::size_t>(desc.desc->layers)};
  const bool host = desc.linear_kind != static_cast<std::int32_t>(OpenclBackend::kind);
  if (host) {
    const std::size_t row_pitch = region[0] * 4 * (desc.desc->type_bits / 8);
    const std::size_t slice_pitch = desc.desc->image_array != 0 ? row_pitch * region[1] : 0;
    void* rows = static_cast<std::byte*>(desc.linear) + desc.linear_offset;
    if (desc.to_texture != 0) {
      DEVRT_CL_CHECK("clEnqueueWriteImage", api.clEnqueueWriteImage(queue, image, CL_FALSE, origin, region, row_pitch,
                                                                    slice_pitch, rows, 0, nullptr, nullptr));
    } else {
      DEVRT_CL_CHECK("clEnqueueReadImage", api.clEnqueueReadImage(queue, image, CL_TRUE, origin, region, row_pitch,
                                                                  slice_pitch, rows, 0, nullptr, nullptr));
    }
    return Status();
  }
  auto* buffer = static_cast<cl_mem>(desc.linear);
  if (desc.to_texture != 0) {
    DEVRT_CL_CHECK(
        "clEnqueueCopyBufferToImage",
        api.clEnqueueCopyBufferToImage(queue, buffer, image, desc.linear_offset, origin, region, 0, nullptr, nullptr));
  } else {
    DEVRT_CL_CHECK(
        "clEnqueueCopyImageToBuffer",
        api.clEnqueueCopyImageToBuffer(queue, image, buffer, origin, region, desc.linear_offset, 0, nullptr, nullptr));
  }
  return Status();
}

} // namespace devrt::opencl
