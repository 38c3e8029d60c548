// SPDX-License-Identifier: Apache-2.0
// The Vulkan backend's state, shared by its files (internal):
//   vulkan_backend.cpp  the instance, discovery, devices, attributes and the detected target;
//   vulkan_stream.cpp   buffers, streams (recording, batching, submission), copies and events;
//   vulkan_module.cpp   SPIR-V modules, pipelines and launches;
//   vulkan_image.cpp    textures (memory scopes global.texture*) as storage images.
// Locking: a device's queue_mutex guards its queue, streams_mutex its stream list; each stream,
// event, module and function has its own mutex (see vulkan_backend.hpp).
#ifndef DEVRT_SRC_BACKENDS_VULKAN_VULKAN_STATE_HPP
#define DEVRT_SRC_BACKENDS_VULKAN_VULKAN_STATE_HPP

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <devrt/backend/backend.hpp>

#include "backend_support/gpu_freed_buffers.hpp"

#include "backend_support/kernel_signature.hpp"
#include "support/dynamic_library.hpp"
#include "vulkan_api.hpp"
#include "vulkan_memory.hpp"
#include "vulkan_spirv.hpp"

namespace devrt::vulkan {

// ---- Errors ----------------------------------------------------------------------------------

// driver_error (out_of_memory for the two out-of-memory results) naming the call and the result.
[[gnu::cold]] Status vk_error(const char* call, VkResult result);

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
// one chunk while the host fills or drains the other. DEVRT_VULKAN_STAGING_CHUNK=<bytes> (4 KiB
// to kStagingChunk) makes them smaller, so that tests reach multi-chunk copies with little data.
constexpr VkDeviceSize kStagingChunk = VkDeviceSize{8} << 20;
constexpr VkDeviceSize kMinStagingChunk = 4096;
constexpr std::uint32_t kStagingSlots = 2;
// Host writes this small (and 4-byte aligned) are recorded inline with vkCmdUpdateBuffer.
constexpr VkDeviceSize kInlineUpdateBytes = 65536;
// Every implementation supports at least 32 push descriptors (maxPushDescriptors).
constexpr std::size_t kMaxPushDescriptors = 32;
// The most bytes of scalars a kernel may take in a uniform buffer (TVM's form past 128 bytes of
// push constants): each launch writes them into a host-visible buffer of this size from its
// stream's pool, which the batch holds until the device has run it.
constexpr std::uint32_t kMaxUniformBytes = 4096;
// Ranges a stream remembers since its last barrier; beyond that the next command gets a barrier.
constexpr std::size_t kTrackedRanges = 16;

// ---- State -----------------------------------------------------------------------------------

struct DeviceState;
struct StreamState;

// An object whose destruction waits for the queue to go idle (DeviceState::retired).
struct Retired {
  void (*destroy)(DeviceState& d, void* object);
  void* object;
};

struct Allocation {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  std::byte* mapped = nullptr; // persistently mapped when host-visible
  bool coherent = true;
  std::uint32_t memory_type = 0; // the index of `memory`'s type
};

// A timeline semaphore shared by a stream and the events recorded on it, so an event outlives
// its stream safely. Reference-counted by TimelineRef (no std::shared_ptr: its control block's
// vtable would differ between this -fno-rtti code and RTTI users of the same template).
struct Timeline {
  DeviceState* device = nullptr;
  VkSemaphore semaphore = VK_NULL_HANDLE;
  std::atomic<std::uint32_t> references{1};
  // The stream that signals it while that stream lives (cleared, under owner_mutex, when it is
  // destroyed), and the last value it submitted: a timed event recorded into a batch not yet
  // submitted asks the stream to submit it (submit_through).
  std::mutex owner_mutex;
  StreamState* owner = nullptr;
  std::atomic<std::uint64_t> submitted{0};
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
  std::vector<Allocation*> uniforms;
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
  // Uniform buffers of the launches being recorded, and free ones (kMaxUniformBytes each).
  std::vector<Allocation*> recording_uniforms;
  std::vector<Allocation*> free_uniforms;
  std::vector<std::pair<TimelineRef, std::uint64_t>> waits;
  std::deque<Batch> in_flight;
  std::vector<VkCommandBuffer> free_commands;
  std::vector<VkDescriptorPool> free_pools;
  StagingRing upload;
  StagingRing readback;
  // A graph's recorder (vulkan_graph.cpp): its command buffer is begun for simultaneous use and
  // never submitted by the stream, however many commands it takes.
  bool reusable = false;
};

// A physical device as discovery found it (Runtime::devices); open_device makes its DeviceState
// from it.
struct PhysicalDevice {
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
  std::uint32_t timestamp_valid_bits = 0; // the compute family's; 0: no timestamps
};

// An open device: made by VulkanBackend::open_device (its BackendDevice's state) and destroyed by
// close_device, once none of its objects is left (devrt counts them).
struct DeviceState : PhysicalDevice {
  // Set by the first VK_ERROR_DEVICE_LOST: every later call to the device fails with `lost_call`.
  std::atomic<bool> lost{false};
  std::mutex lost_mutex;
  const char* lost_call = nullptr; // under lost_mutex
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  std::mutex queue_mutex;
  DeviceApi api;
  MemoryPlan plan; // memory types by purpose (vulkan_memory.hpp)
  VkDeviceSize staging_chunk = kStagingChunk;
  StreamState* default_stream = nullptr;
  std::mutex streams_mutex;
  std::vector<StreamState*> streams; // every live stream, the default one included
  // Objects a submission may still use, kept because a wait for the queue failed: destroyed by
  // the next wait_queue_idle that succeeds (device_synchronize tries one while any are kept).
  std::mutex retired_mutex;
  std::vector<Retired> retired;
  std::atomic<bool> has_retired{false};
  // Timestamp queries for timed events (vulkan_event.cpp): pools of kQueriesPerPool, a slot per
  // live timed event.
  std::mutex query_mutex;
  std::vector<VkQueryPool> query_pools;
  std::vector<std::pair<VkQueryPool, std::uint32_t>> free_queries;
};

// Waits until the device's queue is idle, before destroying what a submission referred to; then
// destroys what earlier failed waits kept. False when the wait failed (the queue may still run
// work); VK_ERROR_DEVICE_LOST counts as idle, as the specification says of waits on a lost device.
// Thread-safe; the caller holds no lock of the device but a stream's.
bool wait_queue_idle(DeviceState& d) noexcept;
// Destroys `object` with `destroy` once the queue is idle: now when a wait succeeds, else kept in
// d.retired. Takes ownership. Thread-safe.
void destroy_when_idle(DeviceState& d, Retired object) noexcept;
template <class T, void (*Destroy)(DeviceState&, T*)>
Retired make_retired(T* object) noexcept {
  return Retired{[](DeviceState& d, void* erased) { Destroy(d, static_cast<T*>(erased)); }, object};
}
// After a loss: the pending cross-stream waits of every stream are dropped (nothing will flush
// them), so the timelines they hold are destroyed. Thread-safe; caller holds no stream lock.
void forget_lost_work(DeviceState& d) noexcept;

struct Runtime {
  Status status;
  detail::DynamicLibrary library;
  GlobalApi api;
  VkInstance instance = VK_NULL_HANDLE;
  std::uint32_t instance_version = VK_API_VERSION_1_0;
  std::vector<PhysicalDevice> devices;
  // The open devices (waited for at process exit).
  std::mutex open_mutex;
  std::vector<DeviceState*> open;
};

// The backend's process-wide state, discovered on first use.
Runtime& runtime() noexcept;
// The allocations this backend freed lately (backend_support/gpu_freed_buffers.hpp): copies and launches
// check their handles here before dereferencing them.
detail::FreedBuffers& freed_buffers() noexcept;
// The device, lost or not: for destroying what was made on it.
inline DeviceState& opened_device(const BackendDevice& device) noexcept { return backend_state<DeviceState>(device); }
// The device; after a loss, the loss. Thread-safe.
Result<DeviceState*> usable_device(DeviceState& d) noexcept;
inline Result<DeviceState*> device_of(const BackendDevice& device) noexcept {
  return usable_device(opened_device(device));
}
// vk_error for a call on `d`; VK_ERROR_DEVICE_LOST also marks the device lost for good.
[[gnu::cold]] Status device_error(DeviceState& d, const char* call, VkResult result) noexcept;

#define DEVRT_VK_DEVICE(var, device)                                                                                   \
  Result<DeviceState*> var##_result = device_of(device);                                                               \
  if (!var##_result.ok()) return std::move(var##_result).status();                                                     \
  DeviceState& var = **var##_result

// ---- Buffers and streams (vulkan_stream.cpp) ----------------------------------------------------

// The memory type for a resource with `needs`: the plan's for `usage` when the resource allows it,
// else the best other that does; kNoMemoryType when none.
std::uint32_t memory_type_for(const DeviceState& d, const VkMemoryRequirements& needs, MemoryUsage usage);
// vkAllocateMemory of needs.size bytes of `type` into `out`.
VkResult allocate_memory(DeviceState& d, const VkMemoryRequirements& needs, std::uint32_t type, VkDeviceMemory& out);
// A VkBuffer with its own memory of the type `usage` plans for, mapped when host-visible.
Result<Allocation*> create_allocation(DeviceState& d, VkDeviceSize size, MemoryUsage usage);
void destroy_allocation(DeviceState& d, Allocation* a);
// Non-coherent mappings need explicit flushes (to the device) and invalidations (from it).
void flush_mapping(DeviceState& d, const Allocation& a, bool to_device);
// Submits and waits for everything on the stream; nothing of it can conflict with later commands
// any more. Caller holds the lock.
Status drain(StreamState& s);
// Ends the recording command buffer and submits it (with the stream's pending waits), signalling
// the stream's next timeline value. Caller holds the lock.
Status flush(StreamState& s);
// Submits `commands` (none: only the waits) with the stream's pending waits on other streams,
// signalling the stream's next timeline value (s.submitted once it succeeded; the waits are then
// cleared). Caller holds the lock and keeps `commands` alive until that value is reached.
VkResult submit_commands(StreamState& s, VkCommandBuffer commands);
// Waits until `semaphore` reaches `value`; a loss marks the device lost.
Status wait_value(DeviceState& d, VkSemaphore semaphore, std::uint64_t value);
// Frees what the stream's finished batches held. Caller holds the lock.
void retire(StreamState& s);
// The next slot of a staging ring, free for the host: waits for the batch that last used it
// (submitting it first if it is still being recorded). Caller holds the lock.
Result<StagingSlot*> acquire_staging(StreamState& s, StagingRing& ring, MemoryUsage usage);
// The busy_until of a staging slot whose copy was just recorded: the batch being recorded, or the
// one just submitted if the copy filled it. Caller holds the lock.
inline std::uint64_t staging_busy_until(const StreamState& s) {
  return s.recording != VK_NULL_HANDLE ? s.submitted + 1 : s.submitted;
}

// `listed`: among d.streams (device_synchronize drains it); a graph's recorder is not.
Status create_stream(DeviceState& d, StreamState*& out, bool listed = true);
// What a stream holds that its submissions used (staging buffers, descriptor pools, the command
// pool with its command buffers, its timeline), once the queue is idle; deletes the stream.
void destroy_stream_objects(DeviceState& d, StreamState* s);
// Makes the writes of the commands recorded since the last barrier (at `src_stages`) visible to
// what follows at `dst_stages`. Caller holds the lock.
void barrier(StreamState& s, VkPipelineStageFlags src_stages, VkPipelineStageFlags dst_stages,
             VkAccessFlags dst_access);
// Finishes the stream's work and destroys it (whatever the work's outcome, which it returns).
Status destroy_stream(DeviceState& d, StreamState* s);
// The stream a handle names; null is the device's default stream.
StreamState& stream_of(DeviceState& d, void* handle) noexcept;
// Starts a command buffer for the stream when it has none recording. Caller holds s.mutex.
Status begin(StreamState& s);
// Orders a command after the earlier ones that touched the same ranges (a barrier when needed).
void order_command(StreamState& s, VkPipelineStageFlags stage, std::span<const TouchedRange> ranges);
// Counts a recorded command; submits the batch when it is full. Caller holds s.mutex.
Status recorded(StreamState& s);

struct EventState {
  std::mutex mutex;
  TimelineRef timeline; // null: never recorded
  std::uint64_t value = 0;
  // A timed event's timestamp query, written by each record() (vulkan_event.cpp).
  VkQueryPool pool = VK_NULL_HANDLE;
  std::uint32_t query = 0;
};

// ---- Timed events (vulkan_event.cpp) ------------------------------------------------------------

// A new timed event with a query slot of its own; `unsupported` where the compute queue family has
// no timestamps.
Result<EventState*> create_timed_event(DeviceState& d);
// Gives a timed event's query slot back (the event is being destroyed).
void release_query(DeviceState& d, EventState& e) noexcept;
// Records the timed event's timestamp into the stream's command buffer. Caller holds the lock.
Status write_timestamp(StreamState& s, const EventState& e);
// Submits the batch that will signal `value` on `timeline` if its stream has not yet (a timed
// event is recorded without submitting, so that it shares a batch with the work it times).
Status submit_through(const TimelineRef& timeline, std::uint64_t value);
// Nanoseconds between two timed events' timestamps, both recorded and reached.
Result<std::int64_t> elapsed_between(DeviceState& d, EventState& start, EventState& end);
// Destroys the device's query pools (closing it).
void destroy_query_pools(DeviceState& d) noexcept;

// ---- Modules (vulkan_module.cpp) --------------------------------------------------------------

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
  std::uint32_t rewritten = 0;   // Pow instructions define_pow replaced
  bool push_descriptors = false; // buffers are pushed (VK_KHR_push_descriptor), not allocated sets
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  std::mutex mutex;
  std::vector<std::unique_ptr<FunctionState>> functions;
};

} // namespace devrt::vulkan

#endif // DEVRT_SRC_BACKENDS_VULKAN_VULKAN_STATE_HPP
