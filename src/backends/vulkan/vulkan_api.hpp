// SPDX-License-Identifier: Apache-2.0
// The Vulkan entry points devrt uses, resolved at run time from libvulkan.so.1 (never linked):
// vkGetInstanceProcAddr by dlsym, then instance- and device-level functions through it.
#ifndef DEVRT_SRC_BACKENDS_VULKAN_VULKAN_API_HPP
#define DEVRT_SRC_BACKENDS_VULKAN_VULKAN_API_HPP

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan.h>

#include <string_view>

#include "support/dynamic_library.hpp"

namespace devrt::vulkan {

#define DEVRT_VULKAN_GLOBAL_SYMBOLS(X)                                                                                 \
  X(vkCreateInstance)                                                                                                  \
  X(vkEnumerateInstanceVersion)

#define DEVRT_VULKAN_INSTANCE_SYMBOLS(X)                                                                               \
  X(vkEnumeratePhysicalDevices)                                                                                        \
  X(vkGetPhysicalDeviceProperties)                                                                                     \
  X(vkGetPhysicalDeviceProperties2)                                                                                    \
  X(vkGetPhysicalDeviceFeatures2)                                                                                      \
  X(vkGetPhysicalDeviceMemoryProperties)                                                                               \
  X(vkGetPhysicalDeviceFormatProperties)                                                                               \
  X(vkGetPhysicalDeviceImageFormatProperties)                                                                          \
  X(vkGetPhysicalDeviceQueueFamilyProperties)                                                                          \
  X(vkEnumerateDeviceExtensionProperties)                                                                              \
  X(vkCreateDevice)                                                                                                    \
  X(vkDestroyDevice)                                                                                                   \
  X(vkGetDeviceProcAddr)

#define DEVRT_VULKAN_DEVICE_SYMBOLS(X)                                                                                 \
  X(vkGetDeviceQueue)                                                                                                  \
  X(vkDeviceWaitIdle)                                                                                                  \
  X(vkQueueWaitIdle)                                                                                                   \
  X(vkQueueSubmit)                                                                                                     \
  X(vkCreateBuffer)                                                                                                    \
  X(vkDestroyBuffer)                                                                                                   \
  X(vkGetBufferMemoryRequirements)                                                                                     \
  X(vkAllocateMemory)                                                                                                  \
  X(vkFreeMemory)                                                                                                      \
  X(vkBindBufferMemory)                                                                                                \
  X(vkCreateImage)                                                                                                     \
  X(vkDestroyImage)                                                                                                    \
  X(vkGetImageMemoryRequirements)                                                                                      \
  X(vkBindImageMemory)                                                                                                 \
  X(vkGetImageSubresourceLayout)                                                                                       \
  X(vkCmdCopyBufferToImage)                                                                                            \
  X(vkCmdCopyImageToBuffer)                                                                                            \
  X(vkMapMemory)                                                                                                       \
  X(vkFlushMappedMemoryRanges)                                                                                         \
  X(vkInvalidateMappedMemoryRanges)                                                                                    \
  X(vkCreateCommandPool)                                                                                               \
  X(vkDestroyCommandPool)                                                                                              \
  X(vkAllocateCommandBuffers)                                                                                          \
  X(vkResetCommandBuffer)                                                                                              \
  X(vkBeginCommandBuffer)                                                                                              \
  X(vkEndCommandBuffer)                                                                                                \
  X(vkCmdCopyBuffer)                                                                                                   \
  X(vkCmdUpdateBuffer)                                                                                                 \
  X(vkCmdPipelineBarrier)                                                                                              \
  X(vkCmdBindPipeline)                                                                                                 \
  X(vkCmdBindDescriptorSets)                                                                                           \
  X(vkCmdPushConstants)                                                                                                \
  X(vkCmdDispatch)                                                                                                     \
  X(vkCreateShaderModule)                                                                                              \
  X(vkDestroyShaderModule)                                                                                             \
  X(vkCreateDescriptorSetLayout)                                                                                       \
  X(vkDestroyDescriptorSetLayout)                                                                                      \
  X(vkCreatePipelineLayout)                                                                                            \
  X(vkDestroyPipelineLayout)                                                                                           \
  X(vkCreateComputePipelines)                                                                                          \
  X(vkDestroyPipeline)                                                                                                 \
  X(vkCreateDescriptorPool)                                                                                            \
  X(vkDestroyDescriptorPool)                                                                                           \
  X(vkResetDescriptorPool)                                                                                             \
  X(vkAllocateDescriptorSets)                                                                                          \
  X(vkUpdateDescriptorSets)                                                                                            \
  X(vkCreateSemaphore)                                                                                                 \
  X(vkDestroySemaphore)                                                                                                \
  X(vkCreateQueryPool)                                                                                                 \
  X(vkDestroyQueryPool)                                                                                                \
  X(vkCmdResetQueryPool)                                                                                               \
  X(vkCmdWriteTimestamp)                                                                                               \
  X(vkGetQueryPoolResults)

// Device functions outside DEVRT_VULKAN_DEVICE_SYMBOLS: Vulkan 1.2's timeline waits and
// VK_KHR_push_descriptor's, where the device has them.
#define DEVRT_VULKAN_DEVICE_EXTRA_SYMBOLS(X)                                                                           \
  X(vkWaitSemaphores)                                                                                                  \
  X(vkGetSemaphoreCounterValue)                                                                                        \
  X(vkCmdPushDescriptorSetKHR)

struct GlobalApi {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
#define DEVRT_VULKAN_SLOT(name) PFN_##name name = nullptr;
  DEVRT_VULKAN_GLOBAL_SYMBOLS(DEVRT_VULKAN_SLOT)
  DEVRT_VULKAN_INSTANCE_SYMBOLS(DEVRT_VULKAN_SLOT)
};

struct DeviceApi {
  DEVRT_VULKAN_DEVICE_SYMBOLS(DEVRT_VULKAN_SLOT)
  // Core in Vulkan 1.2, else from VK_KHR_timeline_semaphore (same signatures).
  PFN_vkWaitSemaphores vkWaitSemaphores = nullptr;
  PFN_vkGetSemaphoreCounterValue vkGetSemaphoreCounterValue = nullptr;
  // VK_KHR_push_descriptor, where the device has it and devrt enabled it.
  PFN_vkCmdPushDescriptorSetKHR vkCmdPushDescriptorSetKHR = nullptr;
#undef DEVRT_VULKAN_SLOT
};

// "VK_ERROR_OUT_OF_DEVICE_MEMORY" and the like; a generic text for unlisted codes. Thread-safe.
std::string_view result_name(VkResult result) noexcept;

// The library the backend opens, and the raw side of its benchmarks too (support/dynamic_library.hpp).
inline constexpr const char* kLoaderNames[] = {"libvulkan.so.1", "libvulkan.so"};
inline constexpr detail::VendorLibrary kLoader{"Vulkan loader", kLoaderNames, "DEVRT_VULKAN_LIBRARY",
                                               "install the Vulkan loader (Debian: apt-get install libvulkan1)"};

} // namespace devrt::vulkan

#endif // DEVRT_SRC_BACKENDS_VULKAN_VULKAN_API_HPP
