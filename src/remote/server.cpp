// SPDX-License-Identifier: Apache-2.0
#include "remote/server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include <devrt/backend/backend.hpp>
#include <devrt/discovery.hpp>
#include <devrt/memory_stats.hpp>

#include "remote/host_code.hpp"
#include "remote/session.hpp"

namespace devrt::server {
namespace {

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
  for (std::int32_t a = 0; a < kAttributeCount; ++a) {
    Result<AttributeValue> value = get_attribute(device, static_cast<Attribute>(a));
    if (value.ok()) detail::export_attribute(*value, &e.description.attributes[a]);
  }
  const devrt_attribute_value& name = e.description.attributes[static_cast<int>(Attribute::device_name)];
  if (name.type == DEVRT_VALUE_STRING) e.description.name = name.string;
  const devrt_attribute_value& memory = e.description.attributes[static_cast<int>(Attribute::total_global_memory)];
  if (memory.type == DEVRT_VALUE_INT && memory.ints[0] > 0) e.memory_bytes = static_cast<std::uint64_t>(memory.ints[0]);
  Result<Target> target = detect_target(device);
  if (target.ok()) e.description.target_json = target->to_json();
  e.kernels_in_process = kernels_run_in_process(device.kind, target.ok() ? *target : Target(), e.description.name);
  // What a client may load: host code only with --allow-host-code, and on a device whose kernels
  // run in this process every module is host code.
  if (!allow_host_code) formats = e.kernels_in_process ? 0 : formats & ~kHostCodeFormats;
  e.description.module_formats = formats;
  return e;
}

// How long the UCX thread keeps polling after its last activity before it sleeps.
constexpr std::chrono::microseconds kSpin{200};

// The UCX thread: the listener, every client's endpoint, receiving commands and sending replies.
class Server final : public SessionHost {
public:
  Server(const Options& options, const std::vector<Exported>& devices) : options_(options), devices_(devices) {}
  Status run(const std::atomic<bool>& stop);

  const std::vector<Exported>& devices() const override { return devices_; }
  const Options& options() const override { return options_; }
  std::uint64_t clients() const override { return client_count_.load(std::memory_order_relaxed); }
  bool admit() override {
    if (client_count_.load(std::memory_order_relaxed) >= options_.limits.clients) return false;
    client_count_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  void send(Outgoing out) override {
    {
      std::lock_guard<std::mutex> lock(outbox_mutex_);
      outbox_.push_back(std::move(out));
      outbox_ready_.store(true, std::memory_order_release);
    }
    // A reply of a command the UCX thread ran itself goes out on its next pass.
    if (std::this_thread::get_id() != ucx_thread_) worker_.signal();
  }

private:
  static void on_connection(ucp_conn_request_h request, void* arg);
  static void on_endpoint_error(void* arg, ucp_ep_h endpoint, ucs_status_t status);
  static ucs_status_t on_command(void* arg, const void* header, std::size_t header_bytes, void* data, std::size_t bytes,
                                 const ucp_am_recv_param_t* param);
  // A message on an id devrt's clients never use.
  static ucs_status_t on_unexpected(void* arg, const void* header, std::size_t header_bytes, void* data,
                                    std::size_t bytes, const ucp_am_recv_param_t* param);
  // A command's data arriving by rendezvous, for on_data.
  struct Receipt {
    Server* server;
    Client* client;
    Incoming* incoming;
    bool in_place; // landing in the client's memory (Client::receive_in_place)
  };
  static void on_data(void* request, ucs_status_t status, std::size_t length, void* user_data);
  void drop(Client* client, const std::string& why);
  // Sends the replies the clients' threads queued; false when there were none.
  bool flush_outbox();
  bool transferring() const;
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
  std::atomic<bool> outbox_ready_{false};
  std::thread::id ucx_thread_ = std::this_thread::get_id(); // run()'s
  int receiving_ = 0;                                       // commands' data still arriving (rendezvous)
};

// ---- The UCX thread -----------------------------------------------------------------------

void Server::on_connection(ucp_conn_request_h request, void* arg) {
  auto* server = static_cast<Server*>(arg);
  ucp_ep_params_t params{};
  params.field_mask =
      UCP_EP_PARAM_FIELD_CONN_REQUEST | UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
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
  // Connections still in their handshake have a budget of their own: the oldest gives way to the
  // newest, so that silent peers cannot keep out one that completes its handshake in time.
  Client* oldest = nullptr;
  std::uint64_t pending = 0;
  for (const auto& [other_endpoint, other] : server->clients_) {
    if (other->admitted()) continue;
    ++pending;
    if (oldest == nullptr || other->connected_at() < oldest->connected_at()) oldest = other.get();
  }
  if (oldest != nullptr && pending >= server->options_.handshakes.pending) {
    server->drop(oldest, "its handshake was cut short: more connections came than the server lets wait for theirs");
  }
  server->clients_[endpoint] = std::make_unique<Client>(*server, endpoint, server->next_client_++);
}

void Server::on_endpoint_error(void* arg, ucp_ep_h endpoint, ucs_status_t status) {
  auto* server = static_cast<Server*>(arg);
  auto it = server->clients_.find(endpoint);
  if (it == server->clients_.end()) return;
  // A client that exits normally closes its endpoint (remote/connection.cpp): UCX reports a reset.
  server->drop(it->second.get(), status == UCS_ERR_CONNECTION_RESET
                                     ? std::string("it closed the connection")
                                     : std::string(remote::ucx_library().api.ucs_status_string(status)));
}

void Server::drop(Client* client, const std::string& why) {
  std::fprintf(stderr, "devrt-server: client %llu left (%s); freeing what it held\n",
               static_cast<unsigned long long>(client->id()), why.c_str());
  auto it = clients_.find(client->endpoint());
  if (client->admitted()) client_count_.fetch_sub(1, std::memory_order_relaxed);
  client->close();
  closing_.push_back(std::move(it->second));
  clients_.erase(it);
}

ucs_status_t Server::on_unexpected(void* arg, const void*, std::size_t, void*, std::size_t,
                                   const ucp_am_recv_param_t* param) {
  auto* server = static_cast<Server*>(arg);
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) == 0) return UCS_OK;
  auto it = server->clients_.find(param->reply_ep);
  if (it != server->clients_.end()) {
    server->drop(it->second.get(), "it broke the protocol: a message on an id devrt's clients never use");
  }
  return UCS_OK;
}

void Server::on_data(void* request, ucs_status_t status, std::size_t, void* user_data) {
  auto* receipt = static_cast<Receipt*>(user_data);
  --receipt->server->receiving_;
  if (receipt->in_place) {
    receipt->client->in_place_done();
  } else if (status == UCS_OK) {
    receipt->client->ready(receipt->incoming);
  }
  delete receipt;
  remote::ucx_library().api.ucp_request_free(request);
}

ucs_status_t Server::on_command(void* arg, const void* header, std::size_t header_bytes, void* data, std::size_t bytes,
                                const ucp_am_recv_param_t* param) {
  auto* server = static_cast<Server*>(arg);
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) == 0) return UCS_OK;
  auto it = server->clients_.find(param->reply_ep);
  if (it == server->clients_.end()) return UCS_OK;
  Client* client = it->second.get();
  std::optional<wire::Command> command = wire::Command::decode(header, header_bytes);
  if (!command) {
    server->drop(client,
                 "it broke the protocol: a command header of " + std::to_string(header_bytes) + " bytes, no command's");
    return UCS_OK;
  }
  std::string why;
  Incoming* incoming = client->accept(*command, bytes, why);
  if (incoming == nullptr) {
    server->drop(client, "it broke the protocol: " + why);
    return UCS_OK;
  }
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) == 0) {
    incoming->data = take_staging(bytes);
    if (bytes > 0) std::memcpy(incoming->data.data(), data, bytes);
    client->ready(incoming);
    return UCS_OK;
  }
  // A write into host memory lands there directly when it can; anything else is staged.
  void* place = client->receive_in_place(incoming);
  if (place == nullptr) {
    incoming->data = take_staging(bytes);
    place = incoming->data.data();
  }
  ucp_request_param_t receive{};
  receive.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  receive.cb.recv_am = &Server::on_data;
  auto* context = new Receipt{server, client, incoming, place != incoming->data.data()};
  receive.user_data = context;
  ucs_status_ptr_t request =
      remote::ucx_library().api.ucp_am_recv_data_nbx(server->worker_.handle(), data, place, bytes, &receive);
  if (request == nullptr || UCS_PTR_IS_ERR(request)) {
    const bool ok = request == nullptr, in_place = context->in_place;
    delete context;
    if (in_place) {
      client->in_place_done();
    } else if (ok) {
      client->ready(incoming);
    }
    if (!ok) server->drop(client, "receiving a command's data failed");
  } else {
    ++server->receiving_;
  }
  return UCS_OK;
}

bool Server::transferring() const {
  if (receiving_ > 0) return true;
  for (const auto& [endpoint, client] : clients_) {
    if (client->sends_in_flight > 0) return true;
  }
  return false;
}

bool Server::flush_outbox() {
  if (!outbox_ready_.load(std::memory_order_acquire)) return false;
  std::deque<Outgoing> batch;
  {
    std::lock_guard<std::mutex> lock(outbox_mutex_);
    batch.swap(outbox_);
    outbox_ready_.store(false, std::memory_order_relaxed);
  }
  for (Outgoing& out : batch) {
    auto it = clients_.find(out.endpoint);
    if (it == clients_.end()) { // the client is gone
      if (out.lender != nullptr) out.lender->in_place_done();
      continue;
    }
    Client* client = it->second.get();
    if (!out.has_reply) {
      drop(client, out.disconnect);
      continue;
    }
    auto* message = new remote::OutgoingMessage();
    out.reply.encode(message->header);
    message->payload = std::move(out.data);
    message->data = message->payload.data();
    message->bytes = message->payload.size();
    if (out.lender != nullptr) {
      message->data = out.lent;
      message->bytes = out.lent_bytes;
      message->sent = [](void* lender) { static_cast<Client*>(lender)->in_place_done(); };
      message->sent_context = out.lender;
    }
    message->in_flight = &client->sends_in_flight;
    message->recycle = [](std::vector<unsigned char>&& payload) { give_staging(std::move(payload)); };
    if (!out.disconnect.empty()) {
      client->disconnect_when_sent = std::move(out.disconnect);
      client->disconnect_after = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    }
    static_cast<void>(remote::send_message(out.endpoint, wire::kReplyMessage, message, 0));
  }
  return true;
}

// Ends the connections of clients refused once their reply has gone, and the endpoints of clients
// whose threads have freed everything.
void Server::reap() {
  const auto now = std::chrono::steady_clock::now();
  for (auto it = clients_.begin(); it != clients_.end();) {
    Client* client = (it++)->second.get();
    if (!client->admitted() && client->disconnect_when_sent.empty() &&
        now - client->connected_at() > options_.handshakes.deadline) {
      drop(client, "it did not complete the handshake within " + std::to_string(options_.handshakes.deadline.count()) +
                       " ms (--handshake-timeout)");
      continue;
    }
    // A refused client closes its end once it has read why (the server then drops it at once, its
    // endpoint failing); one that does not is dropped a second after the reason was sent: closing
    // sooner could discard the reason on its way.
    if (!client->disconnect_when_sent.empty() && client->sends_in_flight == 0 && now >= client->disconnect_after) {
      drop(client, client->disconnect_when_sent);
    }
  }
  // A dropped client's endpoint closes at once (outside UCX's callbacks, so here): transfers into or
  // out of its memory that were under way end with it, and its thread, done with what it runs,
  // frees everything; then it goes.
  for (auto it = closing_.begin(); it != closing_.end();) {
    Client& client = **it;
    if (!client.endpoint_closed) {
      client.endpoint_closed = true;
      ucp_request_param_t param{};
      param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      param.flags = UCP_EP_CLOSE_FLAG_FORCE;
      ucs_status_ptr_t request = remote::ucx_library().api.ucp_ep_close_nbx(client.endpoint(), &param);
      if (request != nullptr && !UCS_PTR_IS_ERR(request)) {
        while (remote::ucx_library().api.ucp_request_check_status(request) == UCS_INPROGRESS) worker_.progress();
        remote::ucx_library().api.ucp_request_free(request);
      }
    }
    it = client.finished() ? closing_.erase(it) : std::next(it);
  }
}

Status Server::run(const std::atomic<bool>& stop) {
  ucx_thread_ = std::this_thread::get_id();
  DEVRT_RETURN_IF_ERROR(worker_.open());
  const remote::UcxApi& ucx = remote::ucx_library().api;
  DEVRT_RETURN_IF_ERROR(remote::set_message_handlers(worker_.handle(), wire::kCommandMessage, &Server::on_command,
                                                     &Server::on_unexpected, wire::kHighestMessage, this));

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
  ucs_status_t s = ucx.ucp_listener_create(worker_.handle(), &params, &listener);
  if (s != UCS_OK) return remote::ucx_error(ErrorCode::unavailable, "ucp_listener_create", s);
  ucp_listener_attr_t attr{};
  attr.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
  s = ucx.ucp_listener_query(listener, &attr);
  if (s != UCS_OK) return remote::ucx_error(ErrorCode::unavailable, "ucp_listener_query", s);
  const auto* bound = reinterpret_cast<const sockaddr_in*>(&attr.sockaddr);
  const std::string where = options_.host + ":" + std::to_string(ntohs(bound->sin_port));
  const char* trust = !options_.key              ? "no key: loopback only, no host code"
                      : options_.allow_host_code ? "clients must prove the key; host code allowed"
                                                 : "clients must prove the key; no host code";
  std::printf("devrt-server: listening on %s, exporting %zu devices; %s\n", where.c_str(), devices_.size(), trust);
  std::fflush(stdout);
  if (!options_.address_file.empty()) {
    const std::string partial = options_.address_file + ".partial";
    std::ofstream(partial) << where << "\n";
    std::rename(partial.c_str(), options_.address_file.c_str());
  }
  // Sleeping on the worker's descriptor and waking costs tens of microseconds each way: after any
  // activity the loop keeps polling for kSpin (a client's next command, a reply from its thread),
  // and never sleeps while a transfer is under way (a rendezvous's fragments need progress that no
  // descriptor announces).
  using Clock = std::chrono::steady_clock;
  Clock::time_point active = Clock::now();
  while (!stop.load(std::memory_order_relaxed)) {
    bool busy = worker_.progress();
    busy = flush_outbox() || busy;
    reap();
    const Clock::time_point now = Clock::now();
    if (busy || transferring()) {
      active = now;
    } else if (now - active < kSpin) {
      ::sched_yield();
    } else {
      worker_.wait(100, {}, &outbox_ready_);
    }
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
      return make_error(ErrorCode::not_found, "--devices ", spec, ": no such device here", why.empty() ? "" : " (", why,
                        why.empty() ? "" : ")");
    }
  }
  return out;
}

Status serve(const Options& options, const std::vector<Exported>& devices, const std::atomic<bool>& stop) {
  Server server(options, devices);
  return server.run(stop);
}

} // namespace devrt::server
