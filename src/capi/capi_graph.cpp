// SPDX-License-Identifier: Apache-2.0
// The C API's graphs (include/devrt/devrt.h) over devrt/graph.hpp.
#include "capi_internal.hpp"

using namespace devrt;
using namespace devrt::capi;

static_assert(DEVRT_GRAPH_MODE_NATIVE == static_cast<int>(GraphMode::native) &&
              DEVRT_GRAPH_MODE_RECORDED == static_cast<int>(GraphMode::recorded) &&
              DEVRT_GRAPH_MODE_MIXED == static_cast<int>(GraphMode::mixed));

extern "C" {

devrt_status devrt_graph_begin_capture(const devrt_stream_ref* stream) {
  if (stream == nullptr) return null_argument("devrt_graph_begin_capture", "stream");
  return to_status(begin_capture(to_cpp(stream)));
}

devrt_status devrt_graph_end_capture(const devrt_stream_ref* stream, devrt_graph* out) {
  if (stream == nullptr) return null_argument("devrt_graph_end_capture", "stream");
  if (out == nullptr) return null_argument("devrt_graph_end_capture", "out");
  Result<Graph> graph = end_capture(to_cpp(stream));
  if (!graph.ok()) return fail(graph.status());
  return give_handle(out, "devrt_graph_end_capture", std::move(*graph));
}

devrt_status devrt_graph_is_capturing(const devrt_stream_ref* stream, int* out) {
  if (stream == nullptr) return null_argument("devrt_graph_is_capturing", "stream");
  if (out == nullptr) return null_argument("devrt_graph_is_capturing", "out");
  *out = is_capturing(to_cpp(stream)) ? 1 : 0;
  return DEVRT_STATUS_OK;
}

devrt_status devrt_graph_launch(devrt_graph graph, const devrt_stream_ref* stream) {
  if ((graph = resolve(graph, "devrt_graph_launch")) == nullptr) return devrt_last_error_code();
  const StreamRef on = stream != nullptr ? to_cpp(stream) : current_stream(graph->graph.device());
  return to_status(graph->graph.launch(on));
}

devrt_status devrt_graph_update(devrt_graph graph, size_t launch_index, const devrt_kernel_arg* args, size_t num_args) {
  if ((graph = resolve(graph, "devrt_graph_update")) == nullptr) return devrt_last_error_code();
  Result<std::vector<KernelArg>> converted = to_kernel_args(args, num_args, "devrt_graph_update");
  if (!converted.ok()) return fail(converted.status());
  return to_status(graph->graph.update(launch_index, std::span<const KernelArg>(converted->data(), converted->size())));
}

devrt_status devrt_graph_info(devrt_graph graph, size_t* node_count, size_t* launch_count, int32_t* mode) {
  if ((graph = resolve(graph, "devrt_graph_info")) == nullptr) return devrt_last_error_code();
  if (node_count != nullptr) *node_count = graph->graph.node_count();
  if (launch_count != nullptr) *launch_count = graph->graph.launch_count();
  if (mode != nullptr) *mode = static_cast<int32_t>(graph->graph.mode());
  return DEVRT_STATUS_OK;
}

void devrt_graph_release(devrt_graph graph) { delete retire(graph, "devrt_graph_release"); }

} // extern "C"
