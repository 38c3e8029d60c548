// SPDX-License-Identifier: Apache-2.0
// Buffers, streams (recording, batching, submission) and copies of the Vulkan backend; events are
// in vulkan_event.cpp.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <mutex>
#include <new>
#include <utility>

#include "vulkan_backend.hpp"
#include "vulkan_staging.hpp"
#include "vulkan_state.hpp"

namespace devrt::vulkan {

// ---- Buffers ---------------------------------------------------------------------------------

std::uint32_t memory_type_for(const DeviceState& d, const VkMemoryRequirements& needs, MemoryUsage usage) {
  const std::uint32_t planned = usage == MemoryUsage::device   ? d.plan.device_type
                                : usage == MemoryUsage::upload ? d.plan.upload_type
                                                               : d.plan.readback_type;
  if (planned != kNoMemoryType && (needs.memoryTypeBits & (1u << planned)) != 0) return planned;
  return choose_memory_type(d.memory, needs.memoryTypeBits, usage);
}

VkResult allocate_memory(DeviceState& d, const VkMemoryRequirements& needs, std::uint32_t type, VkDeviceMemory& out) {
  VkMemoryAllocateInfo allocate{};
  allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  allocate.allocationSize = needs.size;
  allocate.memoryTypeIndex = type;
  return d.api.vkAllocateMemory(d.device, &allocate, nullptr, &out);
}

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
  // Host-visible staging also carries launches' uniform buffers (kMaxUniformBytes).
  info.usage =
      usage != MemoryUsage::device
          ? VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT
          : VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult result = d.api.vkCreateBuffer(d.device, &info, nullptr, &a->buffer);
  if (result != VK_SUCCESS) {
    destroy_allocation(d, a);
    return vk_error("vkCreateBuffer", result);
  }
  VkMemoryRequirements needs{};
  d.api.vkGetBufferMemoryRequirements(d.device, a->buffer, &needs);
  const std::uint32_t type = memory_type_for(d, needs, usage);
  if (type == kNoMemoryType) {
    destroy_allocation(d, a);
    return make_error(ErrorCode::unsupported, "no memory type of ", d.properties.deviceName, " fits a buffer (bits 0x",
                      needs.memoryTypeBits, ")");
  }
  // The call that failed, for the error.
  const char* call = "vkAllocateMemory";
  a->memory_type = type;
  result = allocate_memory(d, needs, type, a->memory);
  if (result == VK_SUCCESS) {
    call = "vkBindBufferMemory";
    result = d.api.vkBindBufferMemory(d.device, a->buffer, a->memory, 0);
  }
  VkMemoryPropertyFlags flags = d.memory.memoryTypes[type].propertyFlags;
  const bool map = usage != MemoryUsage::device || d.plan.map_buffers;
  if (result == VK_SUCCESS && map && (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0) {
    void* pointer = nullptr;
    call = "vkMapMemory";
    result = d.api.vkMapMemory(d.device, a->memory, 0, VK_WHOLE_SIZE, 0, &pointer);
    a->mapped = static_cast<std::byte*>(pointer);
    a->coherent = (flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
  }
  if (result != VK_SUCCESS) {
    destroy_allocation(d, a);
    return device_error(d, call, result);
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

void retire(StreamState& s) {
  if (s.in_flight.empty()) return;
  DeviceState& d = *s.device;
  std::uint64_t done = 0;
  VkResult result = d.api.vkGetSemaphoreCounterValue(d.device, s.timeline->semaphore, &done);
  if (result != VK_SUCCESS) {
    // Nothing retires now; a loss is remembered, so the next call reports it.
    static_cast<void>(device_error(d, "vkGetSemaphoreCounterValue", result));
    return;
  }
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
    s.free_uniforms.insert(s.free_uniforms.end(), batch.uniforms.begin(), batch.uniforms.end());
    s.in_flight.pop_front();
  }
}

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

namespace {

// After a failed end or submit: the recorded commands never run. The command buffer and the
// descriptor pools go back for reuse, staging slots reserved for the batch are free again (the
// value they waited for is the next submission's, which no longer carries their copy), and the
// stream records afresh. Pending waits on other streams stay for the next batch (their values
// were submitted, so they cannot hang it, and later work stays ordered after them) unless the
// device is lost. The error names the call. Caller holds the lock.
Status discard_recording(StreamState& s, const char* call, VkResult result) {
  DeviceState& d = *s.device;
  if (s.recording != VK_NULL_HANDLE) {
    static_cast<void>(d.api.vkResetCommandBuffer(s.recording, 0));
    s.free_commands.push_back(s.recording);
  }
  for (VkDescriptorPool pool : s.recording_pools) {
    static_cast<void>(d.api.vkResetDescriptorPool(d.device, pool, 0));
    s.free_pools.push_back(pool);
  }
  for (StagingRing* ring : {&s.upload, &s.readback}) {
    for (StagingSlot& slot : ring->slots) {
      if (slot.busy_until > s.submitted) slot.busy_until = 0;
    }
  }
  s.recording_pools.clear();
  s.free_uniforms.insert(s.free_uniforms.end(), s.recording_uniforms.begin(), s.recording_uniforms.end());
  s.recording_uniforms.clear();
  s.recording = VK_NULL_HANDLE;
  s.commands = 0;
  Status error = device_error(d, call, result);
  if (d.lost.load(std::memory_order_acquire)) s.waits.clear();
  return error;
}

} // namespace

VkResult submit_commands(StreamState& s, VkCommandBuffer commands) {
  DeviceState& d = *s.device;
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
  submit.commandBufferCount = commands != VK_NULL_HANDLE ? 1 : 0;
  submit.pCommandBuffers = &commands;
  submit.signalSemaphoreCount = 1;
  submit.pSignalSemaphores = &s.timeline->semaphore;
  VkResult result;
  {
    std::lock_guard<std::mutex> lock(d.queue_mutex);
    result = d.api.vkQueueSubmit(d.queue, 1, &submit, VK_NULL_HANDLE);
  }
  if (result != VK_SUCCESS) return result;
  s.submitted = value;
  s.timeline->submitted.store(value, std::memory_order_release);
  s.waits.clear();
  return VK_SUCCESS;
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
    if (result != VK_SUCCESS) return discard_recording(s, "vkEndCommandBuffer", result);
    batch.commands = s.recording;
  }
  VkResult result = submit_commands(s, batch.commands);
  if (result != VK_SUCCESS) return discard_recording(s, "vkQueueSubmit", result);
  batch.value = s.submitted;
  batch.pools = std::move(s.recording_pools);
  s.recording_pools.clear();
  batch.uniforms = std::move(s.recording_uniforms);
  s.recording_uniforms.clear();
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
  VkResult result = d.api.vkWaitSemaphores(d.device, &wait, UINT64_MAX);
  if (result != VK_SUCCESS) return device_error(d, "vkWaitSemaphores", result);
  return Status();
}

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

namespace {

Status record_copy(StreamState& s, VkBuffer src, VkDeviceSize src_offset, VkBuffer dst, VkDeviceSize dst_offset,
                   VkDeviceSize size) {
  DEVRT_RETURN_IF_ERROR(begin(s));
  const TouchedRange ranges[2] = {{src, src_offset, src_offset + size}, {dst, dst_offset, dst_offset + size}};
  order_command(s, VK_PIPELINE_STAGE_TRANSFER_BIT, ranges);
  VkBufferCopy region{src_offset, dst_offset, size};
  s.device->api.vkCmdCopyBuffer(s.recording, src, dst, 1, &region);
  return recorded(s);
}

} // namespace

Result<StagingSlot*> acquire_staging(StreamState& s, StagingRing& ring, MemoryUsage usage) {
  DeviceState& d = *s.device;
  StagingSlot& slot = ring.slots[ring.next];
  ring.next = (ring.next + 1) % kStagingSlots;
  if (slot.busy_until > s.submitted) DEVRT_RETURN_IF_ERROR(flush(s));
  if (slot.busy_until > 0) DEVRT_RETURN_IF_ERROR(wait_value(d, s.timeline->semaphore, slot.busy_until));
  if (slot.allocation == nullptr) {
    DEVRT_ASSIGN_OR_RETURN(slot.allocation, create_allocation(d, d.staging_chunk, usage));
  }
  return &slot;
}

void release_staging(DeviceState& d, StagingRing& ring) {
  for (StagingSlot& slot : ring.slots) {
    if (slot.allocation != nullptr) destroy_allocation(d, slot.allocation);
    slot = StagingSlot{};
  }
}

namespace {

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
  return upload_in_bands(s, src, n,
                         chunked_bands(n, d.staging_chunk, [&](VkBuffer staging, std::size_t at, std::size_t bytes) {
                           return record_copy(s, staging, 0, dst.buffer, offset + at, bytes);
                         }));
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
  return read_back_in_bands(s, dst,
                            chunked_bands(n, d.staging_chunk, [&](VkBuffer staging, std::size_t at, std::size_t bytes) {
                              return record_copy(s, src.buffer, offset + at, staging, 0, bytes);
                            }));
}

} // namespace

Status create_stream(DeviceState& d, StreamState*& out, bool listed) {
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
  out->timeline->owner = out;
  if (listed) {
    std::lock_guard<std::mutex> lock(d.streams_mutex);
    d.streams.push_back(out);
  }
  return Status();
}

Status submit_through(const TimelineRef& timeline, std::uint64_t value) {
  if (timeline->submitted.load(std::memory_order_acquire) >= value) return Status();
  std::lock_guard<std::mutex> owner_lock(timeline->owner_mutex);
  StreamState* s = timeline->owner;
  if (s == nullptr) return Status(); // destroyed: it submitted and drained everything first
  std::lock_guard<std::mutex> lock(s->mutex);
  return s->submitted >= value ? Status() : flush(*s);
}

StreamState& stream_of(DeviceState& d, void* handle) noexcept {
  return handle != nullptr ? *static_cast<StreamState*>(handle) : *d.default_stream;
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
  info.flags = s.reusable ? VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT : VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
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

// A command was recorded: submit once the batch is long enough.
Status recorded(StreamState& s) {
  if (++s.commands >= kMaxCommandsPerBatch && !s.reusable) return flush(s);
  return Status();
}

// ---- Memory ----------------------------------------------------------------------------------

Result<void*> VulkanBackend::allocate(const BackendDevice& device, std::size_t nbytes, std::size_t) noexcept {
  DEVRT_VK_DEVICE(d, device);
  VkDeviceSize heap = d.memory.memoryHeaps[d.memory.memoryTypes[d.plan.device_type].heapIndex].size;
  if (nbytes > heap) {
    return make_error(ErrorCode::out_of_memory, "exceeds the ", heap, "-byte memory heap");
  }
  DEVRT_ASSIGN_OR_RETURN(Allocation * allocation, create_allocation(d, nbytes, MemoryUsage::device));
  freed_buffers().allocated(allocation);
  return static_cast<void*>(allocation);
}

void forget_lost_work(DeviceState& d) noexcept {
  std::vector<std::pair<TimelineRef, std::uint64_t>> dropped;
  {
    std::lock_guard<std::mutex> streams_lock(d.streams_mutex);
    for (StreamState* s : d.streams) {
      std::lock_guard<std::mutex> lock(s->mutex);
      std::move(s->waits.begin(), s->waits.end(), std::back_inserter(dropped));
      s->waits.clear();
    }
  }
  // The timelines go here, outside the locks (a destroyed one waits for the queue).
}

Status VulkanBackend::device_synchronize(const BackendDevice& device) noexcept {
  Result<DeviceState*> opened = device_of(device);
  if (!opened.ok()) {
    DeviceState& d = opened_device(device);
    if (d.lost.load(std::memory_order_acquire)) forget_lost_work(d);
    return std::move(opened).status();
  }
  DeviceState& d = **opened;
  Status status;
  {
    std::lock_guard<std::mutex> streams_lock(d.streams_mutex);
    for (StreamState* s : d.streams) {
      std::lock_guard<std::mutex> lock(s->mutex);
      Status drained = drain(*s);
      if (status.ok()) status = drained;
    }
  }
  // Objects kept after an earlier failed wait for the queue: destroyed once a wait succeeds.
  if (d.has_retired.load(std::memory_order_acquire)) static_cast<void>(wait_queue_idle(d));
  return status;
}

Status VulkanBackend::free(const BackendDevice& device, void* ptr) noexcept {
  // A lost device still destroys what it holds (Vulkan allows it): nothing leaks.
  DeviceState& d = opened_device(device);
  auto* allocation = static_cast<Allocation*>(ptr);
  // Recorded or submitted commands of any stream may still use the buffer (as with cuMemFree,
  // freeing waits for them): submit what is recorded and wait for it, then destroy. When that
  // failed (a failed submission, a lost device), earlier batches may still run: the queue is
  // waited for first.
  Status status = device_synchronize(device);
  freed_buffers().freed(allocation);
  if (status.ok()) {
    destroy_allocation(d, allocation);
  } else {
    destroy_when_idle(d, make_retired<Allocation, destroy_allocation>(allocation));
  }
  return status;
}

Status VulkanBackend::copy(const CopyDesc& desc) noexcept {
  const auto kind = static_cast<std::int32_t>(VulkanBackend::kind);
  if (desc.src_kind == kind) DEVRT_RETURN_IF_ERROR(freed_buffers().check(desc.src, "the source"));
  if (desc.dst_kind == kind) DEVRT_RETURN_IF_ERROR(freed_buffers().check(desc.dst, "the destination"));
  if (desc.src_kind != kind) {
    DEVRT_VK_DEVICE(d, *desc.dst_device);
    return write_from_host(d, stream_of(d, desc.stream), *static_cast<Allocation*>(desc.dst), desc.dst_offset,
                           static_cast<const std::byte*>(desc.src) + desc.src_offset, desc.nbytes);
  }
  const auto& src = *static_cast<const Allocation*>(desc.src);
  if (desc.dst_kind != kind) {
    DEVRT_VK_DEVICE(d, *desc.src_device);
    return read_to_host(d, stream_of(d, desc.stream), src, desc.src_offset,
                        static_cast<std::byte*>(desc.dst) + desc.dst_offset, desc.nbytes);
  }
  DEVRT_VK_DEVICE(d, *desc.dst_device);
  auto& dst = *static_cast<Allocation*>(desc.dst);
  if (desc.src_device == desc.dst_device) {
    StreamState& s = stream_of(d, desc.stream);
    std::lock_guard<std::mutex> lock(s.mutex);
    return record_copy(s, src.buffer, desc.src_offset, dst.buffer, desc.dst_offset, desc.nbytes);
  }
  // Between two Vulkan devices: through the host, after the source's default stream.
  DEVRT_VK_DEVICE(source, *desc.src_device);
  std::unique_ptr<std::byte[]> bounce(new (std::nothrow) std::byte[desc.nbytes]);
  if (!bounce) return make_error(ErrorCode::out_of_memory, "no host memory for a bounce buffer");
  DEVRT_RETURN_IF_ERROR(read_to_host(source, *source.default_stream, src, desc.src_offset, bounce.get(), desc.nbytes));
  StreamState& s = stream_of(d, desc.stream);
  DEVRT_RETURN_IF_ERROR(write_from_host(d, s, dst, desc.dst_offset, bounce.get(), desc.nbytes));
  std::lock_guard<std::mutex> lock(s.mutex);
  return drain(s);
}

// ---- Streams and events ----------------------------------------------------------------------

Result<void*> VulkanBackend::stream_create(const BackendDevice& device) noexcept {
  DEVRT_VK_DEVICE(d, device);
  StreamState* stream = nullptr;
  DEVRT_RETURN_IF_ERROR(create_stream(d, stream));
  return static_cast<void*>(stream);
}

Status VulkanBackend::stream_destroy(const BackendDevice& device, void* handle) noexcept {
  return destroy_stream(opened_device(device), static_cast<StreamState*>(handle));
}

void destroy_stream_objects(DeviceState& d, StreamState* s) {
  for (VkDescriptorPool pool : s->free_pools) d.api.vkDestroyDescriptorPool(d.device, pool, nullptr);
  for (VkDescriptorPool pool : s->recording_pools) d.api.vkDestroyDescriptorPool(d.device, pool, nullptr);
  for (Batch& batch : s->in_flight) {
    for (VkDescriptorPool pool : batch.pools) d.api.vkDestroyDescriptorPool(d.device, pool, nullptr);
    for (Allocation* uniform : batch.uniforms) destroy_allocation(d, uniform);
  }
  for (Allocation* uniform : s->free_uniforms) destroy_allocation(d, uniform);
  for (Allocation* uniform : s->recording_uniforms) destroy_allocation(d, uniform);
  release_staging(d, s->upload);
  release_staging(d, s->readback);
  d.api.vkDestroyCommandPool(d.device, s->pool, nullptr);
  delete s;
}

Status destroy_stream(DeviceState& d, StreamState* s) {
  {
    std::lock_guard<std::mutex> lock(d.streams_mutex);
    d.streams.erase(std::find(d.streams.begin(), d.streams.end(), s));
  }
  Status status;
  {
    // Events keep the timeline: from now on they find no stream to ask (everything is submitted).
    std::lock_guard<std::mutex> owner_lock(s->timeline->owner_mutex);
    std::lock_guard<std::mutex> lock(s->mutex);
    status = drain(*s);
    // Unsubmitted work never runs; after a loss, neither do the waits.
    s->waits.clear();
    s->timeline->owner = nullptr;
  }
  // Whatever the drain's outcome, nothing is destroyed while the queue may still use it.
  destroy_when_idle(d, make_retired<StreamState, destroy_stream_objects>(s));
  return status;
}

Status VulkanBackend::stream_synchronize(const BackendDevice& device, void* handle) noexcept {
  DEVRT_VK_DEVICE(d, device);
  StreamState& s = stream_of(d, handle);
  std::lock_guard<std::mutex> lock(s.mutex);
  return drain(s);
}

} // namespace devrt::vulkan
