// SPDX-License-Identifier: Apache-2.0
#include "vulkan_backend.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "support/environment.hpp"
#include "support/fault_injection.hpp"
#include "support/lazy_runtime.hpp"
#include "vulkan_state.hpp"
#include "vulkan_timing.hpp"

namespace devrt::vulkan {

std::string_view result_name(VkResult result) noexcept {
  switch (result) {
  case VK_SUCCESS: return "VK_SUCCESS";
  case VK_NOT_READY: return "VK_NOT_READY";
  case VK_TIMEOUT: return "VK_TIMEOUT";
  case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
  case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
  case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
  case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
  case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
  case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
  case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
  case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
  case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
  case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
  case VK_ERROR_FRAGMENTED_POOL: return "VK_ERROR_FRAGMENTED_POOL";
  case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
  case VK_ERROR_INVALID_SHADER_NV: return "VK_ERROR_INVALID_SHADER_NV";
  default: return "an unlisted VkResult";
  }
}

Status vk_error(const char* call, VkResult result) {
  ErrorCode code = result == VK_ERROR_OUT_OF_HOST_MEMORY || result == VK_ERROR_OUT_OF_DEVICE_MEMORY
                       ? ErrorCode::out_of_memory
                       : ErrorCode::driver_error;
  return make_error(code, call, " failed: ", result_name(result), " (", static_cast<std::int32_t>(result), ")");
}

namespace {

// Keeps `object` until a wait for the queue succeeds.
void retire(DeviceState& d, Retired object) noexcept {
  std::lock_guard<std::mutex> lock(d.retired_mutex);
  d.retired.push_back(object);
  d.has_retired.store(true, std::memory_order_release);
}

void destroy_semaphore(DeviceState& d, VkSemaphore* semaphore) {
  d.api.vkDestroySemaphore(d.device, *semaphore, nullptr);
  delete semaphore;
}

} // namespace

// Before destroying an object a submission referred to (a semaphore it waited on or signalled,
// the command pool of its command buffer, a pipeline, memory after a failed synchronisation):
// seeing a timeline value reached only says the work is done, not that the driver's queue thread
// has let go of the submission (lavapipe cleans it up afterwards, and crashed touching a semaphore
// destroyed in between). Waiting for the queue to go idle orders the destruction after that
// cleanup. Rare operations only. What was retired before the wait began is covered by it.
bool wait_queue_idle(DeviceState& d) noexcept {
  std::vector<Retired> due;
  if (d.has_retired.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(d.retired_mutex);
    due.swap(d.retired);
    d.has_retired.store(false, std::memory_order_release);
  }
  VkResult result;
  {
    std::lock_guard<std::mutex> lock(d.queue_mutex);
    result = d.api.vkQueueWaitIdle(d.queue);
  }
  if (result == VK_ERROR_DEVICE_LOST) {
    // Nothing is in use on a lost device, but a driver that reports a loss need not have stopped
    // its queue yet: the device-wide wait returns when it has (at once on a device truly gone).
    static_cast<void>(device_error(d, "vkQueueWaitIdle", result));
    static_cast<void>(d.api.vkDeviceWaitIdle(d.device));
  }
  if (result != VK_SUCCESS && result != VK_ERROR_DEVICE_LOST) {
    for (const Retired& object : due) retire(d, object);
    return false;
  }
  for (const Retired& object : due) object.destroy(d, object.object);
  return true;
}

void destroy_when_idle(DeviceState& d, Retired object) noexcept {
  if (wait_queue_idle(d)) {
    object.destroy(d, object.object);
  } else {
    retire(d, object);
  }
}

Timeline::~Timeline() {
  if (semaphore == VK_NULL_HANDLE) return;
  if (wait_queue_idle(*device)) {
    device->api.vkDestroySemaphore(device->device, semaphore, nullptr);
    return;
  }
  auto* kept = new (std::nothrow) VkSemaphore(semaphore);
  if (kept == nullptr) return; // no memory to keep it: left to the driver rather than destroyed in use
  retire(*device, make_retired<VkSemaphore, destroy_semaphore>(kept));
}

namespace {

bool has_extension(const std::vector<VkExtensionProperties>& all, const char* name) {
  return std::any_of(all.begin(), all.end(),
                     [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

Status describe_physical_device(const GlobalApi& api, std::uint32_t instance_version, PhysicalDevice& d) {
  api.vkGetPhysicalDeviceProperties(d.physical, &d.properties);
  api.vkGetPhysicalDeviceMemoryProperties(d.physical, &d.memory);
  // The extension list decides features: a failed query is an error, never "none".
  std::uint32_t count = 0;
  DEVRT_VK_CHECK("vkEnumerateDeviceExtensionProperties",
                 api.vkEnumerateDeviceExtensionProperties(d.physical, nullptr, &count, nullptr));
  std::vector<VkExtensionProperties> extensions(count);
  VkResult listed = api.vkEnumerateDeviceExtensionProperties(d.physical, nullptr, &count, extensions.data());
  if (listed != VK_SUCCESS && listed != VK_INCOMPLETE) return vk_error("vkEnumerateDeviceExtensionProperties", listed);
  extensions.resize(count);
  std::uint32_t version = std::min(d.properties.apiVersion, instance_version);
  d.has_push_descriptor = has_extension(extensions, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  d.has_storage_buffer_class =
      version >= VK_API_VERSION_1_1 || has_extension(extensions, VK_KHR_STORAGE_BUFFER_STORAGE_CLASS_EXTENSION_NAME);
  d.has_driver_properties =
      version >= VK_API_VERSION_1_2 || has_extension(extensions, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
  if (version >= VK_API_VERSION_1_1 && api.vkGetPhysicalDeviceProperties2 != nullptr) {
    VkPhysicalDeviceProperties2 properties{};
    properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    d.subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
    d.driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
    properties.pNext = &d.subgroup;
    if (d.has_driver_properties) d.subgroup.pNext = &d.driver;
    api.vkGetPhysicalDeviceProperties2(d.physical, &properties);
    d.subgroup.pNext = nullptr;
  }
  d.features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  d.features11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  d.features12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  if (version >= VK_API_VERSION_1_2 && api.vkGetPhysicalDeviceFeatures2 != nullptr) {
    d.features.pNext = &d.features11;
    d.features11.pNext = &d.features12;
    api.vkGetPhysicalDeviceFeatures2(d.physical, &d.features);
    d.has_timeline = d.features12.timelineSemaphore == VK_TRUE;
  }
  std::uint32_t families = 0;
  api.vkGetPhysicalDeviceQueueFamilyProperties(d.physical, &families, nullptr);
  std::vector<VkQueueFamilyProperties> family(families);
  api.vkGetPhysicalDeviceQueueFamilyProperties(d.physical, &families, family.data());
  d.compute_family = compute_family_of(family);
  if (d.compute_family != UINT32_MAX) d.timestamp_valid_bits = family[d.compute_family].timestampValidBits;
  return Status();
}

Status find_devices(Runtime& rt);

Status discover(Runtime& rt) {
  DEVRT_RETURN_IF_ERROR(rt.library.open(kLoader));
  if (!rt.library.resolve("vkGetInstanceProcAddr", rt.api.vkGetInstanceProcAddr)) {
    return make_error(ErrorCode::unavailable, rt.library.path(), " lacks vkGetInstanceProcAddr");
  }
  GlobalApi& api = rt.api;
#define DEVRT_VULKAN_GLOBAL(name) api.name = reinterpret_cast<PFN_##name>(api.vkGetInstanceProcAddr(nullptr, #name));
  DEVRT_VULKAN_GLOBAL_SYMBOLS(DEVRT_VULKAN_GLOBAL)
#undef DEVRT_VULKAN_GLOBAL
  if (api.vkCreateInstance == nullptr)
    return make_error(ErrorCode::unavailable, "the Vulkan loader lacks vkCreateInstance");
  DEVRT_FAULT_WRAP_SYMBOLS("vulkan", api, DEVRT_VULKAN_GLOBAL_SYMBOLS);
  // An instance, once made, is kept for the process, also when discovery fails after it and is
  // tried again: destroying it makes the loader unload every driver (and the layers and
  // libraries they pulled in), and memory they keep in their own statics becomes unreachable
  // (LeakSanitizer reports it on some machines), and loading them again costs the drivers' cold
  // start a second time. Discovery runs under LazyRuntime's lock.
  static VkInstance kept_instance = VK_NULL_HANDLE;
  static std::uint32_t kept_version = VK_API_VERSION_1_0;
  if (kept_instance == VK_NULL_HANDLE) {
    // A failed version query must not read as Vulkan 1.0 (which would hide every 1.2 feature).
    if (api.vkEnumerateInstanceVersion != nullptr) {
      DEVRT_VK_CHECK("vkEnumerateInstanceVersion", api.vkEnumerateInstanceVersion(&kept_version));
    }
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "devrt";
    app.pEngineName = "devrt";
    app.apiVersion = std::min<std::uint32_t>(kept_version, VK_API_VERSION_1_3);
    VkInstanceCreateInfo create{};
    create.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    create.pApplicationInfo = &app;
    VkResult result = api.vkCreateInstance(&create, nullptr, &kept_instance);
    if (result == VK_ERROR_INCOMPATIBLE_DRIVER) {
      return make_error(ErrorCode::unavailable,
                        "no Vulkan driver: vkCreateInstance found no ICD (VK_ERROR_INCOMPATIBLE_DRIVER; the loader "
                        "reads VK_ICD_FILENAMES / VK_DRIVER_FILES or /usr/share/vulkan/icd.d)");
    }
    // Any other failure may pass (out of memory): discovery is tried again.
    DEVRT_VK_CHECK("vkCreateInstance", result);
  }
  rt.instance = kept_instance;
  rt.instance_version = kept_version;
  Status found = find_devices(rt);
  if (!found.ok()) rt.devices.clear();
  return found;
}

// The instance's entry points and its physical devices.
Status find_devices(Runtime& rt) {
  GlobalApi& api = rt.api;
#define DEVRT_VULKAN_INSTANCE(name)                                                                                    \
  api.name = reinterpret_cast<PFN_##name>(api.vkGetInstanceProcAddr(rt.instance, #name));                              \
  if (api.name == nullptr && std::strcmp(#name, "vkGetPhysicalDeviceProperties2") != 0 &&                              \
      std::strcmp(#name, "vkGetPhysicalDeviceFeatures2") != 0) {                                                       \
    return make_error(ErrorCode::unavailable, "the Vulkan instance lacks ", #name);                                    \
  }
  DEVRT_VULKAN_INSTANCE_SYMBOLS(DEVRT_VULKAN_INSTANCE)
#undef DEVRT_VULKAN_INSTANCE
  DEVRT_FAULT_WRAP_SYMBOLS("vulkan", api, DEVRT_VULKAN_INSTANCE_SYMBOLS);
  std::uint32_t count = 0;
  DEVRT_VK_CHECK("vkEnumeratePhysicalDevices", api.vkEnumeratePhysicalDevices(rt.instance, &count, nullptr));
  if (count == 0) return make_error(ErrorCode::unavailable, "the Vulkan driver reports no physical device");
  std::vector<VkPhysicalDevice> physical(count);
  DEVRT_VK_CHECK("vkEnumeratePhysicalDevices", api.vkEnumeratePhysicalDevices(rt.instance, &count, physical.data()));
  rt.devices.resize(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    PhysicalDevice& d = rt.devices[i];
    d.index = static_cast<std::int32_t>(i);
    d.physical = physical[i];
    DEVRT_RETURN_IF_ERROR(describe_physical_device(api, rt.instance_version, d));
  }
  return Status();
}

// At process exit, before the driver's own exit handlers (registered earlier, so run later):
// every device finishes the work devrt queued, so no driver thread still executes it while the
// process tears the driver down; what was kept after a failed wait is destroyed then.
void wait_idle_at_exit() noexcept {
  Runtime& rt = runtime();
  std::lock_guard<std::mutex> lock(rt.open_mutex);
  for (DeviceState* device : rt.open) {
    if (!device->lost.load(std::memory_order_acquire)) static_cast<void>(wait_queue_idle(*device));
  }
}

// DEVRT_VULKAN_STAGING_CHUNK, when set: the staging ring's chunk size (its table entry's range is
// [kMinStagingChunk, kStagingChunk]).
constexpr detail::EnvName<detail::EnvKind::number> kStagingChunkVariable = "DEVRT_VULKAN_STAGING_CHUNK";
static_assert(kStagingChunkVariable.entry().min == kMinStagingChunk &&
              kStagingChunkVariable.entry().max == kStagingChunk);

Status init_device(DeviceState& d) {
  const Runtime& rt = runtime();
  if (d.compute_family == UINT32_MAX) {
    return make_error(ErrorCode::unavailable, d.properties.deviceName, " has no compute queue");
  }
  if (!d.has_timeline) {
    return make_error(ErrorCode::unsupported, d.properties.deviceName,
                      " lacks timeline semaphores (Vulkan 1.2), which devrt streams and events need");
  }
  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue{};
  queue.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  queue.queueFamilyIndex = d.compute_family;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  // Everything the device offers that shaders may use: fp16/int8/8- and 16-bit storage, 64-bit.
  VkPhysicalDeviceFeatures2 features = d.features;
  VkPhysicalDeviceVulkan11Features features11 = d.features11;
  VkPhysicalDeviceVulkan12Features features12 = d.features12;
  features.pNext = &features11;
  features11.pNext = &features12;
  features12.pNext = nullptr;
  features.features.robustBufferAccess = VK_FALSE;
  // Push descriptors bind a launch's buffers without allocating a descriptor set.
  // DEVRT_VULKAN_NO_PUSH_DESCRIPTORS=1 uses descriptor pools instead (to test that path).
  d.use_push_descriptors =
      d.has_push_descriptor && !detail::read_boolean_env("DEVRT_VULKAN_NO_PUSH_DESCRIPTORS", false);
  const char* extensions[] = {VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME};
  VkDeviceCreateInfo create{};
  create.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  create.pNext = &features;
  create.queueCreateInfoCount = 1;
  create.pQueueCreateInfos = &queue;
  create.enabledExtensionCount = d.use_push_descriptors ? 1 : 0;
  create.ppEnabledExtensionNames = extensions;
  DEVRT_VK_CHECK("vkCreateDevice", rt.api.vkCreateDevice(d.physical, &create, nullptr, &d.device));
#if DEVRT_FAULT_INJECTION
  // One wrapper serves every device: through the loader's trampolines, which dispatch on the
  // handle, rather than each driver's own entry points.
  auto get = [&rt](VkDevice, const char* name) { return rt.api.vkGetInstanceProcAddr(rt.instance, name); };
#else
  auto get = rt.api.vkGetDeviceProcAddr;
#endif
#define DEVRT_VULKAN_DEVICE(name)                                                                                      \
  d.api.name = reinterpret_cast<PFN_##name>(get(d.device, #name));                                                     \
  if (d.api.name == nullptr) return make_error(ErrorCode::unavailable, "the Vulkan device lacks ", #name);
  DEVRT_VULKAN_DEVICE_SYMBOLS(DEVRT_VULKAN_DEVICE)
#undef DEVRT_VULKAN_DEVICE
  d.api.vkWaitSemaphores = reinterpret_cast<PFN_vkWaitSemaphores>(get(d.device, "vkWaitSemaphores"));
  d.api.vkGetSemaphoreCounterValue =
      reinterpret_cast<PFN_vkGetSemaphoreCounterValue>(get(d.device, "vkGetSemaphoreCounterValue"));
  if (d.api.vkWaitSemaphores == nullptr || d.api.vkGetSemaphoreCounterValue == nullptr) {
    return make_error(ErrorCode::unavailable, "the Vulkan device lacks the timeline semaphore functions");
  }
  if (d.use_push_descriptors) {
    d.api.vkCmdPushDescriptorSetKHR =
        reinterpret_cast<PFN_vkCmdPushDescriptorSetKHR>(get(d.device, "vkCmdPushDescriptorSetKHR"));
    d.use_push_descriptors = d.api.vkCmdPushDescriptorSetKHR != nullptr;
  }
  DEVRT_FAULT_WRAP_SYMBOLS("vulkan", d.api, DEVRT_VULKAN_DEVICE_SYMBOLS);
  DEVRT_FAULT_WRAP_SYMBOLS("vulkan", d.api, DEVRT_VULKAN_DEVICE_EXTRA_SYMBOLS);
  d.api.vkGetDeviceQueue(d.device, d.compute_family, 0, &d.queue);

  // Memory types by purpose (vulkan_memory.hpp). DEVRT_VULKAN_FORCE_STAGING=1 never maps buffers,
  // to exercise the staging path on unified-memory devices.
  d.plan = plan_memory(d.memory, !detail::read_boolean_env("DEVRT_VULKAN_FORCE_STAGING", false));
  d.staging_chunk = detail::read_number_env(kStagingChunkVariable, kStagingChunk);
  if (d.plan.device_type == kNoMemoryType || d.plan.upload_type == kNoMemoryType ||
      d.plan.readback_type == kNoMemoryType) {
    return make_error(ErrorCode::unavailable, d.properties.deviceName, " has no usable memory type");
  }
  return create_stream(d, d.default_stream);
}

std::int64_t driver_version_number(const DeviceState& d) { return d.properties.driverVersion; }

std::string version_text(std::uint32_t version) {
  return std::to_string(VK_API_VERSION_MAJOR(version)) + "." + std::to_string(VK_API_VERSION_MINOR(version)) + "." +
         std::to_string(VK_API_VERSION_PATCH(version));
}

using Discovery = detail::LazyRuntime<Runtime, discover>;

} // namespace

Runtime& runtime() noexcept { return Discovery::get(); }

detail::FreedBuffers& freed_buffers() noexcept {
  static detail::NoDestroy<detail::FreedBuffers> buffers; // used by frees during exit
  return buffers.get();
}

namespace {

// Destroys what init_device made of `d` (all of it, or what a failed opening got to).
void destroy_device_objects(DeviceState& d) noexcept {
  if (d.device == VK_NULL_HANDLE) return;
  if (!d.lost.load(std::memory_order_acquire)) static_cast<void>(wait_queue_idle(d));
  if (d.default_stream != nullptr) {
    static_cast<void>(destroy_stream(d, d.default_stream));
    d.default_stream = nullptr;
  }
  destroy_query_pools(d);
  // Kept after failed waits: the device is idle now, or lost (then nothing runs either).
  for (const Retired& object : d.retired) object.destroy(d, object.object);
  d.retired.clear();
  runtime().api.vkDestroyDevice(d.device, nullptr);
  d.device = VK_NULL_HANDLE;
}

[[gnu::cold, gnu::noinline]] Status lost_error(DeviceState& d) {
  std::lock_guard<std::mutex> lock(d.lost_mutex);
  return make_error(ErrorCode::driver_error, d.properties.deviceName, " was lost (VK_ERROR_DEVICE_LOST from ",
                    d.lost_call, "); every later call to it fails");
}

} // namespace

Status VulkanBackend::open_device(BackendDevice& device) noexcept {
  Runtime& rt = runtime();
  DEVRT_RETURN_IF_ERROR(rt.status);
  std::unique_ptr<DeviceState> d(new (std::nothrow) DeviceState);
  if (!d) return make_error(ErrorCode::out_of_memory, "no host memory for the device's state");
  static_cast<PhysicalDevice&>(*d) = rt.devices[static_cast<std::size_t>(device.index)];
  if (Status opened = init_device(*d); !opened.ok()) {
    destroy_device_objects(*d);
    return opened;
  }
  static const bool registered = std::atexit(&wait_idle_at_exit) == 0;
  static_cast<void>(registered);
  {
    std::lock_guard<std::mutex> lock(rt.open_mutex);
    rt.open.push_back(d.get());
  }
  device.state = d.release();
  return Status();
}

Status VulkanBackend::close_device(BackendDevice& device) noexcept {
  auto* d = static_cast<DeviceState*>(device.state);
  if (d == nullptr) return Status();
  Runtime& rt = runtime();
  {
    std::lock_guard<std::mutex> lock(rt.open_mutex);
    std::erase(rt.open, d);
  }
  destroy_device_objects(*d);
  delete d;
  device.state = nullptr;
  return Status();
}

Result<DeviceState*> usable_device(DeviceState& d) noexcept {
  if (d.lost.load(std::memory_order_acquire)) [[unlikely]]
    return lost_error(d);
  return &d;
}

Status device_error(DeviceState& d, const char* call, VkResult result) noexcept {
  if (result == VK_ERROR_DEVICE_LOST && !d.lost.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(d.lost_mutex);
    if (d.lost_call == nullptr) d.lost_call = call;
    d.lost.store(true, std::memory_order_release);
  }
  return vk_error(call, result);
}

// ---- Discovery -------------------------------------------------------------------------------

Status VulkanBackend::availability() noexcept { return Discovery::get_retrying().status; }

Result<std::int32_t> VulkanBackend::device_count() noexcept {
  return detail::discovered_device_count(Discovery::get_retrying());
}

Result<AttributeValue> VulkanBackend::get_attribute(const BackendDevice& device, Attribute attribute) noexcept {
  const DeviceState& d = opened_device(device);
  const VkPhysicalDeviceLimits& limits = d.properties.limits;
  auto integer = [](auto value) { return AttributeValue(static_cast<std::int64_t>(value)); };
  switch (attribute) {
  case Attribute::exist: return AttributeValue(true);
  case Attribute::max_threads_per_block: return integer(limits.maxComputeWorkGroupInvocations);
  case Attribute::warp_size: return integer(d.subgroup.subgroupSize != 0 ? d.subgroup.subgroupSize : 1);
  case Attribute::max_shared_memory_per_block: return integer(limits.maxComputeSharedMemorySize);
  case Attribute::device_name: return AttributeValue(std::string(d.properties.deviceName));
  case Attribute::max_thread_dimensions:
    return AttributeValue(
        Dim3{limits.maxComputeWorkGroupSize[0], limits.maxComputeWorkGroupSize[1], limits.maxComputeWorkGroupSize[2]});
  case Attribute::api_version: return integer(d.properties.apiVersion);
  case Attribute::driver_version:
    if (d.has_driver_properties && d.driver.driverInfo[0] != '\0')
      return AttributeValue(std::string(d.driver.driverInfo));
    return AttributeValue(version_text(d.properties.driverVersion));
  case Attribute::buffer_offset_alignment:
    return integer(std::max<VkDeviceSize>(limits.minStorageBufferOffsetAlignment, 1));
  case Attribute::total_global_memory: {
    std::int64_t total = 0;
    for (std::uint32_t i = 0; i < d.memory.memoryHeapCount; ++i) {
      if ((d.memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0) {
        total += static_cast<std::int64_t>(d.memory.memoryHeaps[i].size);
      }
    }
    return integer(total);
  }
  default: return AttributeValue();
  }
}

namespace {
// TVM's names for a physical device's type (its vulkan target's "device_type").
std::string_view vulkan_device_type_name(VkPhysicalDeviceType type) noexcept {
  switch (type) {
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
  case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
  default: return "other";
  }
}
} // namespace

Result<Target> VulkanBackend::detect_target(const BackendDevice& device) noexcept {
  const DeviceState& d = opened_device(device);
  const VkPhysicalDeviceLimits& limits = d.properties.limits;
  std::uint32_t api = d.properties.apiVersion;
  // The newest SPIR-V the device's Vulkan version guarantees (as TVM encodes it).
  std::int64_t spirv = VK_API_VERSION_MINOR(api) >= 3   ? 0x10600
                       : VK_API_VERSION_MINOR(api) >= 2 ? 0x10500
                       : VK_API_VERSION_MINOR(api) >= 1 ? 0x10300
                                                        : 0x10000;
  auto flag = [](VkBool32 value) { return value == VK_TRUE; };
  Target target("vulkan");
  target.set("keys", std::vector<std::string>{"vulkan", "gpu"});
  target.set("supports_float16", flag(d.features12.shaderFloat16));
  target.set("supports_float64", flag(d.features.features.shaderFloat64));
  target.set("supports_int8", flag(d.features12.shaderInt8));
  target.set("supports_int16", flag(d.features.features.shaderInt16));
  target.set("supports_int64", flag(d.features.features.shaderInt64));
  target.set("supports_8bit_buffer", flag(d.features12.storageBuffer8BitAccess));
  target.set("supports_16bit_buffer", flag(d.features11.storageBuffer16BitAccess));
  target.set("supports_storage_buffer_storage_class", d.has_storage_buffer_class);
  target.set("supports_push_descriptor", d.has_push_descriptor);
  target.set("supported_subgroup_operations", static_cast<std::int64_t>(d.subgroup.supportedOperations));
  target.set("max_num_threads", static_cast<std::int64_t>(limits.maxComputeWorkGroupInvocations));
  target.set("thread_warp_size", static_cast<std::int64_t>(d.subgroup.subgroupSize != 0 ? d.subgroup.subgroupSize : 1));
  target.set("max_block_size_x", static_cast<std::int64_t>(limits.maxComputeWorkGroupSize[0]));
  target.set("max_block_size_y", static_cast<std::int64_t>(limits.maxComputeWorkGroupSize[1]));
  target.set("max_block_size_z", static_cast<std::int64_t>(limits.maxComputeWorkGroupSize[2]));
  target.set("max_push_constants_size", static_cast<std::int64_t>(limits.maxPushConstantsSize));
  target.set("max_uniform_buffer_range", static_cast<std::int64_t>(limits.maxUniformBufferRange));
  target.set("max_storage_buffer_range", static_cast<std::int64_t>(limits.maxStorageBufferRange));
  target.set("max_shared_memory_per_block", static_cast<std::int64_t>(limits.maxComputeSharedMemorySize));
  target.set("device_type", vulkan_device_type_name(d.properties.deviceType));
  target.set("device_name", std::string(d.properties.deviceName));
  target.set("driver_name", std::string(d.has_driver_properties ? d.driver.driverName : ""));
  target.set("driver_version", driver_version_number(d));
  target.set("vulkan_api_version", static_cast<std::int64_t>(api));
  target.set("max_spirv_version", spirv);
  return target;
}

} // namespace devrt::vulkan

DEVRT_REGISTER_BACKEND(vulkan, devrt::vulkan::VulkanBackend)
