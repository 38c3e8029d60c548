// SPDX-License-Identifier: Apache-2.0
// Events of the Vulkan backend: a point on a stream's timeline semaphore. A timed event also owns a
// timestamp query, reset and written (vkCmdWriteTimestamp at the bottom of the pipe: once every
// earlier command of the queue has finished) into its stream's command buffer by each record(),
// without submitting it, and read back with vkGetQueryPoolResults once the event's timeline value
// is reached. Ticks become nanoseconds by the device's timestampPeriod over the family's
// timestampValidBits (vulkan_timing.hpp).
#include <mutex>
#include <new>
#include <utility>

#include "vulkan_backend.hpp"
#include "vulkan_state.hpp"
#include "vulkan_timing.hpp"

namespace devrt::vulkan {

namespace {

std::pair<TimelineRef, std::uint64_t> event_point(EventState& e) {
  std::lock_guard<std::mutex> lock(e.mutex);
  return {e.timeline, e.value};
}

} // namespace

namespace {

constexpr std::uint32_t kQueriesPerPool = 64;

// The timestamp of a timed event whose timeline value was reached.
Result<std::uint64_t> read_timestamp(DeviceState& d, EventState& e, const char* which) {
  TimelineRef timeline;
  std::uint64_t value = 0;
  {
    std::lock_guard<std::mutex> lock(e.mutex);
    timeline = e.timeline;
    value = e.value;
  }
  if (!timeline || value == 0) {
    return make_error(ErrorCode::invalid_argument, "the ", which, " event was never recorded");
  }
  DEVRT_RETURN_IF_ERROR(submit_through(timeline, value));
  std::uint64_t reached = 0;
  VkResult result = d.api.vkGetSemaphoreCounterValue(d.device, timeline->semaphore, &reached);
  if (result != VK_SUCCESS) return device_error(d, "vkGetSemaphoreCounterValue", result);
  if (reached < value) {
    return make_error(ErrorCode::unavailable, "the ", which, " event has not completed (synchronize it first)");
  }
  std::uint64_t ticks = 0;
  result = d.api.vkGetQueryPoolResults(d.device, e.pool, e.query, 1, sizeof ticks, &ticks, sizeof ticks,
                                       VK_QUERY_RESULT_64_BIT);
  if (result == VK_NOT_READY) {
    return make_error(ErrorCode::unavailable, "the ", which, " event's timestamp is not available yet");
  }
  if (result != VK_SUCCESS) return device_error(d, "vkGetQueryPoolResults", result);
  return ticks;
}

} // namespace

Result<EventState*> create_timed_event(DeviceState& d) {
  if (d.timestamp_valid_bits == 0) {
    return make_error(ErrorCode::unsupported, d.properties.deviceName,
                      ": its compute queue family has no timestamps (timestampValidBits 0)");
  }
  auto* event = new (std::nothrow) EventState();
  if (event == nullptr) return make_error(ErrorCode::out_of_memory, "no memory for an event");
  std::lock_guard<std::mutex> lock(d.query_mutex);
  if (d.free_queries.empty()) {
    VkQueryPoolCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = kQueriesPerPool;
    VkQueryPool pool = VK_NULL_HANDLE;
    if (VkResult result = d.api.vkCreateQueryPool(d.device, &info, nullptr, &pool); result != VK_SUCCESS) {
      delete event;
      return device_error(d, "vkCreateQueryPool", result);
    }
    d.query_pools.push_back(pool);
    for (std::uint32_t q = kQueriesPerPool; q-- > 0;) d.free_queries.emplace_back(pool, q);
  }
  event->pool = d.free_queries.back().first;
  event->query = d.free_queries.back().second;
  d.free_queries.pop_back();
  return event;
}

void release_query(DeviceState& d, EventState& e) noexcept {
  if (e.pool == VK_NULL_HANDLE) return;
  std::lock_guard<std::mutex> lock(d.query_mutex);
  d.free_queries.emplace_back(e.pool, e.query);
}

Status write_timestamp(StreamState& s, const EventState& e) {
  DEVRT_RETURN_IF_ERROR(begin(s));
  const DeviceState& d = *s.device;
  d.api.vkCmdResetQueryPool(s.recording, e.pool, e.query, 1);
  d.api.vkCmdWriteTimestamp(s.recording, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, e.pool, e.query);
  return Status();
}

Result<std::int64_t> elapsed_between(DeviceState& d, EventState& start, EventState& end) {
  if (start.pool == VK_NULL_HANDLE || end.pool == VK_NULL_HANDLE) {
    return make_error(ErrorCode::invalid_argument, "the ", start.pool == VK_NULL_HANDLE ? "start" : "end",
                      " event is not timed");
  }
  DEVRT_ASSIGN_OR_RETURN(std::uint64_t from, read_timestamp(d, start, "start"));
  DEVRT_ASSIGN_OR_RETURN(std::uint64_t to, read_timestamp(d, end, "end"));
  return timestamp_interval_ns(from, to, d.timestamp_valid_bits, d.properties.limits.timestampPeriod);
}

void destroy_query_pools(DeviceState& d) noexcept {
  std::lock_guard<std::mutex> lock(d.query_mutex);
  for (VkQueryPool pool : d.query_pools) d.api.vkDestroyQueryPool(d.device, pool, nullptr);
  d.query_pools.clear();
  d.free_queries.clear();
}

Result<void*> VulkanBackend::event_create_timed(const BackendDevice& device) noexcept {
  DEVRT_VK_DEVICE(d, device);
  DEVRT_ASSIGN_OR_RETURN(EventState * event, create_timed_event(d));
  return static_cast<void*>(event);
}

Result<std::int64_t> VulkanBackend::event_elapsed(const BackendDevice& device, void* start, void* end) noexcept {
  DEVRT_VK_DEVICE(d, device);
  return elapsed_between(d, *static_cast<EventState*>(start), *static_cast<EventState*>(end));
}

Result<void*> VulkanBackend::event_create(const BackendDevice& device) noexcept {
  DEVRT_VK_DEVICE(d, device);
  static_cast<void>(d);
  auto* event = new (std::nothrow) EventState();
  if (event == nullptr) return make_error(ErrorCode::out_of_memory, "no memory for an event");
  return static_cast<void*>(event);
}

Status VulkanBackend::event_destroy(const BackendDevice& device, void* handle) noexcept {
  auto* event = static_cast<EventState*>(handle);
  // A lost device's events are destroyed too, their query slots given back: nothing leaks.
  if (event->pool != VK_NULL_HANDLE) release_query(opened_device(device), *event);
  delete event;
  return Status();
}

Status VulkanBackend::event_record(const BackendDevice& device, void* handle, void* stream) noexcept {
  DEVRT_VK_DEVICE(d, device);
  StreamState& s = stream_of(d, stream);
  TimelineRef timeline;
  std::uint64_t value = 0;
  auto* event = static_cast<EventState*>(handle);
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (event->pool != VK_NULL_HANDLE) {
      // Into the batch being recorded, submitted with the work that follows (or when the event
      // is waited for): the interval measures the device, not the host's recording in between.
      DEVRT_RETURN_IF_ERROR(write_timestamp(s, *event));
      DEVRT_RETURN_IF_ERROR(recorded(s));
      value = s.recording != VK_NULL_HANDLE ? s.submitted + 1 : s.submitted;
    } else {
      DEVRT_RETURN_IF_ERROR(flush(s));
      value = s.submitted;
    }
    timeline = s.timeline;
  }
  std::lock_guard<std::mutex> lock(event->mutex);
  event->timeline = std::move(timeline);
  event->value = value;
  return Status();
}

Status VulkanBackend::event_synchronize(const BackendDevice& device, void* handle) noexcept {
  DEVRT_VK_DEVICE(d, device);
  auto [timeline, value] = event_point(*static_cast<EventState*>(handle));
  if (!timeline || value == 0) return Status();
  DEVRT_RETURN_IF_ERROR(submit_through(timeline, value));
  return wait_value(d, timeline->semaphore, value);
}

Result<bool> VulkanBackend::event_query(const BackendDevice& device, void* handle) noexcept {
  DEVRT_VK_DEVICE(d, device);
  auto [timeline, value] = event_point(*static_cast<EventState*>(handle));
  if (!timeline || value == 0) return true;
  DEVRT_RETURN_IF_ERROR(submit_through(timeline, value));
  std::uint64_t reached = 0;
  VkResult result = d.api.vkGetSemaphoreCounterValue(d.device, timeline->semaphore, &reached);
  if (result != VK_SUCCESS) return device_error(d, "vkGetSemaphoreCounterValue", result);
  return reached >= value;
}

Status VulkanBackend::stream_wait_event(const BackendDevice& device, void* stream, void* handle) noexcept {
  DEVRT_VK_DEVICE(d, device);
  auto [timeline, value] = event_point(*static_cast<EventState*>(handle));
  if (!timeline || value == 0) return Status();
  DEVRT_RETURN_IF_ERROR(submit_through(timeline, value));
  StreamState& s = stream_of(d, stream);
  std::lock_guard<std::mutex> lock(s.mutex);
  if (timeline == s.timeline) return Status(); // in-order already
  // Work recorded so far does not wait; what follows goes into a batch that does.
  DEVRT_RETURN_IF_ERROR(flush(s));
  s.waits.emplace_back(std::move(timeline), value);
  return Status();
}

} // namespace devrt::vulkan
