// SPDX-License-Identifier: Apache-2.0
// UCX peers written apart from devrt's remote client and server, for the hostile tests: RawPeer
// connects to a devrt-server and sends whatever it is told (any active-message id, any header,
// any payload, eager or rendezvous); RawListener is a server that answers a devrt client with
// whatever it is told. Only UCX itself (through the library devrt opens) and the key proof are
// shared with devrt.
#ifndef DEVRT_TEST_REMOTE_RAW_PEER_HPP
#define DEVRT_TEST_REMOTE_RAW_PEER_HPP

#include <arpa/inet.h>
#include <netinet/in.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "remote/auth.hpp"
#include "remote/protocol.hpp"
#include "remote/ucx_api.hpp"

namespace devrt::test {

namespace wire = devrt::remote::wire;

inline const devrt::remote::UcxApi& ucx() { return devrt::remote::ucx_library().api; }

inline sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

// The port of "host:port".
inline std::uint16_t port_of(const std::string& address) {
  return static_cast<std::uint16_t>(std::stoul(address.substr(address.rfind(':') + 1)));
}

// Progresses `worker` until `done()` or `timeout`; the last done().
inline bool progress_until(devrt::remote::Worker& worker, const std::function<bool()>& done,
                           std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!done() && std::chrono::steady_clock::now() < until) {
    if (!worker.progress()) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return done();
}

// Closes `endpoint` at once and waits for the close.
inline void force_close(devrt::remote::Worker& worker, ucp_ep_h endpoint) {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = UCP_EP_CLOSE_FLAG_FORCE;
  ucs_status_ptr_t request = ucx().ucp_ep_close_nbx(endpoint, &param);
  if (request != nullptr && !UCS_PTR_IS_ERR(request)) {
    while (ucx().ucp_request_check_status(request) == UCS_INPROGRESS) worker.progress();
    ucx().ucp_request_free(request);
  }
}

// Sends active message `id` on `endpoint` and waits (at most 10 s) for the send to end: its status.
inline ucs_status_t send_raw(devrt::remote::Worker& worker, ucp_ep_h endpoint, unsigned id, const void* header,
                             std::size_t header_bytes, const void* data, std::size_t bytes, std::uint32_t flags) {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = flags;
  ucs_status_ptr_t request = ucx().ucp_am_send_nbx(endpoint, id, header, header_bytes, data, bytes, &param);
  if (request == nullptr) return UCS_OK;
  if (UCS_PTR_IS_ERR(request)) return UCS_PTR_STATUS(request);
  ucs_status_t status = UCS_INPROGRESS;
  progress_until(
      worker, [&] { return (status = ucx().ucp_request_check_status(request)) != UCS_INPROGRESS; },
      std::chrono::seconds(10));
  if (status == UCS_INPROGRESS) ucx().ucp_request_cancel(worker.handle(), request);
  ucx().ucp_request_free(request);
  return status;
}

// Registers `callback` for the ids devrt uses (0 to wire::kReplyMessage) and no others: a raw
// peer is as careless as any UCX program.
inline void handle_devrt_ids(devrt::remote::Worker& worker, ucp_am_recv_callback_t callback, void* arg) {
  for (unsigned id = 0; id <= wire::kReplyMessage; ++id) {
    ucp_am_handler_param_t handler{};
    handler.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
    handler.id = id;
    handler.cb = callback;
    handler.arg = arg;
    REQUIRE(ucx().ucp_worker_set_am_recv_handler(worker.handle(), &handler) == UCS_OK);
  }
}

// A client of devrt-server's transport that sends what it is told. Not thread-safe.
class RawPeer {
public:
  explicit RawPeer(std::uint16_t port) {
    REQUIRE(worker_.open().ok());
    handle_devrt_ids(worker_, &RawPeer::on_message, this);
    const sockaddr_in address = loopback(port);
    ucp_ep_params_t params{};
    params.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR | UCP_EP_PARAM_FIELD_ERR_HANDLER |
                        UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    params.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
    params.sockaddr.addr = reinterpret_cast<const sockaddr*>(&address);
    params.sockaddr.addrlen = sizeof address;
    params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb = [](void* arg, ucp_ep_h, ucs_status_t) { static_cast<RawPeer*>(arg)->ended_ = true; };
    params.err_handler.arg = this;
    REQUIRE(ucx().ucp_ep_create(worker_.handle(), &params, &endpoint_) == UCS_OK);
  }
  RawPeer(const RawPeer&) = delete;
  RawPeer& operator=(const RawPeer&) = delete;
  ~RawPeer() { force_close(worker_, endpoint_); }

  ucs_status_t send(unsigned id, const void* header, std::size_t header_bytes, const void* data, std::size_t bytes,
                    std::uint32_t flags = UCP_AM_SEND_FLAG_REPLY) {
    return send_raw(worker_, endpoint_, id, header, header_bytes, data, bytes, flags);
  }
  // A devrt command carrying `request`, with the next sequence number.
  template <class R>
  ucs_status_t command(const R& request, const std::vector<unsigned char>& payload,
                       std::uint32_t flags = UCP_AM_SEND_FLAG_REPLY) {
    wire::Command c = wire::make_command(request);
    c.sequence = next_sequence_++;
    std::vector<unsigned char> header;
    c.encode(header);
    awaited_op_ = c.op;
    return send(wire::kCommandMessage, header.data(), header.size(), payload.data(), payload.size(), flags);
  }
  // The next reply within `timeout`, or nullopt.
  std::optional<wire::Reply> reply(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    if (!progress_until(
            worker_, [&] { return replied_ && receiving_ == 0; }, timeout))
      return std::nullopt;
    replied_ = false;
    return last_;
  }
  // The handshake as devrt's client makes it (keyed when `key` is set): true when admitted.
  bool handshake(const std::optional<devrt::remote::auth::Key>& key = std::nullopt) {
    devrt::remote::auth::Nonce nonce{};
    if (key) nonce = *devrt::remote::auth::random_nonce();
    if (command(wire::Hello{}, std::vector<unsigned char>(nonce.begin(), nonce.end())) != UCS_OK) {
      return false;
    }
    std::optional<wire::Reply> hello = reply();
    if (!hello || hello->code != 0) return false;
    if (!key) return true;
    if (hello->get<wire::HelloReply>().flags != wire::kHelloKeyed || data_.size() < 64) return false;
    devrt::remote::auth::Nonce server{};
    std::memcpy(server.data(), data_.data(), server.size());
    devrt::Result<devrt::remote::auth::Proof> proof =
        devrt::remote::auth::prove(*key, devrt::remote::auth::Role::client, nonce, server);
    if (!proof.ok() ||
        command(wire::Authenticate{}, std::vector<unsigned char>(proof->begin(), proof->end())) != UCS_OK) {
      return false;
    }
    std::optional<wire::Reply> done = reply();
    return done && done->code == 0;
  }
  // Whether the server ends this connection within `timeout`.
  bool ended_within(std::chrono::milliseconds timeout) {
    return progress_until(
        worker_, [&] { return ended_.load(); }, timeout);
  }
  const std::vector<unsigned char>& data() const { return data_; }

private:
  static ucs_status_t on_message(void* arg, const void* header, std::size_t header_bytes, void* data, std::size_t bytes,
                                 const ucp_am_recv_param_t* param) {
    auto* peer = static_cast<RawPeer*>(arg);
    std::optional<wire::Reply> reply = wire::Reply::decode(header, header_bytes, peer->awaited_op_);
    if (!reply) return UCS_OK;
    peer->last_ = *reply;
    peer->replied_ = true;
    peer->data_.resize(bytes);
    if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) == 0) {
      if (bytes > 0) std::memcpy(peer->data_.data(), data, bytes);
      return UCS_OK;
    }
    ucp_request_param_t receive{};
    receive.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    receive.cb.recv_am = [](void* request, ucs_status_t, std::size_t, void* user) {
      --static_cast<RawPeer*>(user)->receiving_;
      ucx().ucp_request_free(request);
    };
    receive.user_data = peer;
    ucs_status_ptr_t request =
        ucx().ucp_am_recv_data_nbx(peer->worker_.handle(), data, peer->data_.data(), bytes, &receive);
    if (request != nullptr && !UCS_PTR_IS_ERR(request)) ++peer->receiving_;
    return UCS_OK;
  }

  devrt::remote::Worker worker_;
  ucp_ep_h endpoint_ = nullptr;
  std::atomic<bool> ended_{false};
  std::uint64_t next_sequence_ = 1;
  std::uint32_t awaited_op_ = 0; // the last command's, whose reply decodes
  bool replied_ = false;
  int receiving_ = 0;
  wire::Reply last_;
  std::vector<unsigned char> data_;
};

// A server that answers each message from a client with what `answer` sends (on the UCX thread it
// runs, with the client's endpoint), then closes that connection when `close_after` is set.
class RawListener {
public:
  using Answer = std::function<void(devrt::remote::Worker&, ucp_ep_h)>;
  explicit RawListener(Answer answer, bool close_after) : answer_(std::move(answer)), close_after_(close_after) {
    REQUIRE(worker_.open().ok());
    handle_devrt_ids(
        worker_,
        [](void* arg, const void*, std::size_t, void*, std::size_t, const ucp_am_recv_param_t* param) {
          auto* self = static_cast<RawListener*>(arg);
          if ((param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) != 0) self->asked_.push_back(param->reply_ep);
          return UCS_OK;
        },
        this);
    const sockaddr_in address = loopback(0);
    ucp_listener_params_t params{};
    params.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
    params.sockaddr.addr = reinterpret_cast<const sockaddr*>(&address);
    params.sockaddr.addrlen = sizeof address;
    params.conn_handler.cb = [](ucp_conn_request_h request, void* arg) {
      auto* self = static_cast<RawListener*>(arg);
      ucp_ep_params_t ep{};
      ep.field_mask =
          UCP_EP_PARAM_FIELD_CONN_REQUEST | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
      ep.conn_request = request;
      ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
      ep.err_handler.cb = [](void*, ucp_ep_h, ucs_status_t) {};
      ucp_ep_h endpoint = nullptr;
      if (ucx().ucp_ep_create(self->worker_.handle(), &ep, &endpoint) == UCS_OK) self->endpoints_.push_back(endpoint);
    };
    params.conn_handler.arg = this;
    REQUIRE(ucx().ucp_listener_create(worker_.handle(), &params, &listener_) == UCS_OK);
    ucp_listener_attr_t attr{};
    attr.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
    REQUIRE(ucx().ucp_listener_query(listener_, &attr) == UCS_OK);
    port_ = ntohs(reinterpret_cast<const sockaddr_in*>(&attr.sockaddr)->sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  RawListener(const RawListener&) = delete;
  RawListener& operator=(const RawListener&) = delete;
  ~RawListener() {
    stop_ = true;
    thread_.join();
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

private:
  void serve() {
    while (!stop_) {
      if (!worker_.progress()) std::this_thread::sleep_for(std::chrono::microseconds(200));
      for (ucp_ep_h endpoint : std::exchange(asked_, {})) {
        answer_(worker_, endpoint);
        if (!close_after_) continue;
        force_close(worker_, endpoint);
        std::erase(endpoints_, endpoint);
      }
    }
    ucx().ucp_listener_destroy(listener_);
    for (ucp_ep_h endpoint : endpoints_) force_close(worker_, endpoint);
  }

  Answer answer_;
  bool close_after_;
  devrt::remote::Worker worker_;
  ucp_listener_h listener_ = nullptr;
  std::uint16_t port_ = 0;
  std::vector<ucp_ep_h> endpoints_;
  std::vector<ucp_ep_h> asked_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

} // namespace devrt::test

#endif // DEVRT_TEST_REMOTE_RAW_PEER_HPP
