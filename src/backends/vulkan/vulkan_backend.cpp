#include "vulkan_backend.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dynamic_library.hpp"
#include "kernel_signature.hpp"
#include "lazy_runtime.hpp"
#include "vulkan_api.hpp"
#include "vulkan_memory.hpp"
#include "vulkan_spirv.hpp"

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

namespace {

// ---- Errors ----------------------------------------------------------------------------------

[[gnu::cold]] Status vk_error(const char* call, VkResult result) {
  ErrorCode code = result == VK_ERROR_OUT_OF_HOST_MEMORY || result == VK_ERROR_OUT_OF_DEVICE_MEMORY
                       ? ErrorCode::out_of_memory
                       : ErrorCode::driver_error;
  return make_error(code, call, " failed: ", result_name(result), " (", static_cast<std::int32_t>(result), ")");
}

#define DEVRT_VK_CHECK(call_text, expr)                                                                                \
  do {                                                                                                                 \
    VkResult devrt_vk_result = (expr);                                                                                 \
    if (devrt_vk_result != VK_SUCCESS) [[unlikely]]                                                                    \
      return vk_error(call_text, devrt_vk_result);                                                                     \
  } while (0)

// Commands one stream records before it submits without being asked.
constexpr std::uint32_t kMaxCommandsPerBatch = 4096;
constexpr std::uint32_t kDescriptorSetsPerPool = 256;
constexpr std::uint32_t kDescriptorsPerPool = kDescriptorSetsPerPool * 8;
constexpr std::uint32_t kMaxPushConstantBytes = 256;
// Host transfers to and from memory the host cannot map go through a stream's staging ring:
// kStagingSlots persistent buffers of kStagingChunk bytes per direction, so that the device copies
// one chunk while the host fills or drains the other.
constexpr VkDeviceSize kStagingChunk = VkDeviceSize{8} << 20;
constexpr std::uint32_t kStagingSlots = 2;
// Host writes this small (and 4-byte aligned) are recorded inline with vkCmdUpdateBuffer.
constexpr VkDeviceSize kInlineUpdateBytes = 65536;
// Every implementation supports at least 32 push descriptors (maxPushDescriptors).
constexpr std::size_t kMaxPushDescriptors = 32;
// Ranges a stream remembers since its last barrier; beyond that the next command gets a barrier.
constexpr std::size_t kTrackedRanges = 16;

// ---- State -----------------------------------------------------------------------------------

struct DeviceState;

struct Allocation {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  std::byte* mapped = nullptr; // persistently mapped when host-visible
  bool coherent = true;
};

// A timeline semaphore shared by a stream and the events recorded on it, so an event outlives
// its stream safely. Reference-counted by TimelineRef (no std::shared_ptr: its control block's
// vtable would differ between this -fno-rtti code and RTTI users of the same template).
struct Timeline {
  DeviceState* device = nullptr;
  VkSemaphore semaphore = VK_NULL_HANDLE;
  std::atomic<std::uint32_t> references{1};
  ~Timeline();
};

class TimelineRef {
public:
  TimelineRef() noexcept = default;
  explicit TimelineRef(Timeline* adopted) noexcept : timeline_(adopted) {}
  TimelineRef(const TimelineRef& other) noexcept : timeline_(other.timeline_) {
    if (timeline_ != nullptr) timeline_->references.fetch_add(1, std::memory_order_relaxed);
  }
  TimelineRef(TimelineRef&& other) noexcept : timeline_(std::exchange(other.timeline_, nullptr)) {}
  TimelineRef& operator=(TimelineRef other) noexcept {
    std::swap(timeline_, other.timeline_);
    return *this;
  }
  ~TimelineRef() {
    if (timeline_ != nullptr && timeline_->references.fetch_sub(1, std::memory_order_acq_rel) == 1) delete timeline_;
  }
  Timeline* operator->() const noexcept { return timeline_; }
  explicit operator bool() const noexcept { return timeline_ != nullptr; }
  friend bool operator==(const TimelineRef& a, const TimelineRef& b) noexcept { return a.timeline_ == b.timeline_; }

private:
  Timeline* timeline_ = nullptr;
};

struct Batch {
  VkCommandBuffer commands = VK_NULL_HANDLE;
  std::uint64_t value = 0;
  std::vector<VkDescriptorPool> pools;
};

// A persistent staging buffer of a stream, free once the stream's timeline reaches busy_until.
struct StagingSlot {
  Allocation* allocation = nullptr;
  std::uint64_t busy_until = 0;
};

struct StagingRing {
  StagingSlot slots[kStagingSlots];
  std::uint32_t next = 0;
};

// A byte range a recorded command touches; two commands conflict when they share one.
struct TouchedRange {
  VkBuffer buffer;
  VkDeviceSize begin, end;
};

struct StreamState {
  DeviceState* device = nullptr;
  std::mutex mutex;
  VkCommandPool pool = VK_NULL_HANDLE;
  TimelineRef timeline;
  std::uint64_t submitted = 0;
  VkCommandBuffer recording = VK_NULL_HANDLE;
  std::uint32_t commands = 0;
  // What the recording command buffer has: the bound pipeline, and the stages and ranges of the
  // commands since its last barrier (hazard tracking).
  VkPipeline bound_pipeline = VK_NULL_HANDLE;
  // The last pushed descriptors and push constants, valid for `pushed_layout` in the recording
  // command buffer: a launch with the same ones records neither again.
  VkPipelineLayout pushed_layout = VK_NULL_HANDLE;
  std::uint32_t pushed_buffer_count = 0;
  VkDescriptorBufferInfo pushed_buffers[kMaxPushDescriptors];
  std::uint32_t pushed_constant_bytes = 0;
  unsigned char pushed_constants[kMaxPushConstantBytes];
  VkPipelineStageFlags pending_stages = 0;
  TouchedRange touched[kTrackedRanges];
  std::size_t touched_count = 0;
  bool touched_overflow = false;
  std::vector<VkDescriptorPool> recording_pools;
  std::vector<std::pair<TimelineRef, std::uint64_t>> waits;
  std::deque<Batch> in_flight;
  std::vector<VkCommandBuffer> free_commands;
  std::vector<VkDescriptorPool> free_pools;
  StagingRing upload;
  StagingRing readback;
};

struct DeviceState {
  std::int32_t index = 0;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties properties{};
  VkPhysicalDeviceMemoryProperties memory{};
  VkPhysicalDeviceSubgroupProperties subgroup{};
  VkPhysicalDeviceDriverProperties driver{};
  VkPhysicalDeviceFeatures2 features{};
  VkPhysicalDeviceVulkan11Features features11{};
  VkPhysicalDeviceVulkan12Features features12{};
  bool has_timeline = false;
  bool has_push_descriptor = false;
  bool has_storage_buffer_class = false;
  bool has_driver_properties = false;
  bool use_push_descriptors = false; // has_push_descriptor, enabled on the device
  std::uint32_t compute_family = UINT32_MAX;

  std::once_flag once;
  Status status;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  std::mutex queue_mutex;
  DeviceApi api;
  MemoryPlan plan; // memory types by purpose (vulkan_memory.hpp)
  StreamState* default_stream = nullptr;
  std::mutex streams_mutex;
  std::vector<StreamState*> streams; // every live stream, the default one included
};

// Before destroying an object a submission referred to (a semaphore it waited on or signalled,
// the command pool of its command buffer, a pipeline): seeing a timeline value reached only says
// the work is done, not that the driver's queue thread has let go of the submission (lavapipe
// cleans it up afterwards, and crashed touching a semaphore destroyed in between). Waiting for
// the queue to go idle orders the destruction after that cleanup. Rare operations only.
void wait_queue_idle(DeviceState& d) noexcept {
  std::lock_guard<std::mutex> lock(d.queue_mutex);
  static_cast<void>(d.api.vkQueueWaitIdle(d.queue));
}

Timeline::~Timeline() {
  if (semaphore == VK_NULL_HANDLE) return;
  wait_queue_idle(*device);
  device->api.vkDestroySemaphore(device->device, semaphore, nullptr);
}

struct Runtime {
  Status status;
  detail::DynamicLibrary library;
  GlobalApi api;
  VkInstance instance = VK_NULL_HANDLE;
  std::uint32_t instance_version = VK_API_VERSION_1_0;
  std::vector<std::unique_ptr<DeviceState>> devices;
};

bool has_extension(const std::vector<VkExtensionProperties>& all, const char* name) {
  return std::any_of(all.begin(), all.end(),
                     [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

void describe_physical_device(const GlobalApi& api, std::uint32_t instance_version, DeviceState& d) {
  api.vkGetPhysicalDeviceProperties(d.physical, &d.properties);
  api.vkGetPhysicalDeviceMemoryProperties(d.physical, &d.memory);
  std::uint32_t count = 0;
  api.vkEnumerateDeviceExtensionProperties(d.physical, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> extensions(count);
  api.vkEnumerateDeviceExtensionProperties(d.physical, nullptr, &count, extensions.data());
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
  // A compute queue, preferring one without graphics (dedicated compute engines).
  for (std::uint32_t i = 0; i < families; ++i) {
    if ((family[i].queueFlags & VK_QUEUE_COMPUTE_BIT) == 0) continue;
    if (d.compute_family == UINT32_MAX || (family[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) == 0) d.compute_family = i;
  }
}

Status discover(Runtime& rt) {
  std::string reason;
  if (!rt.library.open({"libvulkan.so.1", "libvulkan.so"}, reason)) {
    return make_error(ErrorCode::unavailable, "no Vulkan loader: ", reason);
  }
  if (!rt.library.resolve("vkGetInstanceProcAddr", rt.api.vkGetInstanceProcAddr)) {
    return make_error(ErrorCode::unavailable, rt.library.path(), " lacks vkGetInstanceProcAddr");
  }
  GlobalApi& api = rt.api;
#define DEVRT_VULKAN_GLOBAL(name) api.name = reinterpret_cast<PFN_##name>(api.vkGetInstanceProcAddr(nullptr, #name));
  DEVRT_VULKAN_GLOBAL_SYMBOLS(DEVRT_VULKAN_GLOBAL)
#undef DEVRT_VULKAN_GLOBAL
  if (api.vkCreateInstance == nullptr)
    return make_error(ErrorCode::unavailable, "the Vulkan loader lacks vkCreateInstance");
  if (api.vkEnumerateInstanceVersion != nullptr) api.vkEnumerateInstanceVersion(&rt.instance_version);
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "devrt";
  app.pEngineName = "devrt";
  app.apiVersion = std::min<std::uint32_t>(rt.instance_version, VK_API_VERSION_1_3);
  VkInstanceCreateInfo create{};
  create.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  create.pApplicationInfo = &app;
  VkResult result = api.vkCreateInstance(&create, nullptr, &rt.instance);
  if (result == VK_ERROR_INCOMPATIBLE_DRIVER) {
    return make_error(ErrorCode::unavailable,
                      "no Vulkan driver: vkCreateInstance found no ICD (VK_ERROR_INCOMPATIBLE_DRIVER; the loader "
                      "reads VK_ICD_FILENAMES / VK_DRIVER_FILES or /usr/share/vulkan/icd.d)");
  }
  if (result != VK_SUCCESS) {
    return make_error(ErrorCode::unavailable, "vkCreateInstance failed: ", result_name(result), " (",
                      static_cast<std::int32_t>(result), ")");
  }
#define DEVRT_VULKAN_INSTANCE(name)                                                                                    \
  api.name = reinterpret_cast<PFN_##name>(api.vkGetInstanceProcAddr(rt.instance, #name));                              \
  if (api.name == nullptr && std::strcmp(#name, "vkGetPhysicalDeviceProperties2") != 0 &&                              \
      std::strcmp(#name, "vkGetPhysicalDeviceFeatures2") != 0) {                                                       \
    return make_error(ErrorCode::unavailable, "the Vulkan instance lacks ", #name);                                    \
  }
  DEVRT_VULKAN_INSTANCE_SYMBOLS(DEVRT_VULKAN_INSTANCE)
#undef DEVRT_VULKAN_INSTANCE
  std::uint32_t count = 0;
  DEVRT_VK_CHECK("vkEnumeratePhysicalDevices", api.vkEnumeratePhysicalDevices(rt.instance, &count, nullptr));
  if (count == 0) return make_error(ErrorCode::unavailable, "the Vulkan driver reports no physical device");
  std::vector<VkPhysicalDevice> physical(count);
  DEVRT_VK_CHECK("vkEnumeratePhysicalDevices", api.vkEnumeratePhysicalDevices(rt.instance, &count, physical.data()));
  for (std::uint32_t i = 0; i < count; ++i) {
    auto d = std::make_unique<DeviceState>();
    d->index = static_cast<std::int32_t>(i);
    d->physical = physical[i];
    describe_physical_device(api, rt.instance_version, *d);
    rt.devices.push_back(std::move(d));
  }
  return Status();
}

Runtime& runtime() noexcept { return detail::lazy_runtime<Runtime, discover>(); }

// At process exit, before the driver's own exit handlers (registered earlier, so run later):
// every device finishes the work devrt queued, so no driver thread still executes it while the
// process tears the driver down.
void wait_idle_at_exit() noexcept {
  for (const auto& device : runtime().devices) {
    if (device->device != VK_NULL_HANDLE && device->status.ok())
      static_cast<void>(device->api.vkDeviceWaitIdle(device->device));
  }
}

Status create_stream(DeviceState& d, StreamState*& out);

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
  const char* no_push = std::getenv("DEVRT_VULKAN_NO_PUSH_DESCRIPTORS");
  d.use_push_descriptors = d.has_push_descriptor && (no_push == nullptr || std::strcmp(no_push, "1") != 0);
  const char* extensions[] = {VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME};
  VkDeviceCreateInfo create{};
  create.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  create.pNext = &features;
  create.queueCreateInfoCount = 1;
  create.pQueueCreateInfos = &queue;
  create.enabledExtensionCount = d.use_push_descriptors ? 1 : 0;
  create.ppEnabledExtensionNames = extensions;
  DEVRT_VK_CHECK("vkCreateDevice", rt.api.vkCreateDevice(d.physical, &create, nullptr, &d.device));
  auto get = rt.api.vkGetDeviceProcAddr;
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
  d.api.vkGetDeviceQueue(d.device, d.compute_family, 0, &d.queue);

  // Memory types by purpose (vulkan_memory.hpp). DEVRT_VULKAN_FORCE_STAGING=1 never maps buffers,
  // to exercise the staging path on unified-memory devices.
  const char* force = std::getenv("DEVRT_VULKAN_FORCE_STAGING");
  d.plan = plan_memory(d.memory, force == nullptr || std::strcmp(force, "1") != 0);
  if (d.plan.device_type == kNoMemoryType || d.plan.upload_type == kNoMemoryType ||
      d.plan.readback_type == kNoMemoryType) {
    return make_error(ErrorCode::unavailable, d.properties.deviceName, " has no usable memory type");
  }
  return create_stream(d, d.default_stream);
}

Result<DeviceState*> device_of(std::int32_t id) noexcept {
  DeviceState& d = *runtime().devices[static_cast<std::size_t>(id)];
  std::call_once(d.once, [&] {
    d.status = init_device(d);
    static const bool registered = std::atexit(&wait_idle_at_exit) == 0;
    static_cast<void>(registered);
  });
  if (!d.status.ok()) return d.status;
  return &d;
}

#define DEVRT_VK_DEVICE(var, id)                                                                                       \
  Result<DeviceState*> var##_result = device_of(id);                                                                   \
  if (!var##_result.ok()) return std::move(var##_result).status();                                                     \
  DeviceState& var = **var##_result

// ---- Buffers ---------------------------------------------------------------------------------

void destroy_allocation(DeviceState& d, Allocation* a) {
  if (a->buffer != VK_NULL_HANDLE) d.api.vkDestroyBuffer(d.device, a->buffer, nullptr);
  if (a->memory != VK_NULL_HANDLE) d.api.vkFreeMemory(d.device, a->memory, nullptr);
  delete a;
}

Result<Allocation*> create_allocation(DeviceState& d, VkDeviceSize size, MemoryUsage usage) {
  auto* a = new (std::nothrow) Allocation();
  if (a == nullptr) return make_error(ErrorCode::out_of_memory, "no host memory for a buffer record");
  a->size = size;
  VkBufferCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  info.size = size;
  info.usage = usage != MemoryUsage::device ? VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT
                                            : VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                                  VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult result = d.api.vkCreateBuffer(d.device, &info, nullptr, &a->buffer);
  if (result != VK_SUCCESS) {
    destroy_allocation(d, a);
    return vk_error("vkCreateBuffer", result);
  }
  VkMemoryRequirements needs{};
  d.api.vkGetBufferMemoryRequirements(d.device, a->buffer, &needs);
  std::uint32_t type = usage == MemoryUsage::device   ? d.plan.device_type
                       : usage == MemoryUsage::upload ? d.plan.upload_type
                                                      : d.plan.readback_type;
  if ((needs.memoryTypeBits & (1u << type)) == 0) type = choose_memory_type(d.memory, needs.memoryTypeBits, usage);
  if (type == kNoMemoryType) {
    destroy_allocation(d, a);
    return make_error(ErrorCode::unsupported, "no memory type of ", d.properties.deviceName, " fits a buffer (bits 0x",
                      needs.memoryTypeBits, ")");
  }
  VkMemoryAllocateInfo allocate{};
  allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  allocate.allocationSize = needs.size;
  allocate.memoryTypeIndex = type;
  result = d.api.vkAllocateMemory(d.device, &allocate, nullptr, &a->memory);
  if (result == VK_SUCCESS) result = d.api.vkBindBufferMemory(d.device, a->buffer, a->memory, 0);
  VkMemoryPropertyFlags flags = d.memory.memoryTypes[type].propertyFlags;
  const bool map = usage != MemoryUsage::device || d.plan.map_buffers;
  if (result == VK_SUCCESS && map && (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0) {
    void* pointer = nullptr;
    result = d.api.vkMapMemory(d.device, a->memory, 0, VK_WHOLE_SIZE, 0, &pointer);
    a->mapped = static_cast<std::byte*>(pointer);
    a->coherent = (flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
  }
  if (result != VK_SUCCESS) {
    destroy_allocation(d, a);
    return vk_error("vkAllocateMemory", result);
  }
  return a;
}

// Non-coherent mappings need explicit flushes and invalidations (whole allocation: atom-aligned).
void flush_mapping(DeviceState& d, const Allocation& a, bool to_device) {
  if (a.coherent) return;
  VkMappedMemoryRange range{};
  range.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE;
  range.memory = a.memory;
  range.size = VK_WHOLE_SIZE;
  if (to_device) {
    d.api.vkFlushMappedMemoryRanges(d.device, 1, &range);
  } else {
    d.api.vkInvalidateMappedMemoryRanges(d.device, 1, &range);
  }
}

// ---- Streams: recording, submission, retirement ----------------------------------------------

Status create_stream(DeviceState& d, StreamState*& out) {
  auto stream = std::make_unique<StreamState>();
  stream->device = &d;
  VkCommandPoolCreateInfo pool{};
  pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = d.compute_family;
  DEVRT_VK_CHECK("vkCreateCommandPool", d.api.vkCreateCommandPool(d.device, &pool, nullptr, &stream->pool));
  VkSemaphoreTypeCreateInfo type{};
  type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type.initialValue = 0;
  VkSemaphoreCreateInfo semaphore{};
  semaphore.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  semaphore.pNext = &type;
  stream->timeline = TimelineRef(new Timeline());
  stream->timeline->device = &d;
  VkResult result = d.api.vkCreateSemaphore(d.device, &semaphore, nullptr, &stream->timeline->semaphore);
  if (result != VK_SUCCESS) {
    d.api.vkDestroyCommandPool(d.device, stream->pool, nullptr);
    return vk_error("vkCreateSemaphore", result);
  }
  out = stream.release();
  {
    std::lock_guard<std::mutex> lock(d.streams_mutex);
    d.streams.push_back(out);
  }
  return Status();
}

StreamState& stream_of(DeviceState& d, void* handle) noexcept {
  return handle != nullptr ? *static_cast<StreamState*>(handle) : *d.default_stream;
}

// Frees what finished batches held. Caller holds the stream's lock.
void retire(StreamState& s) {
  if (s.in_flight.empty()) return;
  DeviceState& d = *s.device;
  std::uint64_t done = 0;
  if (d.api.vkGetSemaphoreCounterValue(d.device, s.timeline->semaphore, &done) != VK_SUCCESS) return;
  while (!s.in_flight.empty() && s.in_flight.front().value <= done) {
    Batch& batch = s.in_flight.front();
    if (batch.commands != VK_NULL_HANDLE) { // a submission may carry only semaphore waits
      d.api.vkResetCommandBuffer(batch.commands, 0);
      s.free_commands.push_back(batch.commands);
    }
    for (VkDescriptorPool pool : batch.pools) {
      d.api.vkResetDescriptorPool(d.device, pool, 0);
      s.free_pools.push_back(pool);
    }
    s.in_flight.pop_front();
  }
}

// Opens a command buffer if none is recording. Caller holds the lock.
Status begin(StreamState& s) {
  if (s.recording != VK_NULL_HANDLE) return Status();
  DeviceState& d = *s.device;
  retire(s);
  VkCommandBuffer commands = VK_NULL_HANDLE;
  if (!s.free_commands.empty()) {
    commands = s.free_commands.back();
    s.free_commands.pop_back();
  } else {
    VkCommandBufferAllocateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    info.commandPool = s.pool;
    info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    info.commandBufferCount = 1;
    DEVRT_VK_CHECK("vkAllocateCommandBuffers", d.api.vkAllocateCommandBuffers(d.device, &info, &commands));
  }
  VkCommandBufferBeginInfo info{};
  info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VkResult result = d.api.vkBeginCommandBuffer(commands, &info);
  if (result != VK_SUCCESS) {
    s.free_commands.push_back(commands);
    return vk_error("vkBeginCommandBuffer", result);
  }
  s.recording = commands;
  s.commands = 0;
  // Bindings do not outlive a command buffer. The hazard tracking does: a barrier's first scope
  // covers earlier submissions on the queue too, and nothing else orders this command buffer
  // after the stream's previous ones (only drain() clears it).
  s.bound_pipeline = VK_NULL_HANDLE;
  s.pushed_layout = VK_NULL_HANDLE;
  return Status();
}

// Makes the writes of the commands recorded since the last barrier (at `src_stages`) visible to
// what follows at `dst_stages`.
void barrier(StreamState& s, VkPipelineStageFlags src_stages, VkPipelineStageFlags dst_stages,
             VkAccessFlags dst_access) {
  VkMemoryBarrier memory{};
  memory.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  VkAccessFlags written = 0;
  if ((src_stages & VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT) != 0) written |= VK_ACCESS_SHADER_WRITE_BIT;
  if ((src_stages & VK_PIPELINE_STAGE_TRANSFER_BIT) != 0) written |= VK_ACCESS_TRANSFER_WRITE_BIT;
  memory.srcAccessMask = written;
  memory.dstAccessMask = dst_access;
  s.device->api.vkCmdPipelineBarrier(s.recording, src_stages, dst_stages, 0, 1, &memory, 0, nullptr, 0, nullptr);
}

// Before recording a command at `stage` that touches `ranges`: a barrier only when one of them
// overlaps a range a command since the last barrier (in this or an earlier, still running command
// buffer of the stream) touched (read-after-write, write-after-read
// and write-after-write alike; launches count as writing every buffer they bind). Then the ranges
// join the tracked set. Caller holds the lock.
void order_command(StreamState& s, VkPipelineStageFlags stage, std::span<const TouchedRange> ranges) {
  bool hazard = s.touched_overflow;
  for (std::size_t i = 0; i < s.touched_count && !hazard; ++i) {
    for (const TouchedRange& r : ranges) {
      const TouchedRange& t = s.touched[i];
      if (t.buffer == r.buffer && t.begin < r.end && r.begin < t.end) {
        hazard = true;
        break;
      }
    }
  }
  if (hazard) {
    barrier(s, s.pending_stages, stage,
            stage == VK_PIPELINE_STAGE_TRANSFER_BIT ? VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT
                                                    : VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    s.pending_stages = 0;
    s.touched_count = 0;
    s.touched_overflow = false;
  }
  s.pending_stages |= stage;
  for (const TouchedRange& r : ranges) {
    if (s.touched_count == kTrackedRanges) {
      s.touched_overflow = true;
      break;
    }
    s.touched[s.touched_count++] = r;
  }
}

// Submits what was recorded (and any pending waits). Caller holds the lock.
Status flush(StreamState& s) {
  if (s.recording == VK_NULL_HANDLE && s.waits.empty()) return Status();
  DeviceState& d = *s.device;
  Batch batch;
  if (s.recording != VK_NULL_HANDLE) {
    // Results become visible to the host once the semaphore is reached.
    barrier(s, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT,
            VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT);
    VkResult result = d.api.vkEndCommandBuffer(s.recording);
    if (result != VK_SUCCESS) return vk_error("vkEndCommandBuffer", result);
    batch.commands = s.recording;
  }
  std::uint64_t value = s.submitted + 1;
  std::vector<VkSemaphore> wait_semaphores;
  std::vector<std::uint64_t> wait_values;
  std::vector<VkPipelineStageFlags> wait_stages;
  for (const auto& [timeline, wait_value] : s.waits) {
    wait_semaphores.push_back(timeline->semaphore);
    wait_values.push_back(wait_value);
    wait_stages.push_back(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
  }
  VkTimelineSemaphoreSubmitInfo timeline{};
  timeline.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
  timeline.waitSemaphoreValueCount = static_cast<std::uint32_t>(wait_values.size());
  timeline.pWaitSemaphoreValues = wait_values.data();
  timeline.signalSemaphoreValueCount = 1;
  timeline.pSignalSemaphoreValues = &value;
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.pNext = &timeline;
  submit.waitSemaphoreCount = static_cast<std::uint32_t>(wait_semaphores.size());
  submit.pWaitSemaphores = wait_semaphores.data();
  submit.pWaitDstStageMask = wait_stages.data();
  submit.commandBufferCount = batch.commands != VK_NULL_HANDLE ? 1 : 0;
  submit.pCommandBuffers = &batch.commands;
  submit.signalSemaphoreCount = 1;
  submit.pSignalSemaphores = &s.timeline->semaphore;
  VkResult result;
  {
    std::lock_guard<std::mutex> lock(d.queue_mutex);
    result = d.api.vkQueueSubmit(d.queue, 1, &submit, VK_NULL_HANDLE);
  }
  if (result != VK_SUCCESS) return vk_error("vkQueueSubmit", result);
  s.submitted = value;
  batch.value = value;
  batch.pools = std::move(s.recording_pools);
  s.recording_pools.clear();
  s.waits.clear();
  s.recording = VK_NULL_HANDLE;
  s.commands = 0;
  s.in_flight.push_back(std::move(batch));
  return Status();
}

Status wait_value(DeviceState& d, VkSemaphore semaphore, std::uint64_t value) {
  VkSemaphoreWaitInfo wait{};
  wait.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
  wait.semaphoreCount = 1;
  wait.pSemaphores = &semaphore;
  wait.pValues = &value;
  DEVRT_VK_CHECK("vkWaitSemaphores", d.api.vkWaitSemaphores(d.device, &wait, UINT64_MAX));
  return Status();
}

// Submits and waits for everything on the stream; nothing of it can conflict with later commands
// any more. Caller holds the lock.
Status drain(StreamState& s) {
  DEVRT_RETURN_IF_ERROR(flush(s));
  if (s.in_flight.empty()) return Status();
  DEVRT_RETURN_IF_ERROR(wait_value(*s.device, s.timeline->semaphore, s.submitted));
  retire(s);
  s.pending_stages = 0;
  s.touched_count = 0;
  s.touched_overflow = false;
  return Status();
}

// A command was recorded: submit once the batch is long enough.
Status recorded(StreamState& s) {
  if (++s.commands >= kMaxCommandsPerBatch) return flush(s);
  return Status();
}

Status record_copy(StreamState& s, VkBuffer src, VkDeviceSize src_offset, VkBuffer dst, VkDeviceSize dst_offset,
                   VkDeviceSize size) {
  DEVRT_RETURN_IF_ERROR(begin(s));
  const TouchedRange ranges[2] = {{src, src_offset, src_offset + size}, {dst, dst_offset, dst_offset + size}};
  order_command(s, VK_PIPELINE_STAGE_TRANSFER_BIT, ranges);
  VkBufferCopy region{src_offset, dst_offset, size};
  s.device->api.vkCmdCopyBuffer(s.recording, src, dst, 1, &region);
  return recorded(s);
}

// The next slot of a staging ring, free for the host: waits for the batch that last used it
// (submitting it first if it is still being recorded). Caller holds the lock.
Result<StagingSlot*> acquire_staging(StreamState& s, StagingRing& ring, MemoryUsage usage) {
  DeviceState& d = *s.device;
  StagingSlot& slot = ring.slots[ring.next];
  ring.next = (ring.next + 1) % kStagingSlots;
  if (slot.busy_until > s.submitted) DEVRT_RETURN_IF_ERROR(flush(s));
  if (slot.busy_until > 0) DEVRT_RETURN_IF_ERROR(wait_value(d, s.timeline->semaphore, slot.busy_until));
  if (slot.allocation == nullptr) {
    DEVRT_ASSIGN_OR_RETURN(slot.allocation, create_allocation(d, kStagingChunk, usage));
  }
  return &slot;
}

void release_staging(DeviceState& d, StagingRing& ring) {
  for (StagingSlot& slot : ring.slots) {
    if (slot.allocation != nullptr) destroy_allocation(d, slot.allocation);
    slot = StagingSlot{};
  }
}

// Host -> device. Mapped (unified) memory: a memcpy after the stream's earlier work. Otherwise
// recorded on the stream, with the host's bytes already taken when this returns: small aligned
// writes inline in the command buffer, larger ones through the staging ring in chunks, each chunk
// submitted so the device copies it while the host fills the next.
Status write_from_host(DeviceState& d, StreamState& s, Allocation& dst, std::size_t offset, const std::byte* src,
                       std::size_t n) {
  std::lock_guard<std::mutex> lock(s.mutex);
  if (dst.mapped != nullptr) {
    DEVRT_RETURN_IF_ERROR(drain(s));
    std::memcpy(dst.mapped + offset, src, n);
    flush_mapping(d, dst, true);
    return Status();
  }
  if (n <= kInlineUpdateBytes && n % 4 == 0 && offset % 4 == 0) {
    DEVRT_RETURN_IF_ERROR(begin(s));
    const TouchedRange range{dst.buffer, offset, offset + n};
    order_command(s, VK_PIPELINE_STAGE_TRANSFER_BIT, {&range, 1});
    d.api.vkCmdUpdateBuffer(s.recording, dst.buffer, offset, n, src);
    return recorded(s);
  }
  for (std::size_t done = 0; done < n;) {
    const std::size_t chunk = std::min<std::size_t>(n - done, kStagingChunk);
    DEVRT_ASSIGN_OR_RETURN(StagingSlot * slot, acquire_staging(s, s.upload, MemoryUsage::upload));
    std::memcpy(slot->allocation->mapped, src + done, chunk);
    flush_mapping(d, *slot->allocation, true);
    DEVRT_RETURN_IF_ERROR(record_copy(s, slot->allocation->buffer, 0, dst.buffer, offset + done, chunk));
    // The batch being recorded, or the one just submitted if the copy filled it.
    slot->busy_until = s.recording != VK_NULL_HANDLE ? s.submitted + 1 : s.submitted;
    done += chunk;
    if (done < n) DEVRT_RETURN_IF_ERROR(flush(s));
  }
  return Status();
}

// Device -> host, complete on return. Mapped (unified) memory: a memcpy after the stream's work.
// Otherwise chunk by chunk through host-cached staging memory: chunk i is copied by the device
// while the host copies chunk i-1 out.
Status read_to_host(DeviceState& d, StreamState& s, const Allocation& src, std::size_t offset, std::byte* dst,
                    std::size_t n) {
  std::lock_guard<std::mutex> lock(s.mutex);
  if (src.mapped != nullptr) {
    DEVRT_RETURN_IF_ERROR(drain(s));
    flush_mapping(d, src, false);
    std::memcpy(dst, src.mapped + offset, n);
    return Status();
  }
  StagingSlot* previous = nullptr;
  std::size_t previous_at = 0, previous_size = 0;
  auto drain_previous = [&]() -> Status {
    DEVRT_RETURN_IF_ERROR(wait_value(d, s.timeline->semaphore, previous->busy_until));
    flush_mapping(d, *previous->allocation, false);
    std::memcpy(dst + previous_at, previous->allocation->mapped, previous_size);
    return Status();
  };
  for (std::size_t done = 0; done < n;) {
    const std::size_t chunk = std::min<std::size_t>(n - done, kStagingChunk);
    DEVRT_ASSIGN_OR_RETURN(StagingSlot * slot, acquire_staging(s, s.readback, MemoryUsage::readback));
    DEVRT_RETURN_IF_ERROR(record_copy(s, src.buffer, offset + done, slot->allocation->buffer, 0, chunk));
    DEVRT_RETURN_IF_ERROR(flush(s));
    slot->busy_until = s.submitted;
    if (previous != nullptr) DEVRT_RETURN_IF_ERROR(drain_previous());
    previous = slot;
    previous_at = done;
    previous_size = chunk;
    done += chunk;
  }
  if (previous != nullptr) DEVRT_RETURN_IF_ERROR(drain_previous());
  retire(s);
  return Status();
}

// ---- Events ----------------------------------------------------------------------------------

struct EventState {
  std::mutex mutex;
  TimelineRef timeline; // null: never recorded
  std::uint64_t value = 0;
};

std::pair<TimelineRef, std::uint64_t> event_point(EventState& e) {
  std::lock_guard<std::mutex> lock(e.mutex);
  return {e.timeline, e.value};
}

// ---- Modules ---------------------------------------------------------------------------------

struct ModuleState;

struct FunctionState {
  ModuleState* module = nullptr;
  std::string name;
  SpirvEntryPoint entry;
  detail::KernelSignature signature;
  // The pipeline of a shader with a fixed workgroup size, built once by module_function (read
  // without a lock by launches); specialised shaders look theirs up in `pipelines` under `mutex`.
  VkPipeline fixed_pipeline = VK_NULL_HANDLE;
  std::mutex mutex;
  struct Pipeline {
    std::uint32_t block[3];
    VkPipeline pipeline;
  };
  std::vector<Pipeline> pipelines;
};

struct ModuleState {
  DeviceState* device = nullptr;
  VkShaderModule shader = VK_NULL_HANDLE;
  SpirvModuleInfo info;
  bool push_descriptors = false; // buffers are pushed (VK_KHR_push_descriptor), not allocated sets
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  std::mutex mutex;
  std::vector<std::unique_ptr<FunctionState>> functions;
};

bool specialised(const SpirvModuleInfo& info) {
  return info.local_size_spec_id[0] >= 0 || info.local_size_spec_id[1] >= 0 || info.local_size_spec_id[2] >= 0;
}

// The pipeline for one block size (created on first use). Caller holds the function's lock.
Result<VkPipeline> pipeline_for(FunctionState& f, const std::uint32_t block[3]) {
  for (const auto& p : f.pipelines) {
    if (p.block[0] == block[0] && p.block[1] == block[1] && p.block[2] == block[2]) return p.pipeline;
  }
  ModuleState& m = *f.module;
  DeviceState& d = *m.device;
  VkSpecializationMapEntry entries[3];
  std::uint32_t data[3];
  std::uint32_t count = 0;
  for (int i = 0; i < 3; ++i) {
    if (m.info.local_size_spec_id[i] < 0) continue;
    entries[count] = VkSpecializationMapEntry{static_cast<std::uint32_t>(m.info.local_size_spec_id[i]), count * 4u,
                                              sizeof(std::uint32_t)};
    data[count++] = block[i];
  }
  VkSpecializationInfo specialization{count, entries, count * sizeof(std::uint32_t), data};
  VkComputePipelineCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = m.shader;
  info.stage.pName = f.name.c_str();
  info.stage.pSpecializationInfo = count > 0 ? &specialization : nullptr;
  info.layout = m.layout;
  VkPipeline pipeline = VK_NULL_HANDLE;
  DEVRT_VK_CHECK("vkCreateComputePipelines",
                 d.api.vkCreateComputePipelines(d.device, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline));
  f.pipelines.push_back(FunctionState::Pipeline{{block[0], block[1], block[2]}, pipeline});
  return pipeline;
}

// A descriptor set from the stream's pools (reset when the batch finishes). Caller holds the lock.
Result<VkDescriptorSet> allocate_set(StreamState& s, VkDescriptorSetLayout layout) {
  DeviceState& d = *s.device;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!s.recording_pools.empty()) {
      VkDescriptorSetAllocateInfo info{};
      info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
      info.descriptorPool = s.recording_pools.back();
      info.descriptorSetCount = 1;
      info.pSetLayouts = &layout;
      VkDescriptorSet set = VK_NULL_HANDLE;
      VkResult result = d.api.vkAllocateDescriptorSets(d.device, &info, &set);
      if (result == VK_SUCCESS) return set;
      if (result != VK_ERROR_OUT_OF_POOL_MEMORY && result != VK_ERROR_FRAGMENTED_POOL) {
        return vk_error("vkAllocateDescriptorSets", result);
      }
    }
    VkDescriptorPool pool = VK_NULL_HANDLE;
    if (!s.free_pools.empty()) {
      pool = s.free_pools.back();
      s.free_pools.pop_back();
    } else {
      VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kDescriptorsPerPool};
      VkDescriptorPoolCreateInfo info{};
      info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
      info.maxSets = kDescriptorSetsPerPool;
      info.poolSizeCount = 1;
      info.pPoolSizes = &size;
      DEVRT_VK_CHECK("vkCreateDescriptorPool", d.api.vkCreateDescriptorPool(d.device, &info, nullptr, &pool));
    }
    s.recording_pools.push_back(pool);
  }
  return make_error(ErrorCode::out_of_memory, "a fresh descriptor pool could not hold one set");
}

void destroy_module(ModuleState* m) {
  DeviceState& d = *m->device;
  if (!m->functions.empty()) wait_queue_idle(d);
  for (const auto& f : m->functions) {
    for (const auto& p : f->pipelines) d.api.vkDestroyPipeline(d.device, p.pipeline, nullptr);
  }
  if (m->layout != VK_NULL_HANDLE) d.api.vkDestroyPipelineLayout(d.device, m->layout, nullptr);
  if (m->set_layout != VK_NULL_HANDLE) d.api.vkDestroyDescriptorSetLayout(d.device, m->set_layout, nullptr);
  if (m->shader != VK_NULL_HANDLE) d.api.vkDestroyShaderModule(d.device, m->shader, nullptr);
  delete m;
}

std::int64_t driver_version_number(const DeviceState& d) { return d.properties.driverVersion; }

std::string version_text(std::uint32_t version) {
  return std::to_string(VK_API_VERSION_MAJOR(version)) + "." + std::to_string(VK_API_VERSION_MINOR(version)) + "." +
         std::to_string(VK_API_VERSION_PATCH(version));
}

} // namespace

// ---- Discovery -------------------------------------------------------------------------------

Status VulkanBackend::availability() noexcept { return runtime().status; }

Result<std::int32_t> VulkanBackend::device_count() noexcept {
  const Runtime& rt = runtime();
  return rt.status.ok() ? static_cast<std::int32_t>(rt.devices.size()) : 0;
}

Result<AttributeValue> VulkanBackend::get_attribute(std::int32_t device, Attribute attribute) noexcept {
  const DeviceState& d = *runtime().devices[static_cast<std::size_t>(device)];
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

Result<Target> VulkanBackend::detect_target(std::int32_t device) noexcept {
  const DeviceState& d = *runtime().devices[static_cast<std::size_t>(device)];
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
  target.set("device_name", std::string(d.properties.deviceName));
  target.set("driver_name", std::string(d.has_driver_properties ? d.driver.driverName : ""));
  target.set("driver_version", driver_version_number(d));
  target.set("vulkan_api_version", static_cast<std::int64_t>(api));
  target.set("max_spirv_version", spirv);
  return target;
}

// ---- Memory ----------------------------------------------------------------------------------

Result<void*> VulkanBackend::allocate(std::int32_t device, std::size_t nbytes, std::size_t) noexcept {
  DEVRT_VK_DEVICE(d, device);
  VkDeviceSize heap = d.memory.memoryHeaps[d.memory.memoryTypes[d.plan.device_type].heapIndex].size;
  if (nbytes > heap) {
    return make_error(ErrorCode::out_of_memory, "exceeds the ", heap, "-byte memory heap");
  }
  DEVRT_ASSIGN_OR_RETURN(Allocation * allocation, create_allocation(d, nbytes, MemoryUsage::device));
  return static_cast<void*>(allocation);
}

Status VulkanBackend::device_synchronize(std::int32_t device) noexcept {
  DEVRT_VK_DEVICE(d, device);
  Status status;
  std::lock_guard<std::mutex> streams_lock(d.streams_mutex);
  for (StreamState* s : d.streams) {
    std::lock_guard<std::mutex> lock(s->mutex);
    Status drained = drain(*s);
    if (status.ok()) status = drained;
  }
  return status;
}

Status VulkanBackend::free(std::int32_t device, void* ptr) noexcept {
  DEVRT_VK_DEVICE(d, device);
  // Recorded or submitted commands of any stream may still use the buffer (as with cuMemFree,
  // freeing waits for them): submit what is recorded and wait for it, then destroy.
  Status status = device_synchronize(device);
  destroy_allocation(d, static_cast<Allocation*>(ptr));
  return status;
}

Status VulkanBackend::copy(const CopyDesc& desc) noexcept {
  const auto kind = static_cast<std::int32_t>(DeviceKind::vulkan);
  if (desc.src_kind != kind) {
    DEVRT_VK_DEVICE(d, desc.dst_device_id);
    return write_from_host(d, stream_of(d, desc.stream), *static_cast<Allocation*>(desc.dst), desc.dst_offset,
                           static_cast<const std::byte*>(desc.src) + desc.src_offset, desc.nbytes);
  }
  const auto& src = *static_cast<const Allocation*>(desc.src);
  if (desc.dst_kind != kind) {
    DEVRT_VK_DEVICE(d, desc.src_device_id);
    return read_to_host(d, stream_of(d, desc.stream), src, desc.src_offset,
                        static_cast<std::byte*>(desc.dst) + desc.dst_offset, desc.nbytes);
  }
  DEVRT_VK_DEVICE(d, desc.dst_device_id);
  auto& dst = *static_cast<Allocation*>(desc.dst);
  if (desc.src_device_id == desc.dst_device_id) {
    StreamState& s = stream_of(d, desc.stream);
    std::lock_guard<std::mutex> lock(s.mutex);
    return record_copy(s, src.buffer, desc.src_offset, dst.buffer, desc.dst_offset, desc.nbytes);
  }
  // Between two Vulkan devices: through the host, after the source's default stream.
  DEVRT_VK_DEVICE(source, desc.src_device_id);
  std::unique_ptr<std::byte[]> bounce(new (std::nothrow) std::byte[desc.nbytes]);
  if (!bounce) return make_error(ErrorCode::out_of_memory, "no host memory for a bounce buffer");
  DEVRT_RETURN_IF_ERROR(read_to_host(source, *source.default_stream, src, desc.src_offset, bounce.get(), desc.nbytes));
  StreamState& s = stream_of(d, desc.stream);
  DEVRT_RETURN_IF_ERROR(write_from_host(d, s, dst, desc.dst_offset, bounce.get(), desc.nbytes));
  std::lock_guard<std::mutex> lock(s.mutex);
  return drain(s);
}

// ---- Streams and events ----------------------------------------------------------------------

Result<void*> VulkanBackend::stream_create(std::int32_t device) noexcept {
  DEVRT_VK_DEVICE(d, device);
  StreamState* stream = nullptr;
  DEVRT_RETURN_IF_ERROR(create_stream(d, stream));
  return static_cast<void*>(stream);
}

Status VulkanBackend::stream_destroy(std::int32_t device, void* handle) noexcept {
  DEVRT_VK_DEVICE(d, device);
  auto* s = static_cast<StreamState*>(handle);
  {
    std::lock_guard<std::mutex> lock(d.streams_mutex);
    d.streams.erase(std::find(d.streams.begin(), d.streams.end(), s));
  }
  Status status;
  {
    std::lock_guard<std::mutex> lock(s->mutex);
    status = drain(*s);
    if (s->recording != VK_NULL_HANDLE) s->free_commands.push_back(s->recording);
    for (VkDescriptorPool pool : s->free_pools) d.api.vkDestroyDescriptorPool(d.device, pool, nullptr);
    for (VkDescriptorPool pool : s->recording_pools) d.api.vkDestroyDescriptorPool(d.device, pool, nullptr);
    wait_queue_idle(d);
    release_staging(d, s->upload);
    release_staging(d, s->readback);
    d.api.vkDestroyCommandPool(d.device, s->pool, nullptr);
  }
  delete s;
  return status;
}

Status VulkanBackend::stream_synchronize(std::int32_t device, void* handle) noexcept {
  DEVRT_VK_DEVICE(d, device);
  StreamState& s = stream_of(d, handle);
  std::lock_guard<std::mutex> lock(s.mutex);
  return drain(s);
}

Result<void*> VulkanBackend::event_create(std::int32_t device) noexcept {
  DEVRT_VK_DEVICE(d, device);
  static_cast<void>(d);
  auto* event = new (std::nothrow) EventState();
  if (event == nullptr) return make_error(ErrorCode::out_of_memory, "no memory for an event");
  return static_cast<void*>(event);
}

Status VulkanBackend::event_destroy(std::int32_t, void* handle) noexcept {
  delete static_cast<EventState*>(handle);
  return Status();
}

Status VulkanBackend::event_record(std::int32_t device, void* handle, void* stream) noexcept {
  DEVRT_VK_DEVICE(d, device);
  StreamState& s = stream_of(d, stream);
  TimelineRef timeline;
  std::uint64_t value = 0;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    DEVRT_RETURN_IF_ERROR(flush(s));
    timeline = s.timeline;
    value = s.submitted;
  }
  auto* event = static_cast<EventState*>(handle);
  std::lock_guard<std::mutex> lock(event->mutex);
  event->timeline = std::move(timeline);
  event->value = value;
  return Status();
}

Status VulkanBackend::event_synchronize(std::int32_t device, void* handle) noexcept {
  DEVRT_VK_DEVICE(d, device);
  auto [timeline, value] = event_point(*static_cast<EventState*>(handle));
  if (!timeline || value == 0) return Status();
  return wait_value(d, timeline->semaphore, value);
}

Result<bool> VulkanBackend::event_query(std::int32_t device, void* handle) noexcept {
  DEVRT_VK_DEVICE(d, device);
  auto [timeline, value] = event_point(*static_cast<EventState*>(handle));
  if (!timeline || value == 0) return true;
  std::uint64_t reached = 0;
  DEVRT_VK_CHECK("vkGetSemaphoreCounterValue",
                 d.api.vkGetSemaphoreCounterValue(d.device, timeline->semaphore, &reached));
  return reached >= value;
}

Status VulkanBackend::stream_wait_event(std::int32_t device, void* stream, void* handle) noexcept {
  DEVRT_VK_DEVICE(d, device);
  auto [timeline, value] = event_point(*static_cast<EventState*>(handle));
  if (!timeline || value == 0) return Status();
  StreamState& s = stream_of(d, stream);
  std::lock_guard<std::mutex> lock(s.mutex);
  if (timeline == s.timeline) return Status(); // in-order already
  // Work recorded so far does not wait; what follows goes into a batch that does.
  DEVRT_RETURN_IF_ERROR(flush(s));
  s.waits.emplace_back(std::move(timeline), value);
  return Status();
}

// ---- Modules ---------------------------------------------------------------------------------

Result<void*> VulkanBackend::module_load(std::int32_t device, ModuleFormat format, std::span<const std::byte> data,
                                         const char*, BuildLog& log) noexcept {
  if (format != ModuleFormat::spirv) {
    return make_error(ErrorCode::unsupported, "the vulkan backend loads spirv modules, not ",
                      module_format_name(format));
  }
  if (data.size() % 4 != 0) {
    log.append("SPIR-V size is not a multiple of 4 bytes");
    return make_error(ErrorCode::invalid_argument, "SPIR-V must be whole 32-bit words; ", data.size(),
                      " bytes is not a multiple of 4");
  }
  DEVRT_VK_DEVICE(d, device);
  std::vector<std::uint32_t> words(data.size() / 4);
  std::memcpy(words.data(), data.data(), data.size());
  Result<SpirvModuleInfo> info = reflect_spirv(words);
  if (!info.ok()) {
    log.append(info.status().message());
    return std::move(info).status();
  }
  std::uint32_t push_limit = std::min(d.properties.limits.maxPushConstantsSize, kMaxPushConstantBytes);
  if (info->push_constant_bytes > push_limit) {
    return make_error(ErrorCode::unsupported, "the push-constant block needs ", info->push_constant_bytes,
                      " bytes; at most ", push_limit, " are supported here");
  }
  auto module = std::make_unique<ModuleState>();
  module->device = &d;
  module->info = std::move(*info);
  VkShaderModuleCreateInfo shader{};
  shader.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  shader.codeSize = data.size();
  shader.pCode = words.data();
  VkResult result = d.api.vkCreateShaderModule(d.device, &shader, nullptr, &module->shader);
  if (result != VK_SUCCESS) {
    log.append("vkCreateShaderModule rejected the SPIR-V");
    destroy_module(module.release());
    return vk_error("vkCreateShaderModule", result);
  }
  std::vector<VkDescriptorSetLayoutBinding> bindings;
  for (std::uint32_t binding : module->info.storage_bindings) {
    VkDescriptorSetLayoutBinding b{};
    b.binding = binding;
    b.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    b.descriptorCount = 1;
    b.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    bindings.push_back(b);
  }
  module->push_descriptors = d.use_push_descriptors && bindings.size() <= kMaxPushDescriptors;
  VkDescriptorSetLayoutCreateInfo set{};
  set.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  set.flags = module->push_descriptors ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR : 0;
  set.bindingCount = static_cast<std::uint32_t>(bindings.size());
  set.pBindings = bindings.data();
  result = d.api.vkCreateDescriptorSetLayout(d.device, &set, nullptr, &module->set_layout);
  if (result != VK_SUCCESS) {
    destroy_module(module.release());
    return vk_error("vkCreateDescriptorSetLayout", result);
  }
  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, module->info.push_constant_bytes};
  VkPipelineLayoutCreateInfo layout{};
  layout.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  layout.setLayoutCount = 1;
  layout.pSetLayouts = &module->set_layout;
  layout.pushConstantRangeCount = module->info.push_constant_bytes > 0 ? 1 : 0;
  layout.pPushConstantRanges = &push;
  result = d.api.vkCreatePipelineLayout(d.device, &layout, nullptr, &module->layout);
  if (result != VK_SUCCESS) {
    destroy_module(module.release());
    return vk_error("vkCreatePipelineLayout", result);
  }
  return static_cast<void*>(module.release());
}

Status VulkanBackend::module_unload(std::int32_t, void* handle) noexcept {
  destroy_module(static_cast<ModuleState*>(handle));
  return Status();
}

Result<void*> VulkanBackend::module_function(std::int32_t, void* handle, const char* name) noexcept {
  auto* m = static_cast<ModuleState*>(handle);
  std::lock_guard<std::mutex> lock(m->mutex);
  for (const auto& f : m->functions) {
    if (f->name == name) return static_cast<void*>(f.get());
  }
  const SpirvEntryPoint* entry = nullptr;
  for (const SpirvEntryPoint& e : m->info.entry_points) {
    if (e.name == name) entry = &e;
  }
  if (entry == nullptr) {
    std::string names;
    for (const SpirvEntryPoint& e : m->info.entry_points) names += (names.empty() ? "" : ", ") + e.name;
    return make_error(ErrorCode::not_found, "the SPIR-V module has no compute entry point '", name,
                      "' (it has: ", names, ")");
  }
  auto f = std::make_unique<FunctionState>();
  f->module = m;
  f->name = name;
  f->entry = *entry;
  f->signature.known = true;
  for (std::size_t i = 0; i < m->info.storage_bindings.size(); ++i) {
    f->signature.add(detail::KernelParam{detail::KernelParam::Kind::buffer, 0, 0});
  }
  for (const SpirvPushMember& member : m->info.push_members) {
    f->signature.add(detail::KernelParam{detail::KernelParam::Kind::scalar, member.code, member.bits});
  }
  if (!specialised(m->info)) {
    // A fixed workgroup size: build the pipeline now, so shader errors surface here.
    std::lock_guard<std::mutex> function_lock(f->mutex);
    DEVRT_ASSIGN_OR_RETURN(f->fixed_pipeline, pipeline_for(*f, f->entry.local_size));
  }
  void* result = f.get();
  m->functions.push_back(std::move(f));
  return result;
}

Status VulkanBackend::launch(std::int32_t device, void* handle, const LaunchDesc& desc) noexcept {
  auto& f = *static_cast<FunctionState*>(handle);
  ModuleState& m = *f.module;
  DeviceState& d = *m.device;
  const VkPhysicalDeviceLimits& limits = d.properties.limits;
  static_cast<void>(device);
  DEVRT_RETURN_IF_ERROR(detail::check_kernel_args(f.name, f.signature, desc.args, desc.num_args));
  if (desc.dynamic_shared_bytes != 0) {
    return make_error(ErrorCode::unsupported,
                      "Vulkan shaders declare their shared memory statically; dynamic_shared_bytes must be 0");
  }
  std::uint64_t threads = std::uint64_t{desc.block[0]} * desc.block[1] * desc.block[2];
  for (int i = 0; i < 3; ++i) {
    if (desc.block[i] > limits.maxComputeWorkGroupSize[i]) {
      return make_error(ErrorCode::invalid_argument, "block dimension ", i, " of ", desc.block[i],
                        " exceeds max_thread_dimensions ", limits.maxComputeWorkGroupSize[i]);
    }
    if (desc.grid[i] > limits.maxComputeWorkGroupCount[i]) {
      return make_error(ErrorCode::invalid_argument, "grid dimension ", i, " of ", desc.grid[i],
                        " exceeds maxComputeWorkGroupCount ", limits.maxComputeWorkGroupCount[i]);
    }
  }
  if (threads > limits.maxComputeWorkGroupInvocations) {
    return make_error(ErrorCode::invalid_argument, "a block of ", threads, " threads exceeds max_threads_per_block ",
                      limits.maxComputeWorkGroupInvocations);
  }
  for (int i = 0; i < 3; ++i) {
    if (m.info.local_size_spec_id[i] < 0 && desc.block[i] != f.entry.local_size[i]) {
      return make_error(ErrorCode::invalid_argument, "shader '", f.name, "' has a fixed local size ",
                        f.entry.local_size[0], "x", f.entry.local_size[1], "x", f.entry.local_size[2],
                        "; launch with that block or size it with local_size_x_id/y_id/z_id");
    }
  }
  VkPipeline pipeline = f.fixed_pipeline;
  if (pipeline == VK_NULL_HANDLE) {
    std::lock_guard<std::mutex> lock(f.mutex);
    DEVRT_ASSIGN_OR_RETURN(pipeline, pipeline_for(f, desc.block));
  }
  VkDescriptorBufferInfo buffers[kMaxKernelArgs];
  VkWriteDescriptorSet writes[kMaxKernelArgs];
  TouchedRange ranges[kMaxKernelArgs];
  unsigned char push[kMaxPushConstantBytes];
  std::memset(push, 0, m.info.push_constant_bytes); // padding between members
  std::uint32_t buffer_count = 0;
  std::uint32_t scalar_index = 0;
  for (std::uint32_t i = 0; i < desc.num_args; ++i) {
    const devrt_kernel_arg& arg = desc.args[i];
    if (arg.kind == DEVRT_ARG_BUFFER) {
      const auto* allocation = static_cast<const Allocation*>(arg.buffer);
      if (allocation == nullptr || arg.size == 0) {
        return make_error(ErrorCode::invalid_argument, "argument ", i, ": a storage buffer needs at least one byte");
      }
      if (arg.offset % limits.minStorageBufferOffsetAlignment != 0) {
        return make_error(ErrorCode::invalid_argument, "argument ", i, ": offset ", arg.offset,
                          " is not a multiple of minStorageBufferOffsetAlignment ",
                          limits.minStorageBufferOffsetAlignment);
      }
      VkDeviceSize range = std::min<VkDeviceSize>(arg.size, limits.maxStorageBufferRange);
      buffers[buffer_count] = VkDescriptorBufferInfo{allocation->buffer, arg.offset, range};
      ranges[buffer_count] = TouchedRange{allocation->buffer, arg.offset, arg.offset + range};
      VkWriteDescriptorSet& w = writes[buffer_count];
      w = VkWriteDescriptorSet{};
      w.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
      w.dstBinding = m.info.storage_bindings[buffer_count];
      w.descriptorCount = 1;
      w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      w.pBufferInfo = &buffers[buffer_count];
      ++buffer_count;
    } else {
      const SpirvPushMember& member = m.info.push_members[scalar_index++];
      std::memcpy(push + member.offset, arg.value.bytes, member.bits / 8u);
    }
  }
  StreamState& s = stream_of(d, desc.stream);
  std::lock_guard<std::mutex> lock(s.mutex);
  DEVRT_RETURN_IF_ERROR(begin(s));
  order_command(s, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, {ranges, buffer_count});
  if (s.bound_pipeline != pipeline) {
    d.api.vkCmdBindPipeline(s.recording, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    s.bound_pipeline = pipeline;
  }
  // Pushed state of the same layout stays bound across dispatches; another layout disturbs it.
  if (s.pushed_layout != m.layout) {
    s.pushed_layout = m.layout;
    s.pushed_buffer_count = UINT32_MAX;
    s.pushed_constant_bytes = UINT32_MAX;
  }
  if (buffer_count > 0 && m.push_descriptors) {
    const bool same = s.pushed_buffer_count == buffer_count &&
                      std::memcmp(s.pushed_buffers, buffers, buffer_count * sizeof(VkDescriptorBufferInfo)) == 0;
    if (!same) {
      d.api.vkCmdPushDescriptorSetKHR(s.recording, VK_PIPELINE_BIND_POINT_COMPUTE, m.layout, 0, buffer_count, writes);
      std::memcpy(s.pushed_buffers, buffers, buffer_count * sizeof(VkDescriptorBufferInfo));
      s.pushed_buffer_count = buffer_count;
    }
  } else if (buffer_count > 0) {
    DEVRT_ASSIGN_OR_RETURN(VkDescriptorSet set, allocate_set(s, m.set_layout));
    for (std::uint32_t i = 0; i < buffer_count; ++i) writes[i].dstSet = set;
    d.api.vkUpdateDescriptorSets(d.device, buffer_count, writes, 0, nullptr);
    d.api.vkCmdBindDescriptorSets(s.recording, VK_PIPELINE_BIND_POINT_COMPUTE, m.layout, 0, 1, &set, 0, nullptr);
  }
  const std::uint32_t constant_bytes = m.info.push_constant_bytes;
  if (constant_bytes > 0 &&
      (s.pushed_constant_bytes != constant_bytes || std::memcmp(s.pushed_constants, push, constant_bytes) != 0)) {
    d.api.vkCmdPushConstants(s.recording, m.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, constant_bytes, push);
    std::memcpy(s.pushed_constants, push, constant_bytes);
    s.pushed_constant_bytes = constant_bytes;
  }
  d.api.vkCmdDispatch(s.recording, desc.grid[0], desc.grid[1], desc.grid[2]);
  return recorded(s);
}

} // namespace devrt::vulkan

DEVRT_REGISTER_BACKEND(vulkan, devrt::vulkan::VulkanBackend)
