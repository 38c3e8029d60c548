// SPDX-License-Identifier: Apache-2.0
// Vulkan textures: TVM's texture scopes as 2-D storage images of one or more layers (optimal
// tiling, one mip level), kept in VK_IMAGE_LAYOUT_GENERAL from their creation on. Every copy is
// recorded on a stream after a memory barrier that orders it behind the stream's earlier transfers
// and dispatches (an image is not in the buffer-range hazard tracking); copies with host memory go
// through the stream's staging rings in bands of rows (as buffer copies do: no allocation per
// copy), copies with a buffer of the device stay recorded.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>

#include "vulkan_backend.hpp"
#include "vulkan_staging.hpp"
#include "vulkan_state.hpp"

namespace devrt::vulkan {
namespace {

struct TextureState {
  VkImage image = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkExtent3D extent{};
  std::uint32_t layers = 1;
  VkDeviceSize texel_bytes = 0;
  VkDeviceSize bytes() const { return VkDeviceSize{extent.width} * extent.height * layers * texel_bytes; }
};

// The RGBA format of a texel channel of DLPack type (code, bits); VK_FORMAT_UNDEFINED for none.
VkFormat texel_format(std::uint8_t code, std::uint8_t bits) noexcept {
  switch (static_cast<DataTypeCode>(code)) {
  case DataTypeCode::signed_int:
    return bits == 8    ? VK_FORMAT_R8G8B8A8_SINT
           : bits == 16 ? VK_FORMAT_R16G16B16A16_SINT
           : bits == 32 ? VK_FORMAT_R32G32B32A32_SINT
                        : VK_FORMAT_UNDEFINED;
  case DataTypeCode::unsigned_int:
    return bits == 8    ? VK_FORMAT_R8G8B8A8_UINT
           : bits == 16 ? VK_FORMAT_R16G16B16A16_UINT
           : bits == 32 ? VK_FORMAT_R32G32B32A32_UINT
                        : VK_FORMAT_UNDEFINED;
  case DataTypeCode::floating:
    return bits == 16   ? VK_FORMAT_R16G16B16A16_SFLOAT
           : bits == 32 ? VK_FORMAT_R32G32B32A32_SFLOAT
                        : VK_FORMAT_UNDEFINED;
  default: return VK_FORMAT_UNDEFINED;
  }
}

// Whether images of `format` in optimal tiling can be storage images and transfer both ways.
bool format_usable(const DeviceState& d, VkFormat format) noexcept {
  VkFormatProperties properties{};
  runtime().api.vkGetPhysicalDeviceFormatProperties(d.physical, format, &properties);
  constexpr VkFormatFeatureFlags needed =
      VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT | VK_FORMAT_FEATURE_TRANSFER_SRC_BIT | VK_FORMAT_FEATURE_TRANSFER_DST_BIT;
  return (properties.optimalTilingFeatures & needed) == needed;
}

// An image memory barrier of the whole texture from `from` to VK_IMAGE_LAYOUT_GENERAL, after
// everything recorded so far on the stream. Caller holds the stream's lock, with a recording.
void image_barrier(StreamState& s, VkImage image, VkImageLayout from) {
  VkImageMemoryBarrier barrier{};
  barrier.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
  barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT |
                          VK_ACCESS_SHADER_WRITE_BIT;
  barrier.oldLayout = from;
  barrier.newLayout = VK_IMAGE_LAYOUT_GENERAL;
  barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  barrier.image = image;
  barrier.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, VK_REMAINING_ARRAY_LAYERS};
  // The buffers' writes too: a global barrier beside the image's.
  VkMemoryBarrier memory{};
  memory.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  memory.srcAccessMask = barrier.srcAccessMask;
  memory.dstAccessMask = barrier.dstAccessMask;
  constexpr VkPipelineStageFlags stages = VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  s.device->api.vkCmdPipelineBarrier(s.recording, stages, stages, 0, 1, &memory, 0, nullptr, 1, &barrier);
  s.pending_stages = 0;
  s.touched_count = 0;
  s.touched_overflow = false;
}

void destroy_texture(DeviceState& d, TextureState* t) {
  if (t->image != VK_NULL_HANDLE) d.api.vkDestroyImage(d.device, t->image, nullptr);
  if (t->memory != VK_NULL_HANDLE) d.api.vkFreeMemory(d.device, t->memory, nullptr);
  delete t;
}

constexpr VkImageUsageFlags kTextureUsage =
    VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;

// The texture's image, without memory: optimal tiling, or linear (preinitialized: its memory's
// bytes stay) for an image over a buffer.
VkResult create_bare_image(DeviceState& d, VkFormat format, TextureState& t, VkImageTiling tiling) {
  VkImageCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO;
  info.imageType = VK_IMAGE_TYPE_2D;
  info.format = format;
  info.extent = t.extent;
  info.mipLevels = 1;
  info.arrayLayers = t.layers;
  info.samples = VK_SAMPLE_COUNT_1_BIT;
  info.tiling = tiling;
  info.usage = kTextureUsage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  info.initialLayout = tiling == VK_IMAGE_TILING_LINEAR ? VK_IMAGE_LAYOUT_PREINITIALIZED : VK_IMAGE_LAYOUT_UNDEFINED;
  return d.api.vkCreateImage(d.device, &info, nullptr, &t.image);
}

Status create_image(DeviceState& d, VkFormat format, TextureState& t) {
  DEVRT_VK_CHECK("vkCreateImage", create_bare_image(d, format, t, VK_IMAGE_TILING_OPTIMAL));
  VkMemoryRequirements needs{};
  d.api.vkGetImageMemoryRequirements(d.device, t.image, &needs);
  const std::uint32_t type = memory_type_for(d, needs, MemoryUsage::device);
  if (type == kNoMemoryType) {
    return make_error(ErrorCode::unsupported, "no memory type of ", d.properties.deviceName, " fits an image (bits 0x",
                      needs.memoryTypeBits, ")");
  }
  DEVRT_VK_CHECK("vkAllocateMemory", allocate_memory(d, needs, type, t.memory));
  DEVRT_VK_CHECK("vkBindImageMemory", d.api.vkBindImageMemory(d.device, t.image, t.memory, 0));
  return Status();
}

// The regions of a band of the texture against compact rows of a buffer from `offset`: the rows
// [first, last) counted layer after layer, or, when one row is wider than a band, the texels
// [first, last) of row `row`. At most three regions: the end of a layer, whole layers, the start
// of one.
struct Band {
  VkBufferImageCopy regions[3];
  std::uint32_t count = 0;
  VkDeviceSize bytes = 0;
};

Band row_band(const TextureState& t, VkDeviceSize offset, std::uint64_t first, std::uint64_t last) {
  Band band;
  const std::uint64_t height = t.extent.height;
  const VkDeviceSize row_bytes = VkDeviceSize{t.extent.width} * t.texel_bytes;
  for (std::uint64_t row = first; row < last;) {
    const auto layer = static_cast<std::uint32_t>(row / height);
    const auto y = static_cast<std::uint32_t>(row % height);
    std::uint64_t rows = std::min<std::uint64_t>(last - row, height - y);
    std::uint32_t layers = 1;
    if (y == 0 && rows == height) {
      layers = static_cast<std::uint32_t>((last - row) / height);
      rows = std::uint64_t{layers} * height;
    }
    VkBufferImageCopy& region = band.regions[band.count++];
    region = VkBufferImageCopy{};
    region.bufferOffset = offset + (row - first) * row_bytes;
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, layer, layers};
    region.imageOffset = {0, static_cast<std::int32_t>(y), 0};
    region.imageExtent = {t.extent.width, static_cast<std::uint32_t>(rows / layers), 1};
    row += rows;
  }
  band.bytes = (last - first) * row_bytes;
  return band;
}

Band texel_band(const TextureState& t, VkDeviceSize offset, std::uint64_t row, std::uint32_t first,
                std::uint32_t last) {
  Band band;
  VkBufferImageCopy& region = band.regions[band.count++];
  region = VkBufferImageCopy{};
  region.bufferOffset = offset;
  region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, static_cast<std::uint32_t>(row / t.extent.height), 1};
  region.imageOffset = {static_cast<std::int32_t>(first), static_cast<std::int32_t>(row % t.extent.height), 0};
  region.imageExtent = {last - first, 1, 1};
  band.bytes = VkDeviceSize{last - first} * t.texel_bytes;
  return band;
}

// Records one band's copy between the texture and `buffer`, after a barrier. Caller holds the lock.
Status record_image_copy(StreamState& s, const TextureState& t, VkBuffer buffer, const Band& band, bool to_texture) {
  DEVRT_RETURN_IF_ERROR(begin(s));
  image_barrier(s, t.image, VK_IMAGE_LAYOUT_GENERAL);
  // What follows on the stream and touches the buffer's range waits for this copy.
  const VkDeviceSize offset = band.regions[0].bufferOffset;
  const TouchedRange range{buffer, offset, offset + band.bytes};
  order_command(s, VK_PIPELINE_STAGE_TRANSFER_BIT, {&range, 1});
  if (to_texture) {
    s.device->api.vkCmdCopyBufferToImage(s.recording, buffer, t.image, VK_IMAGE_LAYOUT_GENERAL, band.count,
                                         band.regions);
  } else {
    s.device->api.vkCmdCopyImageToBuffer(s.recording, t.image, VK_IMAGE_LAYOUT_GENERAL, buffer, band.count,
                                         band.regions);
  }
  return recorded(s);
}

// The texture cut into bands of at most `chunk` bytes, in the order of its compact bytes: bands of
// whole rows, or pieces of one row where a row is wider than `chunk`. Calls `each(band)` until
// one fails.
template <class Each>
Status for_each_band(const TextureState& t, VkDeviceSize chunk, Each&& each) {
  const std::uint64_t rows = std::uint64_t{t.extent.height} * t.layers;
  const VkDeviceSize row_bytes = VkDeviceSize{t.extent.width} * t.texel_bytes;
  if (row_bytes <= chunk) {
    const std::uint64_t per_band = chunk / row_bytes;
    for (std::uint64_t first = 0; first < rows; first += per_band) {
      DEVRT_RETURN_IF_ERROR(each(row_band(t, 0, first, std::min(rows, first + per_band))));
    }
    return Status();
  }
  const auto per_band = static_cast<std::uint32_t>(chunk / t.texel_bytes);
  for (std::uint64_t row = 0; row < rows; ++row) {
    for (std::uint32_t first = 0; first < t.extent.width; first += per_band) {
      DEVRT_RETURN_IF_ERROR(each(texel_band(t, 0, row, first, std::min(t.extent.width, first + per_band))));
    }
  }
  return Status();
}

// Host rows into the texture through the stream's upload ring, band by band: each band is
// submitted so that the device copies it while the host fills the next; the host's bytes are
// taken when this returns. Caller holds the lock.
Status write_texture(StreamState& s, const TextureState& t, const std::byte* rows) {
  return upload_in_bands(s, rows, t.bytes(), [&](auto&& each) {
    return for_each_band(t, s.device->staging_chunk, [&](const Band& band) {
      return each(band.bytes, [&](VkBuffer staging) { return record_image_copy(s, t, staging, band, true); });
    });
  });
}

// The texture into host rows through the stream's readback ring, complete on return: band i is
// copied by the device while the host copies band i-1 out. Caller holds the lock.
Status read_texture(StreamState& s, const TextureState& t, std::byte* rows) {
  return read_back_in_bands(s, rows, [&](auto&& each) {
    return for_each_band(t, s.device->staging_chunk, [&](const Band& band) {
      return each(band.bytes, [&](VkBuffer staging) { return record_image_copy(s, t, staging, band, false); });
    });
  });
}

// A linear image bound to `buffer`'s memory at view.offset, its first row there (else unsupported),
// rows and layers at the driver's pitches.
Status bind_over(DeviceState& d, VkFormat format, const Allocation& buffer, devrt_texture_view_desc& view,
                 TextureState& t) {
  DEVRT_VK_CHECK("vkCreateImage", create_bare_image(d, format, t, VK_IMAGE_TILING_LINEAR));
  VkMemoryRequirements needs{};
  d.api.vkGetImageMemoryRequirements(d.device, t.image, &needs);
  if (((needs.memoryTypeBits >> buffer.memory_type) & 1u) == 0) {
    return make_error(ErrorCode::unsupported, "a linear image on ", d.properties.deviceName,
                      " cannot use the buffer's memory type ", buffer.memory_type, " (it takes types 0x",
                      needs.memoryTypeBits, ")");
  }
  if (view.offset % needs.alignment != 0) {
    return make_error(ErrorCode::invalid_argument, "a linear image on ", d.properties.deviceName,
                      " starts at a multiple of ", needs.alignment, " bytes, not at byte ", view.offset);
  }
  if (needs.size > view.available) {
    return make_error(ErrorCode::invalid_argument, "the linear image needs ", needs.size,
                      " bytes of the buffer, which has ", view.available, " from byte ", view.offset);
  }
  VkImageSubresource first{VK_IMAGE_ASPECT_COLOR_BIT, 0, 0};
  VkSubresourceLayout layout{};
  d.api.vkGetImageSubresourceLayout(d.device, t.image, &first, &layout);
  if (layout.offset != 0) {
    return make_error(ErrorCode::unsupported, d.properties.deviceName, " starts a linear image's first row at byte ",
                      layout.offset, " of its memory, not at the buffer's byte");
  }
  DEVRT_VK_CHECK("vkBindImageMemory", d.api.vkBindImageMemory(d.device, t.image, buffer.memory, view.offset));
  view.row_pitch = static_cast<std::size_t>(layout.rowPitch);
  view.layer_pitch = static_cast<std::size_t>(t.layers > 1 ? layout.arrayPitch : layout.rowPitch * t.extent.height);
  view.bytes = static_cast<std::size_t>(needs.size);
  return Status();
}

// A texture's record for `desc`, without an image yet; null when out of host memory.
TextureState* new_texture_state(const devrt_texture_desc& desc) {
  auto* t = new (std::nothrow) TextureState();
  if (t == nullptr) return nullptr;
  t->extent = {static_cast<std::uint32_t>(desc.width), static_cast<std::uint32_t>(desc.height), 1};
  t->layers = static_cast<std::uint32_t>(desc.layers);
  t->texel_bytes = VkDeviceSize{4} * (desc.type_bits / 8);
  return t;
}

// A texture whose image `created` made: moved into VK_IMAGE_LAYOUT_GENERAL from `from` once, on the
// default stream, finished before any stream uses it; destroyed when anything failed.
Result<void*> made(DeviceState& d, TextureState& t, Status created, VkImageLayout from) {
  if (created.ok()) {
    StreamState& s = *d.default_stream;
    std::lock_guard<std::mutex> lock(s.mutex);
    created = begin(s);
    if (created.ok()) {
      image_barrier(s, t.image, from);
      created = drain(s);
    }
  }
  if (!created.ok()) {
    // The barrier may have been submitted before a failed wait.
    destroy_when_idle(d, make_retired<TextureState, destroy_texture>(&t));
    return created;
  }
  return static_cast<void*>(&t);
}

} // namespace

Result<ScopeLimits> VulkanBackend::scope_limits(const BackendDevice& device, MemoryScope scope) noexcept {
  DEVRT_VK_DEVICE(d, device);
  if (!is_texture_scope(scope)) {
    return make_error(ErrorCode::unsupported, "no memory scope '", to_string(scope), "' on a Vulkan device");
  }
  if (!format_usable(d, VK_FORMAT_R32G32B32A32_SFLOAT)) {
    return make_error(ErrorCode::unsupported, "no memory scope '", to_string(scope), "': ", d.properties.deviceName,
                      " has no optimal-tiling R32G32B32A32_SFLOAT storage images with transfers");
  }
  const VkDeviceSize heap = d.memory.memoryHeaps[d.memory.memoryTypes[d.plan.device_type].heapIndex].size;
  return ScopeLimits{scope, d.properties.limits.maxImageDimension2D,         d.properties.limits.maxImageDimension2D,
                     heap,  format_usable(d, VK_FORMAT_R16G16B16A16_SFLOAT), d.properties.limits.maxImageArrayLayers};
}

Result<void*> VulkanBackend::texture_allocate(const BackendDevice& device, const devrt_texture_desc& desc) noexcept {
  DEVRT_VK_DEVICE(d, device);
  const VkFormat format = texel_format(desc.type_code, desc.type_bits);
  if (format == VK_FORMAT_UNDEFINED || !format_usable(d, format)) {
    return make_error(ErrorCode::unsupported, "no RGBA storage-image format for DLPack type code ", desc.type_code,
                      " of ", desc.type_bits, " bits on ", d.properties.deviceName);
  }
  TextureState* t = new_texture_state(desc);
  if (t == nullptr) return make_error(ErrorCode::out_of_memory, "no host memory for a texture record");
  return made(d, *t, create_image(d, format, *t), VK_IMAGE_LAYOUT_UNDEFINED);
}

Result<void*> VulkanBackend::texture_view(const BackendDevice& device, devrt_texture_view_desc& view) noexcept {
  DEVRT_VK_DEVICE(d, device);
  const devrt_texture_desc& desc = *view.texture;
  const VkFormat format = texel_format(desc.type_code, desc.type_bits);
  VkImageFormatProperties limits{};
  const VkResult listed =
      format == VK_FORMAT_UNDEFINED
          ? VK_ERROR_FORMAT_NOT_SUPPORTED
          : runtime().api.vkGetPhysicalDeviceImageFormatProperties(d.physical, format, VK_IMAGE_TYPE_2D,
                                                                   VK_IMAGE_TILING_LINEAR, kTextureUsage, 0, &limits);
  if (listed != VK_SUCCESS && listed != VK_ERROR_FORMAT_NOT_SUPPORTED) {
    return device_error(d, "vkGetPhysicalDeviceImageFormatProperties", listed);
  }
  if (listed != VK_SUCCESS || limits.maxExtent.width < desc.width || limits.maxExtent.height < desc.height ||
      limits.maxArrayLayers < desc.layers) {
    return make_error(ErrorCode::unsupported, d.properties.deviceName, " has no linear-tiling storage images of ",
                      desc.width, " x ", desc.height, " x ", desc.layers,
                      " texels of this format (an image over a "
                      "buffer is a linear image bound to the buffer's memory)");
  }
  const auto& buffer = *static_cast<const Allocation*>(view.buffer);
  TextureState* t = new_texture_state(desc);
  if (t == nullptr) return make_error(ErrorCode::out_of_memory, "no host memory for a texture record");
  Status status = bind_over(d, format, buffer, view, *t);
  return made(d, *t, status, VK_IMAGE_LAYOUT_PREINITIALIZED);
}

Status VulkanBackend::texture_free(const BackendDevice& device, void* texture) noexcept {
  // As free(): recorded or submitted work may still use the image, so everything is waited for
  // (the queue too when that failed).
  DeviceState& d = opened_device(device);
  auto* t = static_cast<TextureState*>(texture);
  Status status = device_synchronize(device);
  if (status.ok()) {
    destroy_texture(d, t);
  } else {
    destroy_when_idle(d, make_retired<TextureState, destroy_texture>(t));
  }
  return status;
}

Status VulkanBackend::texture_copy(const devrt_texture_copy_desc& desc) noexcept {
  DEVRT_VK_DEVICE(d, *desc.device);
  const auto& t = *static_cast<const TextureState*>(desc.texture);
  StreamState& s = stream_of(d, desc.stream);
  if (desc.linear_kind == static_cast<std::int32_t>(VulkanBackend::kind)) {
    if (desc.linear_offset % t.texel_bytes != 0) {
      return make_error(ErrorCode::invalid_argument, "a buffer offset of ", desc.linear_offset,
                        " bytes is not a multiple of the texel's ", t.texel_bytes, " bytes");
    }
    std::lock_guard<std::mutex> lock(s.mutex);
    const std::uint64_t rows = std::uint64_t{t.extent.height} * t.layers;
    return record_image_copy(s, t, static_cast<Allocation*>(desc.linear)->buffer,
                             row_band(t, desc.linear_offset, 0, rows), desc.to_texture != 0);
  }
  // Host memory: through the stream's staging rings.
  auto* rows = static_cast<std::byte*>(desc.linear) + desc.linear_offset;
  std::lock_guard<std::mutex> lock(s.mutex);
  return desc.to_texture != 0 ? write_texture(s, t, rows) : read_texture(s, t, rows);
}

} // namespace devrt::vulkan
