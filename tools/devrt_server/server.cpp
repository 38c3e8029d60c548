// SPDX-License-Identifier: Apache-2.0
#include "server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <devrt/backend/backend.hpp>
#include <devrt/discovery.hpp>
#include <devrt/memory_stats.hpp>

#include "backends/remote/ucx_api.hpp"

namespace devrt::server {
namespace {

namespace wire = remote::wire;
using wire::Op;

constexpr std::uint32_t kHostCodeFormats =
    DEVRT_MODULE_FORMAT_BIT(DEVRT_MODULE_HOST_TABLE) | DEVRT_MODULE_FORMAT_BIT(DEVRT_MODULE_SHARED_OBJECT);

// ---- Exported devices ----------------------------------------------------------------------

Exported describe(Device device, bool allow_host_code) {
  Exported e;
  e.device = device;
  e.description.kind = static_cast<std::int32_t>(device.kind);
  e.description.index = device.id;
  Result<BackendRef> backend = backend_for(device);
  std::uint32_t formats = 0;
  if (backend.ok()) {
    formats = backend->device_module_formats(device.id).value_or(0);
    for (std::uint32_t bit = 0; bit < 31; ++bit) {
      if (backend->has_capability(1u << bit)) e.description.capabilities |= 1u << bit;
    }
  }
  e.description.module_formats = allow_host_code ? formats : formats & ~kHostCodeFormats;
  for (std::int32_t a = 0; a < kAttributeCount; ++a) {
    Result<AttributeValue> value = get_attribute(device, static_cast<Attribute>(a));
    if (value.ok()) detail::export_attribute(*value, &e.description.attributes[a]);
  }
  if (Result<AttributeValue> name = get_attribute(device, Attribute::device_name);
      name.ok() && std::holds_alternative<std::string>(*name)) {
    e.description.name = std::get<std::string>(*name);
  }
  if (Result<Target> target = detect_target(device); target.ok()) e.description.target_json = target->to_json();
  return e;
}

// ---- One client --------------------------------------------------------------------------

struct Incoming {
  wire::Command command;
  std::vector<unsigned char> data;
  bool ready = false; // its data has arrived
};

class Server;

struct Allocation {
  std::uint32_t device = 0;
  Buffer buffer;
};
struct StreamEntry {
  std::uint32_t device = 0;
  Stream stream;
};
struct EventEntry {
  std::uint32_t device = 0;
  Event event;
};
struct ModuleEntry {
  std::uint32_t device = 0;
  Module module;
};
struct FunctionEntry {
  std::uint32_t device = 0;
  std::uint64_t module = 0;
  Function function;
  std::string name;
};

// A reply on its way to the UCX thread.
struct Outgoing {
  ucp_ep_h endpoint = nullptr;
  wire::Reply reply;
  std::vector<unsigned char> data;
};

class Client {
public:
  Client(Server& server, ucp_ep_h endpoint, std::uint64_t id) : server_(server), endpoint_(endpoint), id_(id) {}
  ~Client() {
    if (executor_.joinable()) executor_.join();
  }
  void start() { executor_ = std::thread([this] { run(); }); }

  // UCX thread: a command arrived (its data may still be on its way: `ready` false).
  Incoming* accept(const wire::Command& command) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto incoming = std::make_unique<Incoming>();
    incoming->command = command;
    Incoming* raw = incoming.get();
    queue_[command.sequence] = std::move(incoming);
    return raw;
  }
  // UCX thread: `incoming`'s data is complete.
  void ready(Incoming* incoming) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      incoming->ready = true;
    }
    wake_.notify_one();
  }
  // UCX thread: the client left or died; its thread frees everything and ends.
  void close() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closing_ = true;
    }
    wake_.notify_one();
  }
  bool finished() const { return finished_.load(std::memory_order_acquire); }
  ucp_ep_h endpoint() const { return endpoint_; }
  std::uint64_t id() const { return id_; }

private:
  void run();
  void execute(Incoming& incoming);
  Status dispatch(const wire::Command& c, const std::vector<unsigned char>& data, Outgoing& out);
  Result<Device> device(std::uint32_t index) const;
  Result<StreamRef> stream(const wire::Command& c) const;
  Status take_deferred(std::uint32_t device);

  Server& server_;
  ucp_ep_h endpoint_;
  std::uint64_t id_;
  std::thread executor_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::uint64_t, std::unique_ptr<Incoming>> queue_;
  std::uint64_t next_sequence_ = 1;
  bool closing_ = false;
  std::atomic<bool> finished_{false};

  // The client's objects (its thread only).
  std::uint64_t next_handle_ = 1;
  std::unordered_map<std::uint64_t, Allocation> buffers_;
  std::unordered_map<std::uint64_t, StreamEntry> streams_;
  std::unordered_map<std::uint64_t, EventEntry> events_;
  std::unordered_map<std::uint64_t, ModuleEntry> modules_;
  std::unordered_map<std::uint64_t, FunctionEntry> functions_;
  std::map<std::uint32_t, Status> deferred_; // the first failure of a one-way command, per device
};

class Server {
public:
  Server(const Options& options, const std::vector<Exported>& devices) : options_(options), devices_(devices) {}
  Status run(const std::atomic<bool>& stop);

  const std::vector<Exported>& devices() const { return devices_; }
  const Options& options() const { return options_; }
  std::uint64_t clients() const { return client_count_.load(std::memory_order_relaxed); }
  // Any thread: queues a reply for the UCX thread.
  void send(Outgoing out) {
    {
      std::lock_guard<std::mutex> lock(outbox_mutex_);
      outbox_.push_back(std::move(out));
    }
    worker_.signal();
  }

private:
  static void on_connection(ucp_conn_request_h request, void* arg);
  static void on_endpoint_error(void* arg, ucp_ep_h endpoint, ucs_status_t status);
  static ucs_status_t on_command(void* arg, const void* header, std::size_t header_bytes, void* data,
                                 std::size_t bytes, const ucp_am_recv_param_t* param);
  static void on_data(void* request, ucs_status_t status, std::size_t length, void* user_data);
  void drop(Client* client, const char* why);
  void flush_outbox();
  void reap();

  const Options& options_;
  const std::vector<Exported>& devices_;
  remote::Worker worker_;
  std::unordered_map<ucp_ep_h, std::unique_ptr<Client>> clients_;
  std::vector<std::unique_ptr<Client>> closing_;
  std::uint64_t next_client_ = 1;
  std::atomic<std::uint64_t> client_count_{0};
  std::mutex outbox_mutex_;
  std::deque<Outgoing> outbox_;
};

// ---- The client's thread ------------------------------------------------------------------

void Client::run() {
  for (;;) {
    std::unique_ptr<Incoming> next;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] {
        auto it = queue_.find(next_sequence_);
        return closing_ || (it != queue_.end() && it->second->ready);
      });
      if (closing_) break;
      auto it = queue_.find(next_sequence_);
      next = std::move(it->second);
      queue_.erase(it);
      ++next_sequence_;
    }
    execute(*next);
  }
  // Frees everything the client held, in dependency order; the devices stay open for others.
  functions_.clear();
  modules_.clear();
  events_.clear();
  for (auto& [handle, entry] : streams_) static_cast<void>(entry.stream.synchronize());
  streams_.clear();
  for (const Exported& e : server_.devices()) static_cast<void>(synchronize(e.device));
  buffers_.clear();
  finished_.store(true, std::memory_order_release);
}

void Client::execute(Incoming& incoming) {
  const wire::Command& c = incoming.command;
  const auto op = static_cast<Op>(c.op);
  Outgoing out;
  out.endpoint = endpoint_;
  out.reply.sequence = c.sequence;
  Status status = dispatch(c, incoming.data, out);
  if (!wire::has_reply(op)) {
    // A one-way command's failure waits for the next synchronizing call on its device.
    if (!status.ok()) deferred_.try_emplace(c.device, std::move(status));
    return;
  }
  if (!status.ok()) { // the message, then what the command had to say (a build log)
    std::string_view text = status.message();
    out.reply.code = static_cast<std::int32_t>(status.code());
    out.reply.text_bytes = static_cast<std::uint32_t>(text.size());
    out.data.insert(out.data.begin(), text.begin(), text.end());
  }
  server_.send(std::move(out));
}

Result<Device> Client::device(std::uint32_t index) const {
  if (index >= server_.devices().size()) {
    return make_error(ErrorCode::invalid_argument, "no exported device ", index, " (the server exports ",
                      server_.devices().size(), ")");
  }
  return server_.devices()[index].device;
}

Result<StreamRef> Client::stream(const wire::Command& c) const {
  Result<Device> d = device(c.device);
  if (!d.ok()) return std::move(d).status();
  if (c.stream == 0) return current_stream(*d);
  auto it = streams_.find(c.stream);
  if (it == streams_.end() || it->second.device != c.device) {
    return make_error(ErrorCode::invalid_argument, "stream ", c.stream, " is no stream of this client on ", *d);
  }
  return it->second.stream.ref();
}

Status Client::take_deferred(std::uint32_t device) {
  auto it = deferred_.find(device);
  if (it == deferred_.end()) return Status();
  Status s = std::move(it->second);
  deferred_.erase(it);
  return make_error(s.code(), "an earlier call failed: ", s.message());
}

// The named object of the client, or invalid_argument naming what was asked for.
template <class Map>
auto find_object(Map& map, std::uint64_t handle, std::uint32_t device, const char* what)
    -> Result<typename Map::mapped_type*> {
  auto it = map.find(handle);
  if (it == map.end() || it->second.device != device) {
    return make_error(ErrorCode::invalid_argument, what, " ", handle, " is no ", what, " of this client on device ",
                      device);
  }
  return &it->second;
}

#define SERVER_TRY_ASSIGN(name, expression)                                                                            \
  auto name##_result = (expression);                                                                                   \
  if (!name##_result.ok()) return std::move(name##_result).status();                                                   \
  auto& name = *name##_result;

Status check_range(const Allocation& a, std::uint64_t offset, std::uint64_t bytes) {
  if (offset > a.buffer.size() || bytes > a.buffer.size() - offset) {
    return make_error(ErrorCode::out_of_range, "bytes [", offset, ", ", offset, " + ", bytes,
                      ") are outside the allocation of ", a.buffer.size());
  }
  return Status();
}

Status Client::dispatch(const wire::Command& c, const std::vector<unsigned char>& data, Outgoing& out) {
  const auto op = static_cast<Op>(c.op);
  if (op == Op::hello) {
    if (c.a[0] != wire::kVersion) {
      return make_error(ErrorCode::abi_mismatch, "the client speaks protocol version ", c.a[0], ", this server ",
                        wire::kVersion, ": use one devrt release on both sides");
    }
    std::vector<wire::DeviceDescription> descriptions;
    for (const Exported& e : server_.devices()) descriptions.push_back(e.description);
    out.data = wire::encode_devices(descriptions);
    return Status();
  }
  SERVER_TRY_ASSIGN(dev, device(c.device));
  switch (op) {
  case Op::allocate: {
    if (c.a[0] == 0) return make_error(ErrorCode::invalid_argument, "allocate: zero bytes");
    SERVER_TRY_ASSIGN(buffer, Buffer::allocate(dev, c.a[0], c.a[1]));
    const std::uint64_t handle = next_handle_++;
    buffers_.emplace(handle, Allocation{c.device, std::move(buffer)});
    out.reply.value[0] = handle;
    return Status();
  }
  case Op::free:
    if (buffers_.erase(c.a[0]) == 0) return make_error(ErrorCode::invalid_argument, "free: no allocation ", c.a[0]);
    return Status();
  case Op::write: {
    SERVER_TRY_ASSIGN(a, find_object(buffers_, c.a[0], c.device, "allocation"));
    DEVRT_RETURN_IF_ERROR(check_range(*a, c.a[1], data.size()));
    SERVER_TRY_ASSIGN(s, stream(c));
    DEVRT_RETURN_IF_ERROR(copy(host_span(data.data(), data.size()), 0, a->buffer.span(), c.a[1], data.size(), s));
    // The bytes are this message's: done with them before it goes.
    return synchronize(s);
  }
  case Op::read: {
    SERVER_TRY_ASSIGN(a, find_object(buffers_, c.a[0], c.device, "allocation"));
    DEVRT_RETURN_IF_ERROR(check_range(*a, c.a[1], c.a[2]));
    DEVRT_RETURN_IF_ERROR(take_deferred(c.device));
    SERVER_TRY_ASSIGN(s, stream(c));
    out.data.resize(c.a[2]);
    DEVRT_RETURN_IF_ERROR(copy(a->buffer.span(), c.a[1], host_span(out.data.data(), out.data.size()), 0, c.a[2], s));
    return synchronize(s);
  }
  case Op::copy: {
    SERVER_TRY_ASSIGN(dst, find_object(buffers_, c.a[2], c.device, "allocation"));
    SERVER_TRY_ASSIGN(src, find_object(buffers_, c.a[0], static_cast<std::uint32_t>(c.a[5]), "allocation"));
    DEVRT_RETURN_IF_ERROR(check_range(*src, c.a[1], c.a[4]));
    DEVRT_RETURN_IF_ERROR(check_range(*dst, c.a[3], c.a[4]));
    SERVER_TRY_ASSIGN(s, stream(c));
    Result<Device> runner = copy_device(src->buffer.device(), dev);
    if (runner.ok() && *runner == dev) return copy(src->buffer.span(), c.a[1], dst->buffer.span(), c.a[3], c.a[4], s);
    // The source's device runs it: ordered after the destination's stream, finished before the next command.
    DEVRT_RETURN_IF_ERROR(synchronize(s));
    DEVRT_RETURN_IF_ERROR(copy(src->buffer.span(), c.a[1], dst->buffer.span(), c.a[3], c.a[4]));
    return synchronize(src->buffer.device());
  }
  case Op::stream_create: {
    SERVER_TRY_ASSIGN(created, Stream::create(dev));
    const std::uint64_t handle = next_handle_++;
    streams_.emplace(handle, StreamEntry{c.device, std::move(created)});
    out.reply.value[0] = handle;
    return Status();
  }
  case Op::stream_destroy: {
    SERVER_TRY_ASSIGN(entry, find_object(streams_, c.a[0], c.device, "stream"));
    static_cast<void>(entry);
    streams_.erase(c.a[0]);
    return Status();
  }
  case Op::stream_synchronize: {
    SERVER_TRY_ASSIGN(s, stream(c));
    DEVRT_RETURN_IF_ERROR(synchronize(s));
    return take_deferred(c.device);
  }
  case Op::device_synchronize:
    // Everything this client queued on the device: its streams and the default stream (other
    // clients' work is theirs; not every backend can wait for a whole device).
    for (const auto& [handle, entry] : streams_) {
      if (entry.device == c.device) DEVRT_RETURN_IF_ERROR(entry.stream.synchronize());
    }
    DEVRT_RETURN_IF_ERROR(synchronize(current_stream(dev)));
    return take_deferred(c.device);
  case Op::event_create: {
    SERVER_TRY_ASSIGN(created, Event::create(dev, EventOptions{c.a[0] != 0}));
    const std::uint64_t handle = next_handle_++;
    events_.emplace(handle, EventEntry{c.device, std::move(created)});
    out.reply.value[0] = handle;
    return Status();
  }
  case Op::event_destroy: {
    SERVER_TRY_ASSIGN(entry, find_object(events_, c.a[0], c.device, "event"));
    static_cast<void>(entry);
    events_.erase(c.a[0]);
    return Status();
  }
  case Op::event_record: {
    SERVER_TRY_ASSIGN(e, find_object(events_, c.a[0], c.device, "event"));
    SERVER_TRY_ASSIGN(s, stream(c));
    return e->event.record(s);
  }
  case Op::event_synchronize: {
    SERVER_TRY_ASSIGN(e, find_object(events_, c.a[0], c.device, "event"));
    DEVRT_RETURN_IF_ERROR(e->event.synchronize());
    return take_deferred(c.device);
  }
  case Op::event_query: {
    SERVER_TRY_ASSIGN(e, find_object(events_, c.a[0], c.device, "event"));
    SERVER_TRY_ASSIGN(done, e->event.query());
    out.reply.value[0] = done ? 1 : 0;
    return Status();
  }
  case Op::stream_wait_event: {
    SERVER_TRY_ASSIGN(e, find_object(events_, c.a[0], c.device, "event"));
    SERVER_TRY_ASSIGN(s, stream(c));
    return e->event.wait_on(s);
  }
  case Op::event_elapsed: {
    SERVER_TRY_ASSIGN(start, find_object(events_, c.a[0], c.device, "event"));
    SERVER_TRY_ASSIGN(end, find_object(events_, c.a[1], c.device, "event"));
    SERVER_TRY_ASSIGN(ns, Event::elapsed_ns(start->event, end->event));
    out.reply.value[0] = static_cast<std::uint64_t>(ns);
    return Status();
  }
  case Op::module_load: {
    const auto format = static_cast<std::uint32_t>(c.a[0]);
    if (format >= 32 || (kHostCodeFormats & DEVRT_MODULE_FORMAT_BIT(format)) != 0) {
      if (!server_.options().allow_host_code) {
        return make_error(ErrorCode::unsupported, "module_load: ",
                          module_format_name(static_cast<ModuleFormat>(format)),
                          " modules run host code on the server, which was not started with --allow-host-code");
      }
    }
    if (c.a[1] > data.size()) return make_error(ErrorCode::invalid_argument, "module_load: options past the message");
    std::string_view options(reinterpret_cast<const char*>(data.data()), c.a[1]);
    std::span<const std::byte> image(reinterpret_cast<const std::byte*>(data.data()) + c.a[1], data.size() - c.a[1]);
    std::string log;
    Result<Module> module = Module::load(dev, static_cast<ModuleFormat>(format), image, options, &log);
    if (!module.ok()) {
      out.data.assign(log.begin(), log.end());
      return std::move(module).status();
    }
    const std::uint64_t handle = next_handle_++;
    modules_.emplace(handle, ModuleEntry{c.device, std::move(module).value()});
    out.reply.value[0] = handle;
    out.reply.text_bytes = static_cast<std::uint32_t>(log.size());
    out.data.assign(log.begin(), log.end());
    return Status();
  }
  case Op::module_unload: {
    SERVER_TRY_ASSIGN(entry, find_object(modules_, c.a[0], c.device, "module"));
    static_cast<void>(entry);
    std::erase_if(functions_, [&](const auto& f) { return f.second.module == c.a[0]; });
    modules_.erase(c.a[0]);
    return Status();
  }
  case Op::module_function: {
    SERVER_TRY_ASSIGN(m, find_object(modules_, c.a[0], c.device, "module"));
    std::string name(data.begin(), data.end());
    SERVER_TRY_ASSIGN(function, m->module.function(name));
    const std::uint64_t handle = next_handle_++;
    functions_.emplace(handle, FunctionEntry{c.device, c.a[0], function, std::move(name)});
    out.reply.value[0] = handle;
    return Status();
  }
  case Op::launch: {
    SERVER_TRY_ASSIGN(f, find_object(functions_, c.a[0], c.device, "function"));
    const std::uint64_t count = c.a[5];
    if (count > kMaxKernelArgs || data.size() != count * sizeof(wire::LaunchArg)) {
      return make_error(ErrorCode::invalid_argument, "launch(", f->name, "): ", count, " arguments in ", data.size(),
                        " bytes");
    }
    std::vector<KernelArg> args;
    args.reserve(count);
    for (std::uint64_t i = 0; i < count; ++i) {
      wire::LaunchArg arg;
      std::memcpy(&arg, data.data() + i * sizeof arg, sizeof arg);
      if (arg.kind == DEVRT_ARG_BUFFER) {
        SERVER_TRY_ASSIGN(a, find_object(buffers_, arg.handle, c.device, "allocation"));
        DEVRT_RETURN_IF_ERROR(check_range(*a, arg.offset, arg.size));
        args.emplace_back(MemorySpan{dev, a->buffer.data(), arg.offset + arg.size}, arg.offset);
      } else if (arg.kind == DEVRT_ARG_SCALAR) {
        args.push_back(KernelArg::scalar(DataType{static_cast<DataTypeCode>(arg.type_code), arg.type_bits, 1}, arg.value));
      } else {
        return make_error(ErrorCode::invalid_argument, "launch(", f->name, "): argument ", i, " has kind ", arg.kind);
      }
    }
    LaunchConfig config;
    std::uint32_t grid[3], block[3];
    wire::unpack_extents(c.a + 1, grid, block);
    config.grid = Extent3{grid[0], grid[1], grid[2]};
    config.block = Extent3{block[0], block[1], block[2]};
    config.dynamic_shared_bytes = c.a[4];
    SERVER_TRY_ASSIGN(s, stream(c));
    return f->function.launch(config, args, s);
  }
  case Op::server_stats: {
    SERVER_TRY_ASSIGN(stats, memory_stats(dev));
    out.reply.value[0] = server_.clients();
    out.reply.value[1] = stats.total.allocated_bytes;
    out.reply.value[2] = stats.total.allocations;
    return Status();
  }
  default: return make_error(ErrorCode::invalid_argument, "unknown command ", c.op);
  }
}

// ---- The UCX thread -----------------------------------------------------------------------

void Server::on_connection(ucp_conn_request_h request, void* arg) {
  auto* server = static_cast<Server*>(arg);
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST | UCP_EP_PARAM_FIELD_ERR_HANDLER |
                      UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  params.conn_request = request;
  params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  params.err_handler.cb = &Server::on_endpoint_error;
  params.err_handler.arg = server;
  ucp_ep_h endpoint = nullptr;
  ucs_status_t s = remote::ucx_library().api.ucp_ep_create(server->worker_.handle(), &params, &endpoint);
  if (s != UCS_OK) {
    std::fprintf(stderr, "devrt-server: refused a connection: %s\n", remote::ucx_library().api.ucs_status_string(s));
    return;
  }
  auto client = std::make_unique<Client>(*server, endpoint, server->next_client_++);
  client->start();
  server->clients_[endpoint] = std::move(client);
  server->client_count_.fetch_add(1, std::memory_order_relaxed);
}

void Server::on_endpoint_error(void* arg, ucp_ep_h endpoint, ucs_status_t status) {
  auto* server = static_cast<Server*>(arg);
  auto it = server->clients_.find(endpoint);
  if (it != server->clients_.end()) server->drop(it->second.get(), remote::ucx_library().api.ucs_status_string(status));
}

void Server::drop(Client* client, const char* why) {
  std::fprintf(stderr, "devrt-server: client %llu left (%s); freeing what it held\n",
               static_cast<unsigned long long>(client->id()), why);
  auto it = clients_.find(client->endpoint());
  client->close();
  closing_.push_back(std::move(it->second));
  clients_.erase(it);
  client_count_.fetch_sub(1, std::memory_order_relaxed);
}

void Server::on_data(void* request, ucs_status_t status, std::size_t, void* user_data) {
  auto* incoming = static_cast<std::pair<Client*, Incoming*>*>(user_data);
  if (status == UCS_OK) incoming->first->ready(incoming->second);
  delete incoming;
  remote::ucx_library().api.ucp_request_free(request);
}

ucs_status_t Server::on_command(void* arg, const void* header, std::size_t header_bytes, void* data,
                                std::size_t bytes, const ucp_am_recv_param_t* param) {
  auto* server = static_cast<Server*>(arg);
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) == 0) return UCS_OK;
  auto it = server->clients_.find(param->reply_ep);
  if (it == server->clients_.end()) return UCS_OK;
  Client* client = it->second.get();
  wire::Command command;
  if (header_bytes != sizeof command) {
    server->drop(client, "a malformed command header");
    return UCS_OK;
  }
  std::memcpy(&command, header, sizeof command);
  Incoming* incoming = client->accept(command);
  incoming->data.resize(bytes);
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) == 0) {
    if (bytes > 0) std::memcpy(incoming->data.data(), data, bytes);
    client->ready(incoming);
    return UCS_OK;
  }
  ucp_request_param_t receive{};
  receive.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  receive.cb.recv_am = &Server::on_data;
  auto* context = new std::pair<Client*, Incoming*>(client, incoming);
  receive.user_data = context;
  ucs_status_ptr_t request = remote::ucx_library().api.ucp_am_recv_data_nbx(server->worker_.handle(), data,
                                                                           incoming->data.data(), bytes, &receive);
  if (request == nullptr) {
    delete context;
    client->ready(incoming);
  } else if (UCS_PTR_IS_ERR(request)) {
    delete context;
    server->drop(client, "receiving a command's data failed");
  }
  return UCS_OK;
}

void Server::flush_outbox() {
  std::deque<Outgoing> batch;
  {
    std::lock_guard<std::mutex> lock(outbox_mutex_);
    batch.swap(outbox_);
  }
  for (Outgoing& out : batch) {
    if (clients_.find(out.endpoint) == clients_.end()) continue; // the client is gone
    auto* message = new remote::OutgoingMessage();
    const auto* header = reinterpret_cast<const unsigned char*>(&out.reply);
    message->header.assign(header, header + sizeof out.reply);
    message->payload = std::move(out.data);
    message->data = message->payload.data();
    message->bytes = message->payload.size();
    static_cast<void>(remote::send_message(out.endpoint, wire::kReplyMessage, message, 0));
  }
}

// Ends the endpoints of clients whose threads have freed everything.
void Server::reap() {
  for (auto it = closing_.begin(); it != closing_.end();) {
    if (!(*it)->finished()) {
      ++it;
      continue;
    }
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t request = remote::ucx_library().api.ucp_ep_close_nbx((*it)->endpoint(), &param);
    if (request != nullptr && !UCS_PTR_IS_ERR(request)) {
      while (remote::ucx_library().api.ucp_request_check_status(request) == UCS_INPROGRESS) worker_.progress();
      remote::ucx_library().api.ucp_request_free(request);
    }
    it = closing_.erase(it);
  }
}

Status Server::run(const std::atomic<bool>& stop) {
  DEVRT_RETURN_IF_ERROR(worker_.open());
  const remote::UcxApi& ucx = remote::ucx_library().api;
  ucp_am_handler_param_t handler{};
  handler.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
  handler.id = wire::kCommandMessage;
  handler.cb = &Server::on_command;
  handler.arg = this;
  ucs_status_t s = ucx.ucp_worker_set_am_recv_handler(worker_.handle(), &handler);
  if (s != UCS_OK) return remote::ucx_error(ErrorCode::unavailable, "ucp_worker_set_am_recv_handler", s);

  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(options_.port);
  if (::inet_pton(AF_INET, options_.host.c_str(), &address.sin_addr) != 1) {
    return make_error(ErrorCode::invalid_argument, "--listen ", options_.host, ": not an IPv4 address");
  }
  ucp_listener_params_t params{};
  params.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
  params.sockaddr.addr = reinterpret_cast<const sockaddr*>(&address);
  params.sockaddr.addrlen = sizeof address;
  params.conn_handler.cb = &Server::on_connection;
  params.conn_handler.arg = this;
  ucp_listener_h listener = nullptr;
  s = ucx.ucp_listener_create(worker_.handle(), &params, &listener);
  if (s != UCS_OK) return remote::ucx_error(ErrorCode::unavailable, "ucp_listener_create", s);
  ucp_listener_attr_t attr{};
  attr.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
  s = ucx.ucp_listener_query(listener, &attr);
  if (s != UCS_OK) return remote::ucx_error(ErrorCode::unavailable, "ucp_listener_query", s);
  const auto* bound = reinterpret_cast<const sockaddr_in*>(&attr.sockaddr);
  const std::string where = options_.host + ":" + std::to_string(ntohs(bound->sin_port));
  std::printf("devrt-server: listening on %s, exporting %zu devices\n", where.c_str(), devices_.size());
  std::fflush(stdout);
  if (!options_.address_file.empty()) {
    const std::string partial = options_.address_file + ".partial";
    std::ofstream(partial) << where << "\n";
    std::rename(partial.c_str(), options_.address_file.c_str());
  }
  while (!stop.load(std::memory_order_relaxed)) {
    worker_.wait(100);
    worker_.progress();
    flush_outbox();
    reap();
  }
  ucx.ucp_listener_destroy(listener);
  while (!clients_.empty()) drop(clients_.begin()->second.get(), "the server is stopping");
  while (!closing_.empty()) {
    worker_.progress();
    reap();
  }
  return Status();
}

} // namespace

Result<std::vector<Exported>> export_devices(const std::vector<std::string>& specs, bool allow_host_code) {
  std::vector<Exported> out;
  std::vector<Device> present = devices();
  if (specs.empty()) {
    for (Device d : present) {
      if (d.kind != DeviceKind::remote) out.push_back(describe(d, allow_host_code));
    }
    return out;
  }
  for (const std::string& spec : specs) {
    const std::size_t colon = spec.find(':');
    const std::string backend = spec.substr(0, colon);
    Result<DeviceKind> kind = parse_device_kind(backend);
    if (!kind.ok() || *kind == DeviceKind::remote) {
      return make_error(ErrorCode::invalid_argument, "--devices ", spec, ": no backend '", backend, "' to export");
    }
    std::size_t matched = 0;
    for (Device d : present) {
      if (d.kind != *kind) continue;
      if (colon != std::string::npos && std::to_string(d.id) != spec.substr(colon + 1)) continue;
      out.push_back(describe(d, allow_host_code));
      ++matched;
    }
    if (matched == 0) {
      Result<BackendRef> b = Registry::global().get(*kind);
      std::string why = b.ok() ? std::string(b->availability().message()) : std::string(b.status().message());
      return make_error(ErrorCode::not_found, "--devices ", spec, ": no such device here",
                        why.empty() ? "" : " (", why, why.empty() ? "" : ")");
    }
  }
  return out;
}

Status serve(const Options& options, const std::vector<Exported>& devices, const std::atomic<bool>& stop) {
  Server server(options, devices);
  return server.run(stop);
}

} // namespace devrt::server
