// SPDX-License-Identifier: Apache-2.0
// The remote backend's devices, each a device of a connected devrt-server, and devrt::remote's API.
#include "remote_backend.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <devrt/remote.hpp>

#include "remote/connection.hpp"

namespace devrt::remote {
namespace {

// A remote device, the backend's state of it (devrt_backend_device::state): a device of a
// connection's server.
struct RemoteDevice {
  Connection* connection = nullptr;
  std::uint32_t server_index = 0; // the server's exported device
  const wire::DeviceDescription* description = nullptr;
};

// Every connection of the process, added to and never removed: a lost server's devices keep their
// numbers (and keep failing). Remote device i is device i - (the devices of the connections
// before it) of the first connection that has that many. Thread-safe.
class Remotes {
public:
  // Connects to the servers of DEVRT_REMOTE, once; why none could be reached, if none.
  void connect_configured() noexcept {
    std::call_once(configured_once_, [this] {
      for (const std::string& address : configured_servers()) {
        Result<std::vector<Device>> added = add(address);
        if (!added.ok()) {
          std::lock_guard<std::mutex> lock(mutex_);
          configured_errors_ +=
              std::string(configured_errors_.empty() ? "" : "; ") + std::string(added.status().message());
        }
      }
    });
  }

  Result<std::vector<Device>> add(std::string_view address, std::string_view key_file = {}) noexcept {
    Result<std::unique_ptr<Connection>> opened = Connection::open(address, key_file);
    if (!opened.ok()) return std::move(opened).status();
    std::lock_guard<std::mutex> lock(mutex_);
    const std::size_t n = (*opened)->devices().size();
    const std::int32_t first = count_.load(std::memory_order_relaxed);
    if (static_cast<std::size_t>(INT32_MAX - first) < n) {
      return make_error(ErrorCode::out_of_range, "devrt-server at ", address, " exports ", n, " devices; ", first,
                        " remote devices are connected already");
    }
    connections_.push_back(std::move(opened).value());
    // At the process's normal exit every server hears this client leave, at once.
    static const bool closing_at_exit = std::atexit(&close_all) == 0;
    static_cast<void>(closing_at_exit);
    std::vector<Device> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(Device{DeviceKind::remote, first + static_cast<std::int32_t>(i)});
    count_.store(first + static_cast<std::int32_t>(n), std::memory_order_release);
    return out;
  }

  std::int32_t count() const noexcept { return count_.load(std::memory_order_acquire); }
  // Remote device `index`, or nothing when no connection has it.
  std::optional<RemoteDevice> find(std::int32_t index) const noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::unique_ptr<Connection>& connection : connections_) {
      const auto n = static_cast<std::int32_t>(connection->devices().size());
      if (index >= 0 && index < n) {
        return RemoteDevice{connection.get(), static_cast<std::uint32_t>(index), &connection->devices()[index]};
      }
      index -= n;
    }
    return std::nullopt;
  }
  std::string configured_errors() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return configured_errors_;
  }

  // How many instructions the server's backend rewrote in a module (Module::rewritten_instructions),
  // kept for the modules where it rewrote any, until they are unloaded.
  void set_rewrites(const Connection* connection, std::uint64_t module, std::uint32_t count) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (count == 0) {
      rewrites_.erase({connection, module});
    } else {
      rewrites_[{connection, module}] = count;
    }
  }
  std::uint32_t rewrites(const Connection* connection, std::uint64_t module) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = rewrites_.find({connection, module});
    return found != rewrites_.end() ? found->second : 0;
  }

private:
  static void close_all() noexcept;

  mutable std::mutex mutex_;
  std::once_flag configured_once_;
  std::string configured_errors_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::atomic<std::int32_t> count_{0};
  std::map<std::pair<const Connection*, std::uint64_t>, std::uint32_t> rewrites_;
};

Remotes& remotes() noexcept {
  static Remotes* const instance = new Remotes(); // never destroyed: UCX outlives static destructors
  return *instance;
}

void Remotes::close_all() noexcept {
  Remotes& all = remotes();
  std::lock_guard<std::mutex> lock(all.mutex_);
  for (const std::unique_ptr<Connection>& connection : all.connections_) connection->close(std::chrono::seconds(1));
}

const RemoteDevice& device_of(const BackendDevice& device) noexcept { return backend_state<RemoteDevice>(device); }

void* as_handle(std::uint64_t id) noexcept { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(id)); }
std::uint64_t id_of(const void* handle) noexcept { return reinterpret_cast<std::uintptr_t>(handle); }

// The command that carries `request` to device d, on `stream`.
template <class R>
wire::Command command(const RemoteDevice& d, const R& request, void* stream = nullptr) noexcept {
  return wire::make_command(request, d.server_index, id_of(stream));
}

// A round trip; its result (R's Reply) when it succeeded.
template <class R>
Result<typename R::Reply> ask(const RemoteDevice& d, const R& request, std::span<const unsigned char> payload = {},
                              void* stream = nullptr) noexcept {
  Answer answer;
  DEVRT_RETURN_IF_ERROR(d.connection->call(command(d, request, stream), payload, answer));
  return answer.reply.get<typename R::Reply>();
}

// A round trip that answers a handle.
template <class R>
Result<void*> create(const RemoteDevice& d, const R& request, std::span<const unsigned char> payload = {}) noexcept {
  Result<wire::Created> created = ask(d, request, payload);
  if (!created.ok()) return std::move(created).status();
  return as_handle(created->handle);
}

// A round trip that answers nothing.
template <class R>
Status round_trip(const RemoteDevice& d, const R& request, void* stream = nullptr) noexcept {
  return ask(d, request, {}, stream).status();
}

// A one-way command.
template <class R>
Status post(const RemoteDevice& d, const R& request, void* stream = nullptr,
            std::span<const unsigned char> payload = {}) noexcept {
  static_assert(std::is_same_v<typename R::Reply, wire::NoReply>, "a command with a reply is a round trip");
  return d.connection->post(command(d, request, stream), payload);
}

// desc.nbytes of `bytes` to desc.dst at desc.dst_offset, in pieces the server accepts (its
// --max-message), one one-way write each, in order on desc.stream. `borrowed`: the caller keeps
// the bytes until the next round trip.
Status write(const RemoteDevice& dst, const CopyDesc& desc, const unsigned char* bytes, bool borrowed) noexcept {
  const std::uint64_t piece = dst.connection->max_message();
  for (std::uint64_t done = 0; done < desc.nbytes;) {
    const std::uint64_t n = std::min<std::uint64_t>(piece, desc.nbytes - done);
    const wire::Write request{.allocation = id_of(desc.dst), .offset = desc.dst_offset + done};
    DEVRT_RETURN_IF_ERROR(dst.connection->post(command(dst, request, desc.stream), {bytes + done, n}, borrowed));
    done += n;
  }
  return Status();
}

// Frees an object on the server; on a lost server that succeeds: what it held went with it.
template <class R>
Status release(const BackendDevice& device, const R& request) noexcept {
  const RemoteDevice& d = device_of(device);
  if (d.connection->is_lost()) return Status();
  return post(d, request);
}

// Payloads this large are sent from the caller's memory (rendezvous) instead of copied.
constexpr std::size_t kBorrowedWriteBytes = 64 * 1024;

} // namespace

// ---- Discovery ---------------------------------------------------------------------------------

Status RemoteBackend::availability() noexcept {
  DEVRT_RETURN_IF_ERROR(ucx_library().status);
  remotes().connect_configured();
  if (remotes().count() > 0) return Status();
  std::string errors = remotes().configured_errors();
  if (!errors.empty()) return make_error(ErrorCode::unavailable, errors);
  return make_error(ErrorCode::unavailable,
                    "no devrt-server is connected (set DEVRT_REMOTE=host:port or call devrt::remote::connect)");
}

Result<std::int32_t> RemoteBackend::device_count() noexcept {
  if (!ucx_library().status.ok()) return 0;
  remotes().connect_configured();
  return remotes().count();
}

Status RemoteBackend::open_device(BackendDevice& device) noexcept {
  std::optional<RemoteDevice> found = remotes().find(device.index);
  if (!found) return make_error(ErrorCode::invalid_argument, "remote:", device.index, " is no connected device");
  device.state = new (std::nothrow) RemoteDevice(*found);
  if (device.state == nullptr) return make_error(ErrorCode::out_of_memory, "remote:", device.index, ": open_device");
  return Status();
}

Status RemoteBackend::close_device(BackendDevice& device) noexcept {
  delete static_cast<RemoteDevice*>(device.state);
  device.state = nullptr;
  return Status();
}

Result<AttributeValue> RemoteBackend::get_attribute(const BackendDevice& device, Attribute attribute) noexcept {
  const devrt_attribute_value& v = device_of(device).description->attributes[static_cast<std::int32_t>(attribute)];
  switch (v.type) {
  case DEVRT_VALUE_BOOL: return AttributeValue(v.ints[0] != 0);
  case DEVRT_VALUE_INT: return AttributeValue(v.ints[0]);
  case DEVRT_VALUE_STRING: return AttributeValue(std::string(v.string));
  case DEVRT_VALUE_DIM3: return AttributeValue(Dim3{v.ints[0], v.ints[1], v.ints[2]});
  default: return AttributeValue();
  }
}

Result<Target> RemoteBackend::detect_target(const BackendDevice& device) noexcept {
  const RemoteDevice& d = device_of(device);
  if (d.description->target_json.empty()) {
    return make_error(ErrorCode::unsupported, "the device's backend on devrt-server ", d.connection->address(),
                      " cannot describe it as a target");
  }
  return Target::from_json(d.description->target_json);
}

Result<std::uint32_t> RemoteBackend::device_module_formats(const BackendDevice& device) noexcept {
  return device_of(device).description->module_formats;
}

// ---- Memory and copies -------------------------------------------------------------------------

Result<void*> RemoteBackend::allocate(const BackendDevice& device, std::size_t nbytes, std::size_t alignment) noexcept {
  return create(device_of(device), wire::Allocate{.bytes = nbytes, .alignment = alignment});
}

Status RemoteBackend::free(const BackendDevice& device, void* handle) noexcept {
  return release(device, wire::Free{.allocation = id_of(handle)});
}

Status RemoteBackend::copy(const CopyDesc& desc) noexcept {
  const auto remote_kind = static_cast<std::int32_t>(DeviceKind::remote);
  const bool from_remote = desc.src_kind == remote_kind;
  const bool to_remote = desc.dst_kind == remote_kind;
  if (from_remote && to_remote) {
    const RemoteDevice& src = device_of(*desc.src_device);
    const RemoteDevice& dst = device_of(*desc.dst_device);
    if (src.connection == dst.connection) { // the server copies, between its own devices if need be
      const wire::Copy request{.source = id_of(desc.src),
                               .source_offset = desc.src_offset,
                               .destination = id_of(desc.dst),
                               .destination_offset = desc.dst_offset,
                               .bytes = desc.nbytes,
                               .source_device = src.server_index};
      return post(dst, request, desc.stream);
    }
    // Two servers: through this process.
    std::vector<unsigned char> bounce(desc.nbytes);
    const wire::Read read{.allocation = id_of(desc.src), .offset = desc.src_offset, .bytes = desc.nbytes};
    Answer answer;
    DEVRT_RETURN_IF_ERROR(src.connection->call(command(src, read), {}, answer, bounce.data(), bounce.size()));
    return write(dst, desc, bounce.data(), false);
  }
  if (to_remote) {
    const auto* bytes = static_cast<const unsigned char*>(desc.src) + desc.src_offset;
    return write(device_of(*desc.dst_device), desc, bytes, desc.nbytes >= kBorrowedWriteBytes);
  }
  const RemoteDevice& src = device_of(*desc.src_device);
  const wire::Read read{.allocation = id_of(desc.src), .offset = desc.src_offset, .bytes = desc.nbytes};
  Answer answer;
  return src.connection->call(command(src, read, desc.stream), {}, answer,
                              static_cast<unsigned char*>(desc.dst) + desc.dst_offset, desc.nbytes);
}

// ---- Streams and events ------------------------------------------------------------------------

Result<void*> RemoteBackend::stream_create(const BackendDevice& device) noexcept {
  return create(device_of(device), wire::StreamCreate{});
}

Status RemoteBackend::stream_destroy(const BackendDevice& device, void* stream) noexcept {
  return release(device, wire::StreamDestroy{.stream = id_of(stream)});
}

Status RemoteBackend::stream_synchronize(const BackendDevice& device, void* stream) noexcept {
  return round_trip(device_of(device), wire::StreamSynchronize{}, stream);
}

Status RemoteBackend::device_synchronize(const BackendDevice& device) noexcept {
  return round_trip(device_of(device), wire::DeviceSynchronize{});
}

Result<void*> RemoteBackend::event_create(const BackendDevice& device) noexcept {
  return create(device_of(device), wire::EventCreate{.timed = 0});
}

Result<void*> RemoteBackend::event_create_timed(const BackendDevice& device) noexcept {
  return create(device_of(device), wire::EventCreate{.timed = 1});
}

Status RemoteBackend::event_destroy(const BackendDevice& device, void* event) noexcept {
  return release(device, wire::EventDestroy{.event = id_of(event)});
}

Status RemoteBackend::event_record(const BackendDevice& device, void* event, void* stream) noexcept {
  return post(device_of(device), wire::EventRecord{.event = id_of(event)}, stream);
}

Status RemoteBackend::event_synchronize(const BackendDevice& device, void* event) noexcept {
  return round_trip(device_of(device), wire::EventSynchronize{.event = id_of(event)});
}

Result<bool> RemoteBackend::event_query(const BackendDevice& device, void* event) noexcept {
  Result<wire::EventState> state = ask(device_of(device), wire::EventQuery{.event = id_of(event)});
  if (!state.ok()) return std::move(state).status();
  return state->complete != 0;
}

Status RemoteBackend::stream_wait_event(const BackendDevice& device, void* stream, void* event) noexcept {
  return post(device_of(device), wire::StreamWaitEvent{.event = id_of(event)}, stream);
}

Result<std::int64_t> RemoteBackend::event_elapsed(const BackendDevice& device, void* start, void* end) noexcept {
  Result<wire::Elapsed> elapsed = ask(device_of(device), wire::EventElapsed{.start = id_of(start), .end = id_of(end)});
  if (!elapsed.ok()) return std::move(elapsed).status();
  return elapsed->nanoseconds;
}

// ---- Modules and launches ----------------------------------------------------------------------

Result<void*> RemoteBackend::module_load(const BackendDevice& device, ModuleFormat format,
                                         std::span<const std::byte> image, const char* options,
                                         BuildLog& log) noexcept {
  const RemoteDevice& d = device_of(device);
  const std::size_t option_bytes = std::strlen(options);
  if (option_bytes + image.size() > d.connection->max_message()) {
    return make_error(ErrorCode::permission_denied, "module_load: ", option_bytes + image.size(),
                      " bytes of image and options, more than devrt-server at ", d.connection->address(),
                      " accepts in one message (its --max-message, ", d.connection->max_message(), ")");
  }
  std::vector<unsigned char> payload(option_bytes + image.size());
  std::memcpy(payload.data(), options, option_bytes);
  std::memcpy(payload.data() + option_bytes, image.data(), image.size());
  const wire::ModuleLoad request{.format = static_cast<std::uint32_t>(format), .option_bytes = option_bytes};
  Answer answer;
  Status s = d.connection->call(command(d, request), payload, answer);
  if (!s.ok()) {
    log.append(std::string_view(reinterpret_cast<const char*>(answer.data.data()), answer.data.size()));
    return s;
  }
  log.append(answer.text);
  const auto loaded = answer.reply.get<wire::ModuleLoaded>();
  remotes().set_rewrites(
      d.connection, loaded.module,
      static_cast<std::uint32_t>(std::min<std::uint64_t>(loaded.rewritten_instructions, UINT32_MAX)));
  return as_handle(loaded.module);
}

Status RemoteBackend::module_unload(const BackendDevice& device, void* module) noexcept {
  remotes().set_rewrites(device_of(device).connection, id_of(module), 0);
  return release(device, wire::ModuleUnload{.module = id_of(module)});
}

Result<std::uint32_t> RemoteBackend::module_rewrites(const BackendDevice& device, void* module) noexcept {
  return remotes().rewrites(device_of(device).connection, id_of(module));
}

Result<void*> RemoteBackend::module_function(const BackendDevice& device, void* module, const char* name) noexcept {
  return create(device_of(device), wire::ModuleFunction{.module = id_of(module)},
                {reinterpret_cast<const unsigned char*>(name), std::strlen(name)});
}

namespace {
// The device's limits, checked here so that a launch the server would refuse fails at once.
Status check_block(const RemoteDevice& d, const LaunchDesc& desc) noexcept {
  const devrt_attribute_value& threads = d.description->attributes[static_cast<int>(Attribute::max_threads_per_block)];
  const devrt_attribute_value& dims = d.description->attributes[static_cast<int>(Attribute::max_thread_dimensions)];
  const std::uint64_t block = std::uint64_t{desc.block[0]} * desc.block[1] * desc.block[2];
  bool over = threads.type == DEVRT_VALUE_INT && block > static_cast<std::uint64_t>(threads.ints[0]);
  for (int i = 0; i < 3 && dims.type == DEVRT_VALUE_DIM3; ++i) {
    over = over || desc.block[i] > static_cast<std::uint64_t>(dims.ints[i]);
  }
  if (!over) return Status();
  return make_error(ErrorCode::invalid_argument, "a block of ", desc.block[0], "x", desc.block[1], "x", desc.block[2],
                    " exceeds max_threads_per_block ", threads.ints[0], " or max_thread_dimensions (", dims.ints[0],
                    ", ", dims.ints[1], ", ", dims.ints[2], ") of ", d.description->name, " on devrt-server ",
                    d.connection->address());
}

// A buffer argument's offset must be a multiple of the device's buffer_offset_alignment (OpenCL
// sub-buffers), as the server's backend would refuse later.
Status check_offset(const RemoteDevice& d, std::uint32_t index, std::size_t offset) noexcept {
  const devrt_attribute_value& alignment =
      d.description->attributes[static_cast<int>(Attribute::buffer_offset_alignment)];
  if (alignment.type != DEVRT_VALUE_INT || alignment.ints[0] <= 1 ||
      offset % static_cast<std::uint64_t>(alignment.ints[0]) == 0) {
    return Status();
  }
  return make_error(ErrorCode::invalid_argument, "argument ", index, ": offset ", offset,
                    " is not a multiple of the device's buffer_offset_alignment ", alignment.ints[0]);
}
} // namespace

namespace {
// Appends desc's arguments as LaunchArgs.
Status append_arguments(const RemoteDevice& d, const LaunchDesc& desc, std::vector<unsigned char>& payload) noexcept {
  for (std::uint32_t i = 0; i < desc.num_args; ++i) {
    const devrt_kernel_arg& arg = desc.args[i];
    wire::LaunchArg out;
    out.kind = arg.kind;
    out.type_code = arg.type_code;
    out.type_bits = arg.type_bits;
    if (arg.kind == DEVRT_ARG_BUFFER) {
      DEVRT_RETURN_IF_ERROR(check_offset(d, i, arg.offset));
      out.handle = id_of(arg.buffer);
      out.offset = arg.offset;
      out.size = arg.size;
    } else if (arg.kind == DEVRT_ARG_SCALAR) {
      out.value = arg.value.u64;
    } else {
      return make_error(ErrorCode::unsupported, "argument ", i, ": remote devices take no textures");
    }
    const auto* bytes = reinterpret_cast<const unsigned char*>(&out);
    payload.insert(payload.end(), bytes, bytes + sizeof out);
  }
  return Status();
}
} // namespace

Status RemoteBackend::launch(const BackendDevice& device, void* function, const LaunchDesc& desc) noexcept {
  const RemoteDevice& d = device_of(device);
  DEVRT_RETURN_IF_ERROR(check_block(d, desc));
  std::vector<unsigned char> payload;
  payload.reserve(desc.num_args * sizeof(wire::LaunchArg));
  DEVRT_RETURN_IF_ERROR(append_arguments(d, desc, payload));
  wire::Launch request{
      .function = id_of(function), .dynamic_shared_bytes = desc.dynamic_shared_bytes, .argument_count = desc.num_args};
  std::copy_n(desc.grid, 3, request.grid);
  std::copy_n(desc.block, 3, request.block);
  return post(d, request, desc.stream, payload);
}

// ---- Graphs: captured on the client, sent once, replayed on the server by one message each -------

Result<void*> RemoteBackend::graph_create(const BackendDevice& device, void*,
                                          std::span<const devrt_graph_node> nodes) noexcept {
  const RemoteDevice& d = device_of(device);
  if (nodes.size() > wire::kMaxGraphNodes) {
    return make_error(ErrorCode::unsupported, "a graph of ", nodes.size(), " nodes (the remote protocol sends ",
                      wire::kMaxGraphNodes, " at most)");
  }
  std::vector<unsigned char> payload;
  for (const devrt_graph_node& node : nodes) {
    wire::GraphNode out;
    out.type = static_cast<std::uint32_t>(node.type);
    if (node.type == DEVRT_GRAPH_NODE_LAUNCH) {
      DEVRT_RETURN_IF_ERROR(check_block(d, node.launch));
      out.argument_count = node.launch.num_args;
      out.function = id_of(node.function);
      std::copy_n(node.launch.grid, 3, out.grid);
      std::copy_n(node.launch.block, 3, out.block);
      out.dynamic_shared_bytes = node.launch.dynamic_shared_bytes;
    } else {
      out.source = id_of(node.copy.src);
      out.source_offset = node.copy.src_offset;
      out.destination = id_of(node.copy.dst);
      out.destination_offset = node.copy.dst_offset;
      out.bytes = node.copy.nbytes;
    }
    const auto* bytes = reinterpret_cast<const unsigned char*>(&out);
    payload.insert(payload.end(), bytes, bytes + sizeof out);
    if (node.type == DEVRT_GRAPH_NODE_LAUNCH) DEVRT_RETURN_IF_ERROR(append_arguments(d, node.launch, payload));
  }
  if (payload.size() > d.connection->max_message()) { // the core issues the nodes itself at each replay
    return make_error(ErrorCode::unsupported, "a graph of ", payload.size(), " bytes, more than devrt-server at ",
                      d.connection->address(), " accepts in one message");
  }
  return create(d, wire::GraphCreate{.node_count = nodes.size()}, payload);
}

Status RemoteBackend::graph_launch(const BackendDevice& device, void* graph, void* stream) noexcept {
  return post(device_of(device), wire::GraphLaunch{.graph = id_of(graph)}, stream);
}

Status RemoteBackend::graph_destroy(const BackendDevice& device, void* graph) noexcept {
  return release(device, wire::GraphDestroy{.graph = id_of(graph)});
}

// ---- devrt::remote -----------------------------------------------------------------------------

Result<std::vector<Device>> connect(std::string_view address, const ConnectOptions& options) noexcept {
  DEVRT_RETURN_IF_ERROR(ucx_library().status);
  remotes().connect_configured();
  return remotes().add(address, options.key_file);
}

Result<std::vector<Device>> connect(std::string_view address) noexcept { return connect(address, ConnectOptions{}); }

namespace {
Result<RemoteDevice> remote_device(Device device, const char* call) noexcept {
  std::optional<RemoteDevice> d = device.kind == DeviceKind::remote ? remotes().find(device.id) : std::nullopt;
  if (!d) return make_error(ErrorCode::invalid_argument, "remote::", call, ": ", device, " is no remote device");
  return *d;
}
} // namespace

Result<DeviceInfo> describe(Device device) noexcept {
  Result<RemoteDevice> d = remote_device(device, "describe");
  if (!d.ok()) return std::move(d).status();
  DeviceInfo info;
  info.server = d->connection->address();
  info.kind = static_cast<DeviceKind>(d->description->kind);
  info.index = d->description->index;
  info.name = d->description->name;
  info.lost = d->connection->is_lost();
  if (info.lost) info.lost_reason = d->connection->lost_reason();
  return info;
}

Result<ServerStats> server_stats(Device device) noexcept {
  Result<RemoteDevice> d = remote_device(device, "server_stats");
  if (!d.ok()) return std::move(d).status();
  Result<wire::Stats> stats = ask(*d, wire::ServerStats{});
  if (!stats.ok()) return std::move(stats).status();
  return ServerStats{stats->clients, stats->allocated_bytes, stats->allocations};
}

} // namespace devrt::remote

DEVRT_REGISTER_BACKEND(remote, devrt::remote::RemoteBackend)
