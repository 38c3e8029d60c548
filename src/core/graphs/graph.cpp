// SPDX-License-Identifier: Apache-2.0
// Captured work graphs (devrt/graph.hpp): the capture table the entry points consult, the
// recorded nodes, their runs baked by the backend (graph_create), replay and update.
#include <devrt/graph.hpp>

#include <algorithm>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <devrt/backend/detail/memory_checks.hpp>
#include <devrt/backend/detail/mutex.hpp>
#include <devrt/backend/registry.hpp>
#include <devrt/log.hpp>

#include "core/devices/device_record.hpp"
#include "core/execution/capture_hooks.hpp"
#include "core/graphs/device_graphs.hpp"
#include "core/graphs/graph_state.hpp"
#include "core/memory/stream_pool.hpp"

namespace devrt {
namespace detail {

std::atomic<int> g_active_captures{0};

namespace {

// Guards every device's capture (DeviceGraphs::capture; captures are rare, their calls not hot).
Mutex g_captures_mutex;
// Guards every device's list of live graphs (DeviceGraphs::graphs).
Mutex g_graphs_mutex;

void destroy_device_graphs(RoomSlot* slot) noexcept {
  auto* graphs = static_cast<DeviceGraphs*>(slot);
  g_touched_ranges.fetch_sub(static_cast<int>(graphs->touched.size()), std::memory_order_relaxed);
  delete graphs;
}

// The capture on `device`, if one is in progress, else null. Caller holds g_captures_mutex.
Capture* capture_on(Device device) noexcept {
  DeviceGraphs* slot = device_graphs(find_device_record(device));
  return slot != nullptr && slot->capture.graph != nullptr ? &slot->capture : nullptr;
}

// Ends the capture of `graph`'s device. Caller holds g_captures_mutex.
void end_capture_of(const GraphState& graph) noexcept {
  DeviceGraphs* slot = device_graphs(find_device_record(graph.device));
  if (slot == nullptr || slot->capture.graph != &graph) return;
  slot->capture = Capture{};
  g_active_captures.fetch_sub(1, std::memory_order_relaxed);
}

Status other_stream_error(const char* call, StreamRef stream, const Capture& c) noexcept {
  if (stream.handle == nullptr) {
    return make_error(ErrorCode::invalid_argument, stream.device, " ", call,
                      " on the default stream (no stream was given) while stream ", c.stream,
                      " is being captured (begin_capture): pass the capturing stream to record it in the graph, "
                      "or issue it after end_capture");
  }
  return make_error(ErrorCode::invalid_argument, stream.device, " ", call, " on stream ", stream.handle,
                    " while stream ", c.stream,
                    " is being captured (begin_capture): pass the capturing stream to record it in the graph, "
                    "or issue it after end_capture (other streams of the device are refused until then)");
}

// The capture of `stream`'s device when it is `stream` that is captured. Null otherwise: with
// *answer the refusal naming `call` when the device captures another stream, else empty (no
// capture concerns the call). Caller holds g_captures_mutex.
Capture* capture_of(const char* call, StreamRef stream, std::optional<Status>& answer) noexcept {
  Capture* c = capture_on(stream.device);
  if (c != nullptr && c->stream != stream.handle) {
    answer = other_stream_error(call, stream, *c);
    return nullptr;
  }
  return c;
}

bool recorded_in(const Capture& c, void* event) noexcept {
  const std::vector<void*>& recorded = c.graph->recorded_events;
  return std::find(recorded.begin(), recorded.end(), event) != recorded.end();
}

// A refusal on the capturing stream itself also ends the capture in error (the graph would miss
// the call), as CUDA invalidates a capture.
Status refuse_in_capture(Capture& c, Status error) noexcept {
  if (c.graph->first_error.ok()) c.graph->first_error = error;
  return error;
}

bool bakeable(const GraphNode& node) noexcept {
  return node.kind == DEVRT_GRAPH_NODE_LAUNCH || node.kind == DEVRT_GRAPH_NODE_COPY;
}

devrt_graph_node backend_node(const GraphNode& node) noexcept {
  devrt_graph_node out{};
  out.type = node.kind;
  out.function = node.function;
  out.launch = node.launch;
  out.launch.args = node.args.data();
  out.launch.stream = nullptr;
  out.copy = node.copy;
  out.copy.stream = nullptr;
  return out;
}

// Bakes one run (unsupported leaves it to the core). Other errors are returned.
Status bake(GraphState& g, GraphRun& run) noexcept {
  BackendRef backend(g.backend);
  if (!backend.has_graphs()) return Status();
  std::vector<devrt_graph_node> nodes;
  nodes.reserve(run.count);
  for (std::size_t i = 0; i < run.count; ++i) nodes.push_back(backend_node(g.nodes[run.first + i]));
  Result<void*> native = backend.graph_create(g.device.id, g.captured_stream, nodes);
  if (native.ok()) {
    run.native = *native;
    return Status();
  }
  return native.status().code() == ErrorCode::unsupported ? Status() : std::move(native).status();
}

void destroy_runs(GraphState& g) noexcept {
  for (GraphRun& run : g.runs) {
    if (run.native == nullptr) continue;
    Status status = BackendRef(g.backend).graph_destroy(g.device.id, run.native);
    if (!status.ok()) DEVRT_LOG(error, "Graph: ", status.message());
    run.native = nullptr;
  }
}

Status build_runs(GraphState& g) noexcept {
  for (std::size_t i = 0; i < g.nodes.size();) {
    if (!bakeable(g.nodes[i])) {
      ++i;
      continue;
    }
    GraphRun run{i, 0, nullptr};
    while (i < g.nodes.size() && bakeable(g.nodes[i])) ++i, ++run.count;
    g.runs.push_back(run);
    DEVRT_RETURN_IF_ERROR(bake(g, g.runs.back()));
  }
  return Status();
}

void destroy_graph(GraphState* g) noexcept {
  {
    LockGuard lock(g_graphs_mutex);
    if (DeviceGraphs* slot = device_graphs(find_device_record(g->device))) std::erase(slot->graphs, g);
  }
  destroy_runs(*g);
  delete g;
}

} // namespace

DeviceGraphs* claim_device_graphs(DeviceRecord& record) noexcept {
  if (DeviceGraphs* slot = device_graphs(&record)) [[likely]]
    return slot;
  auto* made = new (std::nothrow) DeviceGraphs();
  if (made == nullptr) return nullptr;
  made->destroy = &destroy_device_graphs;
  RoomSlot* none = nullptr;
  if (record.graphs.compare_exchange_strong(none, made, std::memory_order_acq_rel)) return made;
  delete made; // another thread made it first
  return static_cast<DeviceGraphs*>(none);
}

std::optional<Status> capture_launch(Device device, void* function, void* module, std::string_view kernel,
                                     const devrt_launch_desc& desc) noexcept {
  LockGuard lock(g_captures_mutex);
  std::optional<Status> answer;
  Capture* c = capture_of("launch", StreamRef{device, desc.stream}, answer);
  if (c == nullptr) return answer;
  GraphNode node;
  node.kind = DEVRT_GRAPH_NODE_LAUNCH;
  node.function = function;
  node.module = module;
  node.kernel.assign(kernel);
  node.launch = desc;
  node.args.assign(desc.args, desc.args + desc.num_args);
  c->graph->launches.push_back(c->graph->nodes.size());
  graph_touch_node(*c->graph, node);
  c->graph->nodes.push_back(std::move(node));
  return Status();
}

std::optional<Status> capture_copy(BackendRef handler, Device side, const MemorySpan& src, std::size_t src_offset,
                                   const MemorySpan& dst, std::size_t dst_offset, std::size_t nbytes,
                                   StreamRef stream) noexcept {
  LockGuard lock(g_captures_mutex);
  // A host read of the capturing device is named as such, on whichever stream it was issued.
  if (Capture* any = capture_on(side); any != nullptr && handler && dst.device != side) {
    Status error =
        make_error(ErrorCode::invalid_argument, "copy ", src.device, " -> ", dst.device, " while stream ", any->stream,
                   " is being captured: a host read of device memory cannot be captured (read it after "
                   "end_capture, or after replaying the graph)");
    return any->stream == stream.handle ? refuse_in_capture(*any, error) : error;
  }
  std::optional<Status> answer;
  Capture* c = capture_of("copy", StreamRef{side, stream.handle}, answer);
  if (c == nullptr) return answer;
  if (!handler) {
    return refuse_in_capture(*c, make_error(ErrorCode::invalid_argument, "copy ", src.device, " -> ", dst.device,
                                            " during a capture: a copy staged through the host cannot be captured"));
  }
  GraphNode node;
  node.kind = src.device == side ? DEVRT_GRAPH_NODE_COPY : kHostCopyNode;
  node.copy = make_copy_desc(src, src_offset, dst, dst_offset, nbytes, nullptr);
  node.src_device = src.device;
  node.dst_device = dst.device;
  graph_touch_node(*c->graph, node);
  c->graph->nodes.push_back(std::move(node));
  return Status();
}

std::optional<Status> capture_event_record(void* event, StreamRef stream) noexcept {
  LockGuard lock(g_captures_mutex);
  std::optional<Status> answer;
  Capture* c = capture_of("Event::record", stream, answer);
  if (c == nullptr) return answer;
  GraphNode node;
  node.kind = kEventRecordNode;
  node.event = event;
  c->graph->nodes.push_back(std::move(node));
  c->graph->recorded_events.push_back(event);
  return Status();
}

std::optional<Status> capture_event_wait(void* event, StreamRef stream) noexcept {
  LockGuard lock(g_captures_mutex);
  std::optional<Status> answer;
  Capture* c = capture_of("Event::wait_on", stream, answer);
  if (c == nullptr) return answer;
  if (recorded_in(*c, event)) return Status(); // in order already
  return refuse_in_capture(*c, make_error(ErrorCode::invalid_argument, stream.device,
                                          " Event::wait_on during a capture: the event was not recorded in this "
                                          "capture (a graph cannot wait for work outside it)"));
}

std::optional<Status> capture_wait(const char* call, StreamRef stream, bool whole_device, void* event) noexcept {
  LockGuard lock(g_captures_mutex);
  Capture* c = capture_on(stream.device);
  if (c == nullptr) return std::nullopt;
  const bool refused = event != nullptr ? recorded_in(*c, event) : whole_device || stream.handle == c->stream;
  if (!refused) return std::nullopt;
  return make_error(ErrorCode::invalid_argument, stream.device, " ", call, " while stream ", c->stream,
                    " is capturing: its work is recorded, not run; end_capture and launch the graph first");
}

std::optional<Status> capture_pool(StreamRef stream, StreamPool** pool) noexcept {
  LockGuard lock(g_captures_mutex);
  std::optional<Status> answer;
  Capture* c = capture_of("allocate", stream, answer);
  if (c == nullptr) return answer;
  if (c->graph->pool == nullptr) {
    c->graph->pool = make_graph_pool(BackendRef(c->graph->backend), c->graph->device);
    if (c->graph->pool == nullptr) {
      return make_error(ErrorCode::out_of_memory, stream.device, " allocate during a capture: no host memory");
    }
  }
  *pool = c->graph->pool;
  return Status();
}

void capture_stream_destroyed(StreamRef stream) noexcept {
  GraphState* dropped = nullptr;
  {
    LockGuard lock(g_captures_mutex);
    Capture* c = capture_on(stream.device);
    if (c == nullptr || c->stream != stream.handle) return;
    dropped = c->graph;
    end_capture_of(*dropped);
  }
  DEVRT_LOG(warning, stream.device, " stream ", stream.handle, " destroyed while capturing: the capture is dropped");
  delete dropped;
}

void graphs_forget_module(Device device, void* module) noexcept {
  LockGuard lock(g_graphs_mutex);
  DeviceGraphs* slot = device_graphs(find_device_record(device));
  if (slot == nullptr) return;
  for (GraphState* g : slot->graphs) {
    for (const GraphNode& node : g->nodes) {
      if (node.kind == DEVRT_GRAPH_NODE_LAUNCH && node.module == module) {
        g->orphan_kernel = node.kernel.c_str();
        g->orphaned.store(true, std::memory_order_release);
        break;
      }
    }
  }
}

const CaptureHooks g_capture_hooks = {&capture_launch, &capture_copy, &capture_event_record,     &capture_event_wait,
                                      &capture_wait,   &capture_pool, &capture_stream_destroyed, &graphs_forget_module};

} // namespace detail

using detail::GraphState;

const char* graph_mode_name(GraphMode mode) noexcept {
  switch (mode) {
  case GraphMode::native: return "native";
  case GraphMode::recorded: return "recorded";
  case GraphMode::mixed: return "mixed";
  }
  return "unknown";
}

Status begin_capture(StreamRef stream) noexcept {
  if (stream.handle == nullptr) {
    return make_error(ErrorCode::invalid_argument, stream.device,
                      " begin_capture: the default stream cannot be captured (capture a Stream::create stream)");
  }
  Result<BackendRef> backend = backend_for(stream.device);
  if (!backend.ok()) return std::move(backend).status();
  DEVRT_RETURN_IF_ERROR(backend->check_device(stream.device.id));
  auto* graph = new (std::nothrow) GraphState();
  if (graph == nullptr) return make_error(ErrorCode::out_of_memory, stream.device, " begin_capture: no host memory");
  graph->backend = backend->table();
  graph->device = stream.device;
  graph->captured_stream = stream.handle;
  // The graph is an object of the device: the device stays open while it lives.
  Result<const devrt_backend_device*> counted = detail::open_for_object(*backend, stream.device.id);
  if (!counted.ok()) {
    delete graph;
    return std::move(counted).status();
  }
  graph->counted = true;
  detail::LockGuard lock(detail::g_captures_mutex);
  detail::DeviceRecord* record = detail::find_device_record(stream.device);
  detail::DeviceGraphs* slot = record != nullptr ? detail::claim_device_graphs(*record) : nullptr;
  if (record != nullptr && slot == nullptr) {
    delete graph;
    return make_error(ErrorCode::out_of_memory, stream.device, " begin_capture: no host memory");
  }
  if (slot == nullptr || slot->capture.graph != nullptr) {
    void* other = slot != nullptr ? slot->capture.stream : nullptr;
    delete graph;
    return make_error(ErrorCode::invalid_argument, stream.device, " begin_capture(stream ", stream.handle,
                      "): the device is already capturing stream ", other, " (one capture per device)");
  }
  slot->capture = detail::Capture{stream.handle, graph};
  detail::g_active_captures.fetch_add(1, std::memory_order_relaxed);
  return Status();
}

bool is_capturing(StreamRef stream) noexcept {
  if (!detail::captures_active()) return false;
  detail::LockGuard lock(detail::g_captures_mutex);
  const detail::Capture* c = detail::capture_on(stream.device);
  return c != nullptr && c->stream == stream.handle;
}

Result<Graph> end_capture(StreamRef stream) noexcept {
  GraphState* state = nullptr;
  {
    detail::LockGuard lock(detail::g_captures_mutex);
    detail::Capture* c = detail::capture_on(stream.device);
    if (c == nullptr || c->stream != stream.handle) {
      return make_error(ErrorCode::invalid_argument, stream.device, " end_capture(stream ", stream.handle,
                        "): the stream is not capturing");
    }
    state = c->graph;
    detail::end_capture_of(*state);
  }
  std::unique_ptr<GraphState> owned(state);
  if (!state->first_error.ok()) return std::move(state->first_error);
  state->recorded_events.clear();
  Status baked = detail::build_runs(*state);
  if (!baked.ok()) {
    detail::destroy_runs(*state);
    return baked;
  }
  {
    detail::LockGuard lock(detail::g_graphs_mutex);
    detail::DeviceRecord* record = detail::find_device_record(state->device);
    detail::DeviceGraphs* slot = record != nullptr ? detail::claim_device_graphs(*record) : nullptr;
    if (slot == nullptr) {
      detail::destroy_runs(*state);
      return make_error(ErrorCode::out_of_memory, stream.device, " end_capture: no host memory");
    }
    slot->graphs.push_back(state);
  }
  return Graph(owned.release());
}

Graph::Graph(Graph&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}

Graph& Graph::operator=(Graph&& other) noexcept {
  if (this != &other) {
    reset();
    state_ = std::exchange(other.state_, nullptr);
  }
  return *this;
}

Graph::~Graph() { reset(); }

void Graph::reset() noexcept {
  if (state_ != nullptr) detail::destroy_graph(std::exchange(state_, nullptr));
}

Device Graph::device() const noexcept { return state_ != nullptr ? state_->device : Device{}; }

std::size_t Graph::node_count() const noexcept { return state_ != nullptr ? state_->nodes.size() : 0; }

std::size_t Graph::launch_count() const noexcept { return state_ != nullptr ? state_->launches.size() : 0; }

GraphMode Graph::mode() const noexcept {
  if (state_ == nullptr) return GraphMode::recorded;
  std::size_t native = 0;
  for (const detail::GraphRun& run : state_->runs) native += run.native != nullptr ? run.count : 0;
  if (native == 0) return GraphMode::recorded;
  return native == state_->nodes.size() ? GraphMode::native : GraphMode::mixed;
}

namespace {

// Issues one node that no native run covers.
Status issue(const GraphState& g, const detail::GraphNode& node, void* stream) noexcept {
  BackendRef backend(g.backend);
  if (node.kind == DEVRT_GRAPH_NODE_LAUNCH) {
    devrt_launch_desc desc = node.launch;
    desc.args = node.args.data();
    desc.stream = stream;
    return backend.launch(g.device.id, node.function, desc, node.kernel);
  }
  if (node.kind == detail::kEventRecordNode) return backend.event_record(g.device.id, node.event, stream);
  devrt_copy_desc desc = node.copy;
  desc.stream = stream;
  return backend.copy(g.device.id, node.src_device.id, node.dst_device.id, desc);
}

} // namespace

Status Graph::launch(StreamRef stream) const noexcept {
  if (state_ == nullptr) return make_error(ErrorCode::invalid_argument, "Graph::launch: empty graph");
  const GraphState& g = *state_;
  if (stream.device != g.device) {
    return make_error(ErrorCode::invalid_argument, "Graph::launch: a graph of ", g.device, " on a stream of ",
                      stream.device);
  }
  if (g.orphaned.load(std::memory_order_acquire)) [[unlikely]] {
    return make_error(ErrorCode::invalid_argument, g.device, " Graph::launch: the module of kernel '", g.orphan_kernel,
                      "' was unloaded; capture the graph again");
  }
  if (detail::captures_active()) {
    if (std::optional<Status> refused = detail::capture_wait("Graph::launch", stream, false, nullptr)) return *refused;
  }
  std::size_t i = 0;
  for (const detail::GraphRun& run : g.runs) {
    for (; i < run.first; ++i) DEVRT_RETURN_IF_ERROR(issue(g, g.nodes[i], stream.handle));
    if (run.native == nullptr) continue; // its nodes are issued one by one like the others
    DEVRT_RETURN_IF_ERROR(BackendRef(g.backend).graph_launch(g.device.id, run.native, stream.handle));
    i = run.first + run.count;
  }
  for (; i < g.nodes.size(); ++i) DEVRT_RETURN_IF_ERROR(issue(g, g.nodes[i], stream.handle));
  return Status();
}

namespace {

Status shape_error(Device device, std::size_t launch_index, const std::string& kernel, const char* what) noexcept {
  return make_error(ErrorCode::invalid_argument, device, " Graph::update(launch ", launch_index, ", '", kernel,
                    "'): ", what, " (an update keeps the graph's shape: recapture instead)");
}

} // namespace

Status Graph::update(std::size_t launch_index, std::span<const KernelArg> args) noexcept {
  if (state_ == nullptr) return make_error(ErrorCode::invalid_argument, "Graph::update: empty graph");
  GraphState& g = *state_;
  if (launch_index >= g.launches.size()) {
    return make_error(ErrorCode::out_of_range, g.device, " Graph::update: launch ", launch_index, " of ",
                      g.launches.size());
  }
  const std::size_t index = g.launches[launch_index];
  detail::GraphNode& node = g.nodes[index];
  if (args.size() != node.args.size())
    return shape_error(g.device, launch_index, node.kernel, "another argument count");
  for (std::size_t i = 0; i < args.size(); ++i) {
    const devrt_kernel_arg& was = node.args[i];
    const devrt_kernel_arg& now = args[i].raw();
    if (now.kind != was.kind ||
        (now.kind == DEVRT_ARG_SCALAR && (now.type_code != was.type_code || now.type_bits != was.type_bits))) {
      return shape_error(g.device, launch_index, node.kernel, "an argument of another kind or type");
    }
    if (now.kind != DEVRT_ARG_SCALAR &&
        (now.device_kind != was.device_kind || now.device_id != was.device_id || now.buffer == nullptr)) {
      return shape_error(g.device, launch_index, node.kernel, "a buffer that is not on the graph's device");
    }
  }
  std::vector<devrt_kernel_arg> previous = node.args;
  for (std::size_t i = 0; i < args.size(); ++i) node.args[i] = args[i].raw();
  for (detail::GraphRun& run : g.runs) {
    if (index < run.first || index >= run.first + run.count || run.native == nullptr) continue;
    void* old = std::exchange(run.native, nullptr);
    Status rebaked = detail::bake(g, run);
    if (!rebaked.ok()) { // the old object stays, with the old arguments
      node.args = std::move(previous);
      run.native = old;
      return rebaked;
    }
    Status destroyed = BackendRef(g.backend).graph_destroy(g.device.id, old);
    if (!destroyed.ok()) DEVRT_LOG(error, "Graph::update: ", destroyed.message());
  }
  detail::graph_retouch(g); // memory no launch names any more goes back
  return Status();
}

} // namespace devrt
