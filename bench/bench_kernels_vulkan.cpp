// SPDX-License-Identifier: Apache-2.0
// bench-kernels' raw Vulkan side: what a hand-written Vulkan program does for each benchmark,
// through the same dlopened entry points devrt's backend uses.
#include "bench_kernels.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "backends/vulkan/vulkan_api.hpp"
#include "support/dynamic_library.hpp"

namespace bench_kernels {
namespace {

// ---- Vulkan, raw: what a hand-written compute program does ---------------------------------------

struct VulkanLoader {
  devrt::detail::DynamicLibrary library;
  devrt::vulkan::GlobalApi api;
  VkInstance instance = VK_NULL_HANDLE;
  std::string error;
};

VulkanLoader& vulkan_loader() {
  static VulkanLoader* loader = [] {
    auto* l = new VulkanLoader();
    if (devrt::Status opened = l->library.open(devrt::vulkan::kLoader); !opened.ok()) {
      l->error = opened.message();
      return l;
    }
    if (!l->library.resolve("vkGetInstanceProcAddr", l->api.vkGetInstanceProcAddr)) {
      if (l->error.empty()) l->error = "no vkGetInstanceProcAddr";
      return l;
    }
    auto gipa = l->api.vkGetInstanceProcAddr;
    l->api.vkCreateInstance = reinterpret_cast<PFN_vkCreateInstance>(gipa(nullptr, "vkCreateInstance"));
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo create{};
    create.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    create.pApplicationInfo = &app;
    if (l->api.vkCreateInstance(&create, nullptr, &l->instance) != VK_SUCCESS) {
      l->error = "vkCreateInstance failed";
      return l;
    }
#define DEVRT_BENCH_INSTANCE(name) l->api.name = reinterpret_cast<PFN_##name>(gipa(l->instance, #name));
    DEVRT_VULKAN_INSTANCE_SYMBOLS(DEVRT_BENCH_INSTANCE)
#undef DEVRT_BENCH_INSTANCE
    return l;
  }();
  return *loader;
}

class RawVulkan final : public RawDevice {
public:
  // Opens the physical device called `name`.
  explicit RawVulkan(const std::string& name) : api_(vulkan_loader().api) {
    if (!vulkan_loader().error.empty()) {
      error = "raw Vulkan: " + vulkan_loader().error;
      return;
    }
    VkInstance instance = vulkan_loader().instance;
    std::uint32_t count = 0;
    api_.vkEnumeratePhysicalDevices(instance, &count, nullptr);
    std::vector<VkPhysicalDevice> physical(count);
    api_.vkEnumeratePhysicalDevices(instance, &count, physical.data());
    VkPhysicalDeviceProperties properties{};
    for (VkPhysicalDevice p : physical) {
      api_.vkGetPhysicalDeviceProperties(p, &properties);
      if (name == properties.deviceName) {
        physical_ = p;
        break;
      }
    }
    if (physical_ == VK_NULL_HANDLE) {
      error = "raw Vulkan found no device named '" + name + "'";
      return;
    }
    gpu = properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ||
          properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
    api_.vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);
    if (!open_device() || !create_pipeline()) return;
    launch_buffer_ = make_buffer(kLaunchBufferBytes, device_local_type(), nullptr);
    if (set_ == VK_NULL_HANDLE) return;
    VkDescriptorBufferInfo info{launch_buffer_.buffer, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet write{};
    write.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    write.dstSet = set_;
    write.descriptorCount = 1;
    write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    write.pBufferInfo = &info;
    dev_.vkUpdateDescriptorSets(device_, 1, &write, 0, nullptr);
  }

  // Two timestamps written into one command buffer (after a reset of their queries), submitted and
  // waited for, read with vkGetQueryPoolResults.
  void timed_pair(benchmark::State& state) override {
    VkQueryPoolCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = 2;
    VkQueryPool pool = VK_NULL_HANDLE;
    if (dev_.vkCreateQueryPool(device_, &info, nullptr, &pool) != VK_SUCCESS) {
      state.SkipWithError("raw Vulkan: vkCreateQueryPool failed");
      return;
    }
    for (auto _ : state) {
      dev_.vkResetCommandBuffer(commands_, 0);
      VkCommandBufferBeginInfo begin{};
      begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
      dev_.vkBeginCommandBuffer(commands_, &begin);
      dev_.vkCmdResetQueryPool(commands_, pool, 0, 2);
      dev_.vkCmdWriteTimestamp(commands_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 0);
      dev_.vkCmdWriteTimestamp(commands_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 1);
      dev_.vkEndCommandBuffer(commands_);
      submit_and_wait();
      std::uint64_t ticks[2] = {0, 0};
      dev_.vkGetQueryPoolResults(device_, pool, 0, 2, sizeof ticks, ticks, sizeof ticks[0], VK_QUERY_RESULT_64_BIT);
      benchmark::DoNotOptimize(ticks[1] - ticks[0]);
    }
    dev_.vkDestroyQueryPool(device_, pool, nullptr);
  }

  void launch_sync(benchmark::State& state) override {
    for (auto _ : state) {
      dev_.vkResetCommandBuffer(commands_, 0);
      record_dispatches(1);
      submit_and_wait();
    }
  }
  // Recorded once (a command buffer without ONE_TIME_SUBMIT), submitted and waited for each time.
  void graph_replay(benchmark::State& state) override {
    dev_.vkResetCommandBuffer(commands_, 0);
    record_dispatches(kGraphLaunches, kGraphElements / kBlock, static_cast<std::int32_t>(kGraphElements));
    for (auto _ : state) submit_and_wait();
    state.SetItemsProcessed(state.iterations() * kGraphLaunches);
  }
  void launch_batch(benchmark::State& state) override {
    for (auto _ : state) {
      dev_.vkResetCommandBuffer(commands_, 0);
      record_dispatches(kBatch);
      submit_and_wait();
    }
    state.SetItemsProcessed(state.iterations() * kBatch);
  }
  void alloc_free(benchmark::State& state) override {
    for (auto _ : state) {
      Buffer b = make_buffer(static_cast<VkDeviceSize>(state.range(0)), device_local_type(), nullptr);
      destroy(b);
    }
  }
  // Host <-> a device-local buffer. On unified memory (every heap device-local, a cached
  // host-visible device type) the buffer is mapped and the copy is a memcpy; on a discrete GPU the
  // bytes go through a host-visible staging buffer (host-cached for reads) and one vkCmdCopyBuffer,
  // submitted and waited for.
  void copy(benchmark::State& state, bool write) override {
    auto n = static_cast<VkDeviceSize>(state.range(0));
    std::vector<unsigned char> host(n, 1);
    const bool unified = unified_memory();
    void* mapped = nullptr;
    Buffer device = make_buffer(n, device_local_type(), unified ? &mapped : nullptr);
    void* staging_mapped = nullptr;
    Buffer staging{};
    if (!unified) staging = make_buffer(n, host_type(!write), &staging_mapped);
    for (auto _ : state) {
      if (unified) {
        if (write) {
          std::memcpy(mapped, host.data(), n);
        } else {
          std::memcpy(host.data(), mapped, n);
        }
      } else {
        if (write) std::memcpy(staging_mapped, host.data(), n);
        dev_.vkResetCommandBuffer(commands_, 0);
        VkCommandBufferBeginInfo begin{};
        begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
        dev_.vkBeginCommandBuffer(commands_, &begin);
        VkBufferCopy region{0, 0, n};
        dev_.vkCmdCopyBuffer(commands_, write ? staging.buffer : device.buffer, write ? device.buffer : staging.buffer,
                             1, &region);
        if (!write) {
          VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_TRANSFER_WRITE_BIT,
                                  VK_ACCESS_HOST_READ_BIT};
          dev_.vkCmdPipelineBarrier(commands_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                                    &to_host, 0, nullptr, 0, nullptr);
        }
        dev_.vkEndCommandBuffer(commands_);
        submit_and_wait();
        if (!write) std::memcpy(host.data(), staging_mapped, n);
      }
      benchmark::ClobberMemory();
    }
    destroy(device);
    if (!unified) destroy(staging);
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(n));
  }
  // Host <-> a device-local R32G32B32A32_SFLOAT image (optimal tiling, layout GENERAL) of
  // kTextureWidth texels per row: through a host-visible staging buffer and one
  // vkCmdCopyBufferToImage / vkCmdCopyImageToBuffer after a barrier, submitted and waited for.
  void texture_copy(benchmark::State& state, bool write) override {
    auto n = static_cast<VkDeviceSize>(state.range(0));
    std::vector<unsigned char> host(n, 1);
    VkImageCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO;
    info.imageType = VK_IMAGE_TYPE_2D;
    info.format = VK_FORMAT_R32G32B32A32_SFLOAT;
    info.extent = {static_cast<std::uint32_t>(kTextureWidth), static_cast<std::uint32_t>(n / kTextureRowBytes), 1};
    info.mipLevels = 1;
    info.arrayLayers = 1;
    info.samples = VK_SAMPLE_COUNT_1_BIT;
    info.tiling = VK_IMAGE_TILING_OPTIMAL;
    info.usage = VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    VkImage image = VK_NULL_HANDLE;
    if (dev_.vkCreateImage(device_, &info, nullptr, &image) != VK_SUCCESS) {
      return state.SkipWithError("raw vkCreateImage failed");
    }
    VkMemoryRequirements needs{};
    dev_.vkGetImageMemoryRequirements(device_, image, &needs);
    VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, nullptr, needs.size, device_local_type()};
    VkDeviceMemory memory = VK_NULL_HANDLE;
    dev_.vkAllocateMemory(device_, &allocate, nullptr, &memory);
    dev_.vkBindImageMemory(device_, image, memory, 0);
    void* staging_mapped = nullptr;
    Buffer staging = make_buffer(n, host_type(!write), &staging_mapped);
    record_image_transfer(image, info.extent, VK_IMAGE_LAYOUT_UNDEFINED, nullptr, false);
    submit_and_wait();
    for (auto _ : state) {
      if (write) std::memcpy(staging_mapped, host.data(), n);
      record_image_transfer(image, info.extent, VK_IMAGE_LAYOUT_GENERAL, &staging, write);
      submit_and_wait();
      if (!write) std::memcpy(host.data(), staging_mapped, n);
      benchmark::ClobberMemory();
    }
    destroy(staging);
    dev_.vkDestroyImage(device_, image, nullptr);
    dev_.vkFreeMemory(device_, memory, nullptr);
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(n));
  }

private:
  struct Buffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
  };

  bool all_heaps_device_local() const {
    for (std::uint32_t i = 0; i < memory_.memoryHeapCount; ++i) {
      if ((memory_.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) == 0) return false;
    }
    return true;
  }
  bool unified_memory() const {
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    return all_heaps_device_local() && (memory_.memoryTypes[device_local_type()].propertyFlags & want) == want;
  }
  // Device-local memory outside any host-visible window where there is such a type (on unified
  // memory: a host-cached one).
  std::uint32_t device_local_type() const {
    const bool unified = all_heaps_device_local();
    std::uint32_t fallback = 0;
    for (std::uint32_t i = memory_.memoryTypeCount; i-- > 0;) {
      VkMemoryPropertyFlags flags = memory_.memoryTypes[i].propertyFlags;
      if ((flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) == 0) continue;
      fallback = i;
      if (!unified && (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) == 0) return i;
      if (unified && (flags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) != 0) return i;
    }
    return fallback;
  }
  // Host-visible system memory: host-cached for reads, any coherent type for writes.
  std::uint32_t host_type(bool cached) const {
    std::uint32_t fallback = 0;
    for (std::uint32_t i = memory_.memoryTypeCount; i-- > 0;) {
      VkMemoryPropertyFlags flags = memory_.memoryTypes[i].propertyFlags;
      if ((flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) == 0) continue;
      fallback = i;
      bool local = (flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) != 0;
      bool is_cached = (flags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) != 0;
      if (!local && (!cached || is_cached)) return i;
    }
    return fallback;
  }

  Buffer make_buffer(VkDeviceSize size, std::uint32_t type, void** mapped) const {
    Buffer b;
    VkBufferCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    info.size = size;
    info.usage =
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    dev_.vkCreateBuffer(device_, &info, nullptr, &b.buffer);
    VkMemoryRequirements needs{};
    dev_.vkGetBufferMemoryRequirements(device_, b.buffer, &needs);
    VkMemoryAllocateInfo allocate{};
    allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    allocate.allocationSize = needs.size;
    allocate.memoryTypeIndex = type;
    dev_.vkAllocateMemory(device_, &allocate, nullptr, &b.memory);
    dev_.vkBindBufferMemory(device_, b.buffer, b.memory, 0);
    if (mapped != nullptr) dev_.vkMapMemory(device_, b.memory, 0, VK_WHOLE_SIZE, 0, mapped);
    return b;
  }
  void destroy(const Buffer& b) const {
    dev_.vkDestroyBuffer(device_, b.buffer, nullptr);
    dev_.vkFreeMemory(device_, b.memory, nullptr);
  }

  bool open_device() {
    std::uint32_t families = 0;
    api_.vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, nullptr);
    std::vector<VkQueueFamilyProperties> family(families);
    api_.vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, family.data());
    for (std::uint32_t i = 0; i < families; ++i) {
      if ((family[i].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0) {
        family_ = i;
        break;
      }
    }
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue{};
    queue.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    queue.queueFamilyIndex = family_;
    queue.queueCount = 1;
    queue.pQueuePriorities = &priority;
    VkDeviceCreateInfo create{};
    create.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    create.queueCreateInfoCount = 1;
    create.pQueueCreateInfos = &queue;
    if (api_.vkCreateDevice(physical_, &create, nullptr, &device_) != VK_SUCCESS) {
      error = "raw Vulkan: vkCreateDevice failed";
      return false;
    }
    auto gdpa = api_.vkGetDeviceProcAddr;
#define DEVRT_BENCH_DEVICE(name) dev_.name = reinterpret_cast<PFN_##name>(gdpa(device_, #name));
    DEVRT_VULKAN_DEVICE_SYMBOLS(DEVRT_BENCH_DEVICE)
#undef DEVRT_BENCH_DEVICE
    vkCreateFence_ = reinterpret_cast<PFN_vkCreateFence>(gdpa(device_, "vkCreateFence"));
    vkWaitForFences_ = reinterpret_cast<PFN_vkWaitForFences>(gdpa(device_, "vkWaitForFences"));
    vkResetFences_ = reinterpret_cast<PFN_vkResetFences>(gdpa(device_, "vkResetFences"));
    dev_.vkGetDeviceQueue(device_, family_, 0, &queue_);
    VkCommandPoolCreateInfo pool{};
    pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool.queueFamilyIndex = family_;
    VkCommandPool command_pool = VK_NULL_HANDLE;
    dev_.vkCreateCommandPool(device_, &pool, nullptr, &command_pool);
    VkCommandBufferAllocateInfo cb{};
    cb.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    cb.commandPool = command_pool;
    cb.commandBufferCount = 1;
    dev_.vkAllocateCommandBuffers(device_, &cb, &commands_);
    VkFenceCreateInfo fence{};
    fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    vkCreateFence_(device_, &fence, nullptr, &fence_);
    return true;
  }

  bool create_pipeline() {
    std::string code = read_file(DEVRT_BENCH_SPIRV_SCALE);
    if (code.empty()) {
      launch_error = std::string("no SPIR-V at '") + DEVRT_BENCH_SPIRV_SCALE + "' (glslc missing at build time?)";
      return true; // copies and allocations still run
    }
    VkShaderModuleCreateInfo shader{};
    shader.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    shader.codeSize = code.size();
    shader.pCode = reinterpret_cast<const std::uint32_t*>(code.data());
    VkShaderModule module = VK_NULL_HANDLE;
    dev_.vkCreateShaderModule(device_, &shader, nullptr, &module);
    VkDescriptorSetLayoutBinding binding{0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo set_layout{};
    set_layout.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    set_layout.bindingCount = 1;
    set_layout.pBindings = &binding;
    VkDescriptorSetLayout dsl = VK_NULL_HANDLE;
    dev_.vkCreateDescriptorSetLayout(device_, &set_layout, nullptr, &dsl);
    VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, 8};
    VkPipelineLayoutCreateInfo layout{};
    layout.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    layout.setLayoutCount = 1;
    layout.pSetLayouts = &dsl;
    layout.pushConstantRangeCount = 1;
    layout.pPushConstantRanges = &push;
    dev_.vkCreatePipelineLayout(device_, &layout, nullptr, &layout_);
    VkSpecializationMapEntry entry{0, 0, 4};
    std::uint32_t block = kBlock;
    VkSpecializationInfo spec{1, &entry, 4, &block};
    VkComputePipelineCreateInfo pipeline{};
    pipeline.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    pipeline.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    pipeline.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pipeline.stage.module = module;
    pipeline.stage.pName = "main";
    pipeline.stage.pSpecializationInfo = &spec;
    pipeline.layout = layout_;
    if (dev_.vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &pipeline, nullptr, &pipeline_) != VK_SUCCESS) {
      launch_error = "raw Vulkan: vkCreateComputePipelines failed";
      return true;
    }
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
    VkDescriptorPoolCreateInfo pool_info{};
    pool_info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    pool_info.maxSets = 1;
    pool_info.poolSizeCount = 1;
    pool_info.pPoolSizes = &size;
    VkDescriptorPool descriptors = VK_NULL_HANDLE;
    dev_.vkCreateDescriptorPool(device_, &pool_info, nullptr, &descriptors);
    VkDescriptorSetAllocateInfo set{};
    set.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    set.descriptorPool = descriptors;
    set.descriptorSetCount = 1;
    set.pSetLayouts = &dsl;
    dev_.vkAllocateDescriptorSets(device_, &set, &set_);
    return true;
  }

  void record_dispatches(int dispatches, std::uint32_t groups = 1, std::int32_t n = 0) const {
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    dev_.vkBeginCommandBuffer(commands_, &begin);
    struct {
      float factor;
      std::int32_t n;
    } push{1.0f, n};
    dev_.vkCmdBindPipeline(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_);
    dev_.vkCmdBindDescriptorSets(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, layout_, 0, 1, &set_, 0, nullptr);
    dev_.vkCmdPushConstants(commands_, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, &push);
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_SHADER_WRITE_BIT,
                            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    for (int i = 0; i < dispatches; ++i) {
      if (i > 0) {
        dev_.vkCmdPipelineBarrier(commands_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                  0, 1, &barrier, 0, nullptr, 0, nullptr);
      }
      dev_.vkCmdDispatch(commands_, groups, 1, 1);
    }
    dev_.vkEndCommandBuffer(commands_);
  }
  // A barrier taking `image` from `from` to GENERAL, then (with `staging`) one whole-image copy.
  void record_image_transfer(VkImage image, VkExtent3D extent, VkImageLayout from, const Buffer* staging,
                             bool write) const {
    dev_.vkResetCommandBuffer(commands_, 0);
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    dev_.vkBeginCommandBuffer(commands_, &begin);
    VkImageMemoryBarrier barrier{};
    barrier.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
    barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.oldLayout = from;
    barrier.newLayout = VK_IMAGE_LAYOUT_GENERAL;
    barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    barrier.image = image;
    barrier.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    dev_.vkCmdPipelineBarrier(commands_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr,
                              0, nullptr, 1, &barrier);
    if (staging != nullptr) {
      VkBufferImageCopy region{};
      region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
      region.imageExtent = extent;
      if (write) {
        dev_.vkCmdCopyBufferToImage(commands_, staging->buffer, image, VK_IMAGE_LAYOUT_GENERAL, 1, &region);
      } else {
        dev_.vkCmdCopyImageToBuffer(commands_, image, VK_IMAGE_LAYOUT_GENERAL, staging->buffer, 1, &region);
        VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_TRANSFER_WRITE_BIT,
                                VK_ACCESS_HOST_READ_BIT};
        dev_.vkCmdPipelineBarrier(commands_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host,
                                  0, nullptr, 0, nullptr);
      }
    }
    dev_.vkEndCommandBuffer(commands_);
  }
  void submit_and_wait() const {
    VkSubmitInfo submit{};
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &commands_;
    dev_.vkQueueSubmit(queue_, 1, &submit, fence_);
    vkWaitForFences_(device_, 1, &fence_, VK_TRUE, UINT64_MAX);
    vkResetFences_(device_, 1, &fence_);
  }

  const devrt::vulkan::GlobalApi& api_;
  devrt::vulkan::DeviceApi dev_;
  PFN_vkCreateFence vkCreateFence_ = nullptr;
  PFN_vkWaitForFences vkWaitForFences_ = nullptr;
  PFN_vkResetFences vkResetFences_ = nullptr;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory_{};
  VkDevice device_ = VK_NULL_HANDLE;
  std::uint32_t family_ = 0;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkDescriptorSet set_ = VK_NULL_HANDLE;
  Buffer launch_buffer_;
};

} // namespace

std::shared_ptr<RawDevice> open_raw_vulkan(const std::string& name) { return std::make_shared<RawVulkan>(name); }

} // namespace bench_kernels
