// SPDX-License-Identifier: Apache-2.0
// The Vulkan backend: every physical device, compute queues, libvulkan.so.1 opened at first use.
//
// The instance is created on first use of the backend and a logical device when devrt opens a
// device (on its first use), destroyed when devrt closes it (devrt::shutdown, or after it the
// destruction of the device's last object). Memory is a VkBuffer with its own bound memory, device-local when the
// device has it; when that memory is host-visible it stays mapped and host copies are memcpy, otherwise copies go
// through host-visible staging buffers. A stream records its work (dispatches, device copies, each
// after a barrier on the previous one) into one command buffer that is submitted only at a
// synchronisation point: stream_synchronize, event_record, a host copy, or 4096 commands.
// Submissions signal the stream's timeline semaphore, which events and stream waits refer to.
// Every member is thread-safe (each stream and the queue have a lock).
#ifndef DEVRT_SRC_BACKENDS_VULKAN_VULKAN_BACKEND_HPP
#define DEVRT_SRC_BACKENDS_VULKAN_VULKAN_BACKEND_HPP

#include <devrt/backend/backend.hpp>
#include <devrt/config.hpp>

namespace devrt::vulkan {

class VulkanBackend {
public:
  static constexpr std::string_view name = "vulkan";
  static constexpr DeviceKind kind = static_cast<DeviceKind>(DEVRT_KIND_VULKAN); // declared in meson.build

  // availability(): unavailable when libvulkan.so.1 cannot be opened, vkCreateInstance fails (no
  // ICD) or there is no physical device; the message says which.
  Status availability() noexcept;
  Result<std::int32_t> device_count() noexcept;
  // open_device makes the logical device (VkDevice, its compute queue, the default stream) and
  // close_device destroys it with everything it still holds, after waiting for its queue.
  Status open_device(BackendDevice& device) noexcept;
  Status close_device(BackendDevice& device) noexcept;
  Result<AttributeValue> get_attribute(const BackendDevice& device, Attribute attribute) noexcept;
  // kind "vulkan" with TVM's Vulkan properties (supports_*, limits, driver, SPIR-V version).
  Result<Target> detect_target(const BackendDevice& device) noexcept;

  // copy(): host->device and device->host copies are synchronisation points of the stream (its earlier
  // work has finished when they return, and so have they), except host->device into memory that
  // is not host-visible, which is staged and recorded. Device->device copies are recorded.
  Result<void*> allocate(const BackendDevice& device, std::size_t nbytes, std::size_t alignment) noexcept;
  Status free(const BackendDevice& device, void* ptr) noexcept;
  Status copy(const CopyDesc& desc) noexcept;
  Result<void*> stream_create(const BackendDevice& device) noexcept;
  Status stream_destroy(const BackendDevice& device, void* stream) noexcept;
  Status stream_synchronize(const BackendDevice& device, void* stream) noexcept;
  // Submits what every stream has recorded and waits for all of it.
  Status device_synchronize(const BackendDevice& device) noexcept;

  Result<void*> event_create(const BackendDevice& device) noexcept;
  Status event_destroy(const BackendDevice& device, void* event) noexcept;
  Status event_record(const BackendDevice& device, void* event, void* stream) noexcept;
  Status event_synchronize(const BackendDevice& device, void* event) noexcept;
  Result<bool> event_query(const BackendDevice& device, void* event) noexcept;
  Status stream_wait_event(const BackendDevice& device, void* stream, void* event) noexcept;
  // Timed events: a timestamp query written into the stream (vulkan_event.cpp).
  Result<void*> event_create_timed(const BackendDevice& device) noexcept;
  Result<std::int64_t> event_elapsed(const BackendDevice& device, void* start, void* end) noexcept;

  // module_load: spirv only. Buffer arguments come first and bind, in order, to the module's storage buffers of
  // set 0 (ascending binding); scalar arguments follow and fill the push-constant block's members.
  // The block size must equal the shader's LocalSize unless it is set by specialisation constants
  // (local_size_x_id ...). Shared memory is declared in the shader: dynamic_shared_bytes must be 0.
  // module_load defines GLSL.std.450 Pow of a negative base (define_pow, vulkan_spirv.hpp) unless
  // DEVRT_VULKAN_SPIRV_REWRITE=0; module_rewrites says how many it rewrote.
  static constexpr ModuleFormat module_formats[] = {ModuleFormat::spirv};
  static constexpr bool checked_launch_arguments = true;
  Result<void*> module_load(const BackendDevice& device, ModuleFormat format, std::span<const std::byte> data,
                            const char* options, BuildLog& log) noexcept;
  Status module_unload(const BackendDevice& device, void* module) noexcept;
  Result<std::uint32_t> module_rewrites(const BackendDevice& device, void* module) noexcept;
  Result<void*> module_function(const BackendDevice& device, void* module, const char* name) noexcept;
  Status launch(const BackendDevice& device, void* function, const LaunchDesc& desc) noexcept;
  // Graphs: one command buffer begun for simultaneous use, recorded once, submitted on the
  // replaying stream's timeline (vulkan_graph.cpp).
  Result<void*> graph_create(const BackendDevice& device, void* stream,
                             std::span<const devrt_graph_node> nodes) noexcept;
  Status graph_launch(const BackendDevice& device, void* graph, void* stream) noexcept;
  Status graph_destroy(const BackendDevice& device, void* graph) noexcept;

  // Textures (global.texture, -nhwc, -weight): 2-D VkImages of VK_FORMAT_R32G32B32A32_* (and the
  // 16- and 8-bit forms) in optimal tiling, kept in VK_IMAGE_LAYOUT_GENERAL, on devices whose
  // format supports storage and transfers. Copies with host memory go through a staging buffer and
  // have finished on return; copies with a buffer of the device are recorded on the stream.
  Result<ScopeLimits> scope_limits(const BackendDevice& device, MemoryScope scope) noexcept;
  Result<void*> texture_allocate(const BackendDevice& device, const devrt_texture_desc& desc) noexcept;
  Status texture_free(const BackendDevice& device, void* texture) noexcept;
  Status texture_copy(const devrt_texture_copy_desc& desc) noexcept;
  // Images over buffers: linear-tiling images bound to the buffer's memory, where the format has
  // linear-tiling storage images of the size.
  Result<void*> texture_view(const BackendDevice& device, devrt_texture_view_desc& desc) noexcept;
};

static_assert(Backend<VulkanBackend> && BackendEvents<VulkanBackend> && BackendTargetDetection<VulkanBackend> &&
              BackendModules<VulkanBackend> && BackendModuleRewrites<VulkanBackend> &&
              BackendTextureViews<VulkanBackend> && BackendGraphs<VulkanBackend>);

} // namespace devrt::vulkan

#endif // DEVRT_SRC_BACKENDS_VULKAN_VULKAN_BACKEND_HPP
