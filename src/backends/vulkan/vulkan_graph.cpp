// SPDX-License-Identifier: Apache-2.0
// Graphs of the Vulkan backend: a run of launches and copies recorded once into a command buffer
// begun for simultaneous use (not one-time submit), by the same code that records a stream's
// launches and copies, and submitted whole on the replaying stream's timeline.
#include <memory>
#include <mutex>
#include <new>

#include "backend_support/gpu_launch.hpp"
#include "vulkan_backend.hpp"
#include "vulkan_state.hpp"

namespace devrt::vulkan {
namespace {

struct GraphState {
  StreamState* recorder = nullptr; // owns the command pool, the command buffer and descriptor pools
  VkCommandBuffer commands = VK_NULL_HANDLE;
};

constexpr VkPipelineStageFlags kWorkStages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;

void destroy_graph_objects(DeviceState& d, GraphState* g) {
  destroy_stream_objects(d, g->recorder);
  delete g;
}

// Ends the recording: everything the graph wrote is made visible to what follows it on the queue
// and to the host, as a stream's batch ends. Caller holds the recorder's lock.
Status end_recording(StreamState& s, VkCommandBuffer& out) {
  DeviceState& d = *s.device;
  barrier(s, kWorkStages, kWorkStages | VK_PIPELINE_STAGE_HOST_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
              VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT);
  DEVRT_VK_CHECK("vkEndCommandBuffer", d.api.vkEndCommandBuffer(s.recording));
  out = s.recording;
  s.recording = VK_NULL_HANDLE;
  return Status();
}

Status record_nodes(VulkanBackend& backend, const BackendDevice& device, StreamState& recorder,
                    std::span<const devrt_graph_node> nodes) {
  {
    std::lock_guard<std::mutex> lock(recorder.mutex);
    DEVRT_RETURN_IF_ERROR(begin(recorder));
    // The first command waits for everything submitted before the graph (a barrier's first scope
    // covers earlier submissions to the queue).
    recorder.touched_overflow = true;
    recorder.pending_stages = kWorkStages;
  }
  return detail::issue_graph_nodes(backend, device, &recorder, nodes);
}

} // namespace

Result<void*> VulkanBackend::graph_create(const BackendDevice& device, void*,
                                          std::span<const devrt_graph_node> nodes) noexcept {
  DEVRT_VK_DEVICE(d, device);
  if (!d.has_timeline) return make_error(ErrorCode::unsupported, "graphs need timeline semaphores");
  std::unique_ptr<GraphState> g(new (std::nothrow) GraphState());
  if (!g) return make_error(ErrorCode::out_of_memory, "no host memory for a graph");
  DEVRT_RETURN_IF_ERROR(create_stream(d, g->recorder, false));
  g->recorder->reusable = true;
  Status status = record_nodes(*this, device, *g->recorder, nodes);
  if (status.ok()) {
    std::lock_guard<std::mutex> lock(g->recorder->mutex);
    status = end_recording(*g->recorder, g->commands);
  }
  if (!status.ok()) {
    destroy_graph_objects(d, g.release()); // never submitted
    return status;
  }
  return static_cast<void*>(g.release());
}

Status VulkanBackend::graph_launch(const BackendDevice& device, void* graph, void* stream) noexcept {
  DEVRT_VK_DEVICE(d, device);
  auto& g = *static_cast<GraphState*>(graph);
  StreamState& s = stream_of(d, stream);
  std::lock_guard<std::mutex> lock(s.mutex);
  DEVRT_RETURN_IF_ERROR(flush(s)); // the stream's earlier work, and its pending waits, go first
  const VkResult result = submit_commands(s, g.commands);
  if (result != VK_SUCCESS) return device_error(d, "vkQueueSubmit", result);
  Batch batch; // the command buffer stays the graph's
  batch.value = s.submitted;
  s.in_flight.push_back(std::move(batch));
  // What the stream records next does not know what the graph touched: it waits for all of it.
  s.touched_overflow = true;
  s.pending_stages |= kWorkStages;
  return Status();
}

Status VulkanBackend::graph_destroy(const BackendDevice& device, void* graph) noexcept {
  DeviceState& d = opened_device(device);
  destroy_when_idle(d, make_retired<GraphState, destroy_graph_objects>(static_cast<GraphState*>(graph)));
  return Status();
}

} // namespace devrt::vulkan
