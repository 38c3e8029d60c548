// SPDX-License-Identifier: Apache-2.0
// A connection to devrt-server: hello, round trips, one-way commands, and losing the server.
#include "remote/connection.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

#include "support/environment.hpp"

namespace devrt::remote {

std::vector<std::string> configured_servers() {
  const char* list = detail::read_text_env("DEVRT_REMOTE");
  if (list == nullptr) return {};
  std::vector<std::string> out;
  for (std::string& entry : detail::split_list(list, ',')) {
    if (!entry.empty()) out.push_back(std::move(entry));
  }
  return out;
}

int reply_timeout_ms() noexcept {
  // Read once: a bad value is reported once, not at each call.
  static const int ms = static_cast<int>(detail::read_number_env("DEVRT_REMOTE_TIMEOUT_MS", 10000));
  return ms;
}

// The worker's callbacks, with access to the connection they were registered for.
struct ConnectionCallbacks {
  static void on_error(void* arg, ucp_ep_h, ucs_status_t status) noexcept {
    auto* c = static_cast<Connection*>(arg);
    const char* text = ucx_library().api.ucs_status_string(status);
    c->mark_lost(std::string("the connection failed: ") + text);
  }

  static void on_data(void* request, ucs_status_t status, std::size_t, void* user_data) noexcept {
    auto* c = static_cast<Connection*>(user_data);
    --c->data_pending_;
    if (status != UCS_OK)
      c->mark_lost(std::string("a reply's data was lost: ") + ucx_library().api.ucs_status_string(status));
    ucx_library().api.ucp_request_free(request);
  }

  // A message on an id devrt-server never sends: not a devrt server, or a hostile one.
  static ucs_status_t on_unexpected(void* arg, const void*, std::size_t, void*, std::size_t,
                                    const ucp_am_recv_param_t*) noexcept {
    static_cast<Connection*>(arg)->mark_lost("it sent a message on an id devrt-server never uses");
    return UCS_OK;
  }

  // A reply: for the round trip in flight, else the stream is broken.
  static ucs_status_t on_reply(void* arg, const void* header, std::size_t header_bytes, void* data, std::size_t bytes,
                               const ucp_am_recv_param_t* param) noexcept {
    auto* c = static_cast<Connection*>(arg);
    if (c->answer_ == nullptr) {
      c->mark_lost("a reply answered no command in flight");
      return UCS_OK;
    }
    std::optional<wire::Reply> decoded = wire::Reply::decode(header, header_bytes, c->awaited_op_);
    if (!decoded) {
      c->mark_lost("a reply had a malformed header");
      return UCS_OK;
    }
    const wire::Reply& reply = *decoded;
    if (reply.sequence != c->awaited_ || c->replied_ || reply.text_bytes > bytes) {
      c->mark_lost("a reply answered no command in flight");
      return UCS_OK;
    }
    c->replied_ = true;
    c->answer_->reply = reply;
    void* destination = nullptr;
    if (reply.code == 0 && reply.text_bytes == 0 && c->into_ != nullptr) {
      if (bytes != c->into_bytes_) {
        c->mark_lost("a read returned the wrong number of bytes");
        return UCS_OK;
      }
      destination = c->into_;
    } else {
      c->answer_->data.resize(bytes);
      destination = c->answer_->data.data();
    }
    if (bytes == 0) return UCS_OK;
    if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) == 0) {
      std::memcpy(destination, data, bytes);
      return UCS_OK;
    }
    // Rendezvous: UCX fetches the bytes straight into their destination.
    ucp_request_param_t receive{};
    receive.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    receive.cb.recv_am = &on_data;
    receive.user_data = c;
    ++c->data_pending_;
    ucs_status_ptr_t request =
        ucx_library().api.ucp_am_recv_data_nbx(c->worker_.handle(), data, destination, bytes, &receive);
    if (request == nullptr) {
      --c->data_pending_;
    } else if (UCS_PTR_IS_ERR(request)) {
      --c->data_pending_;
      c->mark_lost("receiving a reply's data failed");
    }
    return UCS_OK;
  }
};

Connection::~Connection() {
  if (endpoint_ != nullptr) {
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t request = ucx_library().api.ucp_ep_close_nbx(endpoint_, &param);
    if (request != nullptr && !UCS_PTR_IS_ERR(request)) {
      while (ucx_library().api.ucp_request_check_status(request) == UCS_INPROGRESS) worker_.progress();
      ucx_library().api.ucp_request_free(request);
    }
  }
}

void Connection::close(std::chrono::milliseconds wait) noexcept {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  while (!lock.owns_lock() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    static_cast<void>(lock.try_lock());
  }
  // A thread still in a call at exit keeps the endpoint; the server's keep-alive ends it then.
  if (!lock.owns_lock() || endpoint_ == nullptr || is_lost()) return;
  const UcxApi& ucx = ucx_library().api;
  ucp_request_param_t param{}; // no flags: UCP_EP_CLOSE_MODE_FLUSH, which tells the peer
  ucs_status_ptr_t request = ucx.ucp_ep_close_nbx(endpoint_, &param);
  endpoint_ = nullptr;
  mark_lost("this process closed the connection");
  if (request == nullptr || UCS_PTR_IS_ERR(request)) return;
  while (ucx.ucp_request_check_status(request) == UCS_INPROGRESS && std::chrono::steady_clock::now() < deadline) {
    worker_.progress();
  }
  if (ucx.ucp_request_check_status(request) != UCS_INPROGRESS) ucx.ucp_request_free(request);
}

void Connection::mark_lost(std::string reason) noexcept {
  if (lost_flag_.load(std::memory_order_relaxed)) return;
  lost_reason_ = std::move(reason);
  lost_flag_.store(true, std::memory_order_release);
}

std::string Connection::lost_reason() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lost_reason_;
}

Status Connection::lost() const noexcept {
  if (!is_lost()) return Status();
  return make_error(ErrorCode::unavailable, "the server at ", address_, " is lost (", lost_reason(),
                    "): its devices stay unavailable; connect again for new ones");
}

Result<std::unique_ptr<Connection>> Connection::open(std::string_view address_text,
                                                     std::string_view key_file) noexcept {
  Result<SocketAddress> address = parse_address(address_text);
  if (!address.ok()) return std::move(address).status();
  auto c = std::make_unique<Connection>();
  c->address_ = std::string(address_text);
  c->timeout_ms_ = reply_timeout_ms();
  if (Status s = c->worker_.open(); !s.ok()) return s;
  const UcxApi& ucx = ucx_library().api;
  if (Status s = set_message_handlers(c->worker_.handle(), wire::kReplyMessage, &ConnectionCallbacks::on_reply,
                                      &ConnectionCallbacks::on_unexpected, wire::kHighestMessage, c.get());
      !s.ok()) {
    return s;
  }

  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(address->port);
  if (int e = ::getaddrinfo(address->host.c_str(), port.c_str(), &hints, &found); e != 0) {
    return make_error(ErrorCode::unavailable, "remote server ", address_text, ": cannot resolve '", address->host,
                      "': ", ::gai_strerror(e));
  }
  sockaddr_in peer{};
  std::memcpy(&peer, found->ai_addr, sizeof peer);
  ::freeaddrinfo(found);

  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR | UCP_EP_PARAM_FIELD_ERR_HANDLER |
                      UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  params.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
  params.sockaddr.addr = reinterpret_cast<const sockaddr*>(&peer);
  params.sockaddr.addrlen = sizeof peer;
  params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  params.err_handler.cb = &ConnectionCallbacks::on_error;
  params.err_handler.arg = c.get();
  ucs_status_t s = ucx.ucp_ep_create(c->worker_.handle(), &params, &c->endpoint_);
  if (s != UCS_OK) {
    c->endpoint_ = nullptr;
    return ucx_error(ErrorCode::unavailable, "ucp_ep_create", s);
  }
  if (Status st = c->handshake(key_file); !st.ok()) {
    if (c->is_lost()) {
      return make_error(ErrorCode::unavailable, "cannot connect to devrt-server at ", address_text, ": ",
                        c->lost_reason());
    }
    return make_error(st.code(), "cannot connect to devrt-server at ", address_text, ": ", st.message());
  }
  return c;
}

Status Connection::handshake(std::string_view key_file) noexcept {
  std::string key_path(key_file);
  if (key_path.empty()) {
    const char* configured = detail::read_path_env("DEVRT_REMOTE_KEY_FILE");
    if (configured != nullptr) key_path = configured;
  }
  std::optional<auth::Key> key;
  auth::Nonce nonce{};
  if (!key_path.empty()) {
    Result<auth::Key> read = auth::read_key_file(key_path);
    if (!read.ok()) return std::move(read).status();
    key = *read;
    Result<auth::Nonce> fresh = auth::random_nonce();
    if (!fresh.ok()) return std::move(fresh).status();
    nonce = *fresh;
  }
  Answer answer;
  DEVRT_RETURN_IF_ERROR(call(wire::make_command(wire::Hello{}), {nonce.data(), nonce.size()}, answer));
  const auto hello = answer.reply.get<wire::HelloReply>();
  max_message_ = hello.max_message;
  if (max_message_ == 0) return make_error(ErrorCode::internal, "the server accepts no message");
  const bool keyed = (hello.flags & wire::kHelloKeyed) != 0;
  if (keyed && !key) {
    return make_error(
        ErrorCode::permission_denied,
        "the server requires a key: name its key file in DEVRT_REMOTE_KEY_FILE (docs/remote.md, \"Keys\")");
  }
  if (!keyed && key) {
    return make_error(ErrorCode::permission_denied, "this client has a key (", key_path,
                      "), and the server does not ask for one: it may not be the server you meant");
  }
  if (keyed) DEVRT_RETURN_IF_ERROR(authenticate(*key, nonce, answer));
  if (!wire::decode_devices(answer.data.data(), answer.data.size(), devices_)) {
    return make_error(ErrorCode::internal, "the server sent a malformed device list");
  }
  return Status();
}

// The server proved the key in its hello reply (its nonce, then its proof); the client proves it
// in turn, and the answer (the device list) replaces the hello's.
Status Connection::authenticate(const auth::Key& key, const auth::Nonce& client_nonce, Answer& hello) noexcept {
  auth::Nonce server_nonce{};
  if (hello.data.size() != server_nonce.size() + auth::kProofBytes) {
    return make_error(ErrorCode::internal, "the server's hello carries no key proof");
  }
  std::memcpy(server_nonce.data(), hello.data.data(), server_nonce.size());
  if (!auth::verify(key, auth::Role::server, client_nonce, server_nonce, hello.data.data() + server_nonce.size(),
                    auth::kProofBytes)) {
    return make_error(ErrorCode::permission_denied,
                      "the server did not prove the client's key: another server, or another key");
  }
  Result<auth::Proof> proof = auth::prove(key, auth::Role::client, client_nonce, server_nonce);
  if (!proof.ok()) return std::move(proof).status();
  Answer answer;
  DEVRT_RETURN_IF_ERROR(call(wire::make_command(wire::Authenticate{}), {proof->data(), proof->size()}, answer));
  hello.data = std::move(answer.data);
  return Status();
}

Status Connection::send(const wire::Command& command, std::span<const unsigned char> payload, bool borrowed) noexcept {
  auto* message = new OutgoingMessage();
  command.encode(message->header);
  if (borrowed) {
    message->data = payload.data();
  } else {
    message->payload.assign(payload.begin(), payload.end());
    message->data = message->payload.data();
  }
  message->bytes = payload.size();
  message->in_flight = &sends_in_flight_;
  Status s = send_message(endpoint_, wire::kCommandMessage, message, UCP_AM_SEND_FLAG_REPLY);
  if (!s.ok()) mark_lost(std::string(s.message()));
  return s;
}

Status Connection::wait_reply(wire::Op op) noexcept {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms_);
  // The reply, its data, and every send before it (their payloads may be the caller's).
  while (!replied_ || data_pending_ > 0 || sends_in_flight_ > 0) {
    if (is_lost()) return Status(); // the caller reports lost()
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      mark_lost("no answer to command " + std::to_string(static_cast<unsigned>(op)) + " within " +
                std::to_string(timeout_ms_) + " ms (DEVRT_REMOTE_TIMEOUT_MS)");
      return Status();
    }
    // A rendezvous's fragments need progress that no descriptor announces: no sleeping while
    // data moves. Otherwise poll for spin_ (a reply that comes back within a round trip is taken
    // without the sleep and the wake-up) before sleeping.
    if (data_pending_ > 0 || sends_in_flight_ > 0) {
      worker_.progress();
    } else {
      worker_.wait(static_cast<int>(left < 100 ? left : 100), spin_);
    }
  }
  return Status();
}

Status Connection::call(wire::Command command, std::span<const unsigned char> payload, Answer& answer, void* into,
                        std::size_t into_bytes) noexcept {
  std::unique_lock<std::mutex> lock(mutex_);
  if (is_lost()) {
    lock.unlock();
    return lost();
  }
  round_trip(command, payload, answer, into, into_bytes);
  const bool failed = is_lost();
  lock.unlock();
  if (failed) return lost();
  if (answer.reply.text_bytes > 0) {
    answer.text.assign(reinterpret_cast<const char*>(answer.data.data()), answer.reply.text_bytes);
    answer.data.erase(answer.data.begin(), answer.data.begin() + answer.reply.text_bytes);
  }
  if (answer.reply.code == 0) return Status();
  auto code = static_cast<ErrorCode>(answer.reply.code);
  if (answer.reply.code < 0 || answer.reply.code > DEVRT_STATUS_LAST) code = ErrorCode::internal;
  return make_error(code, "on devrt-server ", address_, ": ", answer.text);
}

void Connection::round_trip(wire::Command command, std::span<const unsigned char> payload, Answer& answer, void* into,
                            std::size_t into_bytes) noexcept {
  command.sequence = next_sequence_++;
  awaited_ = command.sequence;
  awaited_op_ = command.op;
  replied_ = false;
  answer_ = &answer;
  into_ = into;
  into_bytes_ = into_bytes;
  if (send(command, payload, true).ok()) static_cast<void>(wait_reply(static_cast<wire::Op>(command.op)));
  answer_ = nullptr;
  into_ = nullptr;
  posted_bytes_ = 0;
}

Status Connection::post(wire::Command command, std::span<const unsigned char> payload, bool borrowed) noexcept {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!is_lost()) {
    command.sequence = next_sequence_++;
    static_cast<void>(send(command, payload, borrowed));
    // Sends complete in progress calls; run some now so a long queue of one-way commands does not
    // wait for the next round trip to be sent.
    worker_.progress();
    posted_bytes_ += payload.size();
    if (max_message_ != 0 && posted_bytes_ > 2 * max_message_) { // let the server's queue drain
      Answer answer;
      round_trip(wire::make_command(wire::Ping{}), {}, answer, nullptr, 0);
    }
  }
  const bool failed = is_lost();
  lock.unlock();
  return failed ? lost() : Status();
}

} // namespace devrt::remote
