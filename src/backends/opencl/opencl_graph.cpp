// SPDX-License-Identifier: Apache-2.0
// OpenCL graphs: a run of launches baked into a cl_khr_command_buffer and replayed.
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <utility>
#include <vector>

#include "opencl_backend.hpp"
#include "opencl_kernel.hpp"
#include "opencl_state.hpp"
#include "support/fault_injection.hpp"

namespace devrt::opencl {

// ---- Graphs: cl_khr_command_buffer ------------------------------------------------------------

namespace {

struct ClGraph {
  const CommandBufferApi* api = nullptr; // the device's
  cl_command_buffer_khr commands = nullptr;
  std::vector<cl_mem> sub_buffers; // offset arguments, released with the graph
  std::vector<cl_kernel> kernels;  // one per launch, armed once
  std::mutex mutex;
  std::vector<std::pair<cl_command_queue, cl_event>> last_replay; // per queue, when sub_buffers exist
};

// Whether the device bakes graphs: the extension, replays that may overlap (simultaneous use),
// and no queue property required that devrt's in-order queues lack; `out` its functions.
Status resolve_command_buffers(const Api& api, ClDevice& d) {
  if (d.extensions.find("cl_khr_command_buffer") == std::string::npos) {
    return make_error(ErrorCode::unsupported, "the device lacks cl_khr_command_buffer");
  }
  cl_device_command_buffer_capabilities_khr capabilities = 0;
  cl_command_queue_properties required = 0;
  DEVRT_CL_CHECK("clGetDeviceInfo(CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR)",
                 api.clGetDeviceInfo(d.id, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR, sizeof capabilities,
                                     &capabilities, nullptr));
  DEVRT_CL_CHECK("clGetDeviceInfo(CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR)",
                 api.clGetDeviceInfo(d.id, CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR, sizeof required,
                                     &required, nullptr));
  if ((capabilities & CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR) == 0 || required != 0) {
    return make_error(ErrorCode::unsupported, "the device's command buffers cannot overlap replays");
  }
  using GetAddress = void* (*)(cl_platform_id, const char*);
  GetAddress get = nullptr;
  if (!runtime().library.resolve("clGetExtensionFunctionAddressForPlatform", get) || get == nullptr) {
    return make_error(ErrorCode::unsupported, "clGetExtensionFunctionAddressForPlatform is missing");
  }
  CommandBufferApi& out = d.command_buffers;
  bool complete = true;
#define DEVRT_OPENCL_TAKE(name)                                                                                        \
  {                                                                                                                    \
    void* address = get(d.platform, #name);                                                                            \
    std::memcpy(&out.name, &address, sizeof address);                                                                  \
    complete = complete && address != nullptr;                                                                         \
  }
  DEVRT_OPENCL_COMMAND_BUFFER_SYMBOLS(DEVRT_OPENCL_TAKE)
#undef DEVRT_OPENCL_TAKE
  if (!complete) {
    return make_error(ErrorCode::unsupported, "the platform does not resolve cl_khr_command_buffer's functions");
  }
  DEVRT_FAULT_WRAP_SYMBOLS("opencl", out, DEVRT_OPENCL_COMMAND_BUFFER_SYMBOLS);
  return Status();
}

// The device's command-buffer functions, resolved once; unsupported (kept) where it has none, a
// driver error (tried again at the next graph) where a query failed.
Result<const CommandBufferApi*> command_buffer_api(const Api& api, ClDevice& d) {
  std::lock_guard<std::mutex> lock(*d.graph_mutex);
  if (d.graph_support < 0) {
    Status resolved = resolve_command_buffers(api, d);
    if (resolved.code() == ErrorCode::unsupported) {
      d.graph_support = 0;
      d.graph_unsupported.assign(resolved.message());
    } else if (!resolved.ok()) {
      return resolved;
    } else {
      d.graph_support = 1;
    }
  }
  if (d.graph_support == 0) return make_error(ErrorCode::unsupported, d.graph_unsupported);
  return &d.command_buffers;
}

// Records one launch into the command buffer after `*point`, which becomes the launch's.
Status record_kernel(const Api& api, const ClDevice& d, ClGraph& g, const devrt_graph_node& node,
                     cl_sync_point_khr* point, bool first) {
  auto& f = *static_cast<ClFunction*>(node.function);
  DEVRT_ASSIGN_OR_RETURN(std::int32_t local_arg, check_launch(f, d, node.launch));
  // A kernel object of the graph's own: PoCL 3.1's command buffers read a kernel's arguments when
  // they run, not when recorded, so f's kernel, re-armed by every later launch, would change them.
  cl_program program = nullptr;
  DEVRT_CL_CHECK("clGetKernelInfo(CL_KERNEL_PROGRAM)",
                 api.clGetKernelInfo(f.kernel, CL_KERNEL_PROGRAM, sizeof program, &program, nullptr));
  cl_int err = CL_SUCCESS;
  cl_kernel kernel = api.clCreateKernel(program, f.name.c_str(), &err);
  if (err != CL_SUCCESS) return cl_error("clCreateKernel", err);
  g.kernels.push_back(kernel);
  OwnedBuffers owned(api);
  DEVRT_RETURN_IF_ERROR(set_arguments(kernel, d, node.launch, local_arg, owned));
  g.sub_buffers.insert(g.sub_buffers.end(), owned.buffers, owned.buffers + owned.count);
  owned.count = 0;
  std::size_t global[3], local[3];
  for (int i = 0; i < 3; ++i) {
    global[i] = std::size_t{node.launch.grid[i]} * node.launch.block[i];
    local[i] = node.launch.block[i];
  }
  const cl_uint dims = global[2] > 1 ? 3 : global[1] > 1 ? 2 : 1;
  const cl_sync_point_khr after = *point;
  DEVRT_CL_CHECK("clCommandNDRangeKernelKHR",
                 g.api->clCommandNDRangeKernelKHR(g.commands, nullptr, nullptr, kernel, dims, nullptr, global, local,
                                                  first ? 0 : 1, first ? nullptr : &after, point, nullptr));
  return Status();
}

void release_graph(const Api& api, ClGraph* g) {
  if (g->commands != nullptr) static_cast<void>(g->api->clReleaseCommandBufferKHR(g->commands));
  for (cl_mem mem : g->sub_buffers) static_cast<void>(api.clReleaseMemObject(mem));
  for (cl_kernel kernel : g->kernels) static_cast<void>(api.clReleaseKernel(kernel));
  for (auto& [queue, event] : g->last_replay) static_cast<void>(api.clReleaseEvent(event));
  delete g;
}

Status record_graph(const Api& api, const ClDevice& d, ClGraph& g, std::span<const devrt_graph_node> nodes) {
  cl_sync_point_khr point = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const devrt_graph_node& node = nodes[i];
    if (node.type == DEVRT_GRAPH_NODE_LAUNCH) {
      DEVRT_RETURN_IF_ERROR(record_kernel(api, d, g, node, &point, i == 0));
      continue;
    }
    const cl_sync_point_khr after = point;
    DEVRT_RETURN_IF_ERROR(freed_buffers().check(node.copy.src, "the source"));
    DEVRT_RETURN_IF_ERROR(freed_buffers().check(node.copy.dst, "the destination"));
    DEVRT_CL_CHECK(
        "clCommandCopyBufferKHR",
        g.api->clCommandCopyBufferKHR(g.commands, nullptr, static_cast<cl_mem>(const_cast<void*>(node.copy.src)),
                                      static_cast<cl_mem>(node.copy.dst), node.copy.src_offset, node.copy.dst_offset,
                                      node.copy.nbytes, i == 0 ? 0 : 1, i == 0 ? nullptr : &after, &point, nullptr));
  }
  DEVRT_CL_CHECK("clFinalizeCommandBufferKHR", g.api->clFinalizeCommandBufferKHR(g.commands));
  return Status();
}

} // namespace

Result<void*> OpenclBackend::graph_create(const BackendDevice& device, void*,
                                          std::span<const devrt_graph_node> nodes) noexcept {
  const Api& api = runtime().api;
  ClDevice& d = state_of(device);
  DEVRT_ASSIGN_OR_RETURN(const CommandBufferApi* functions, command_buffer_api(api, d));
  std::unique_ptr<ClGraph> g(new (std::nothrow) ClGraph());
  if (!g) return make_error(ErrorCode::out_of_memory, "no host memory for a graph");
  g->api = functions;
  const cl_command_buffer_properties_khr properties[] = {CL_COMMAND_BUFFER_FLAGS_KHR,
                                                         CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR, 0};
  cl_command_queue queue = d.queue;
  cl_int err = CL_SUCCESS;
  g->commands = g->api->clCreateCommandBufferKHR(1, &queue, properties, &err);
  if (err != CL_SUCCESS) {
    g->commands = nullptr;
    return cl_error("clCreateCommandBufferKHR", err);
  }
  Status recorded = record_graph(api, d, *g, nodes);
  if (!recorded.ok()) {
    release_graph(api, g.release());
    return recorded;
  }
  return static_cast<void*>(g.release());
}

Status OpenclBackend::graph_launch(const BackendDevice& device, void* graph, void* stream) noexcept {
  const Api& api = runtime().api;
  auto& g = *static_cast<ClGraph*>(graph);
  cl_command_queue queue = queue_of(state_of(device), stream);
  if (g.sub_buffers.empty()) {
    DEVRT_CL_CHECK("clEnqueueCommandBufferKHR",
                   g.api->clEnqueueCommandBufferKHR(1, &queue, g.commands, 0, nullptr, nullptr));
    return Status();
  }
  // Sub-buffers are released with the graph: it keeps each queue's last replay to wait for then.
  cl_event event = nullptr;
  DEVRT_CL_CHECK("clEnqueueCommandBufferKHR",
                 g.api->clEnqueueCommandBufferKHR(1, &queue, g.commands, 0, nullptr, &event));
  std::lock_guard<std::mutex> lock(g.mutex);
  for (auto& [q, last] : g.last_replay) {
    if (q != queue) continue;
    static_cast<void>(api.clReleaseEvent(last));
    last = event;
    return Status();
  }
  g.last_replay.emplace_back(queue, event);
  return Status();
}

Status OpenclBackend::graph_destroy(const BackendDevice&, void* graph) noexcept {
  const Api& api = runtime().api;
  auto* g = static_cast<ClGraph*>(graph);
  // The command buffer itself lives until its pending replays end (the extension's reference
  // count); the sub-buffers it reads are released after the last replay on each queue.
  Status status;
  for (auto& [queue, event] : g->last_replay) {
    cl_int code = api.clWaitForEvents(1, &event);
    if (code != CL_SUCCESS && status.ok()) status = cl_error("clWaitForEvents", code);
  }
  release_graph(api, g);
  return status;
}

} // namespace devrt::opencl
