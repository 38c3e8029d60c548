// SPDX-License-Identifier: Apache-2.0
// The client side of a devrt-server connection: one UCX worker and endpoint per server, the
// hello's device list, round trips and one-way commands. Internal to the remote backend.
#ifndef DEVRT_SRC_REMOTE_CONNECTION_HPP
#define DEVRT_SRC_REMOTE_CONNECTION_HPP

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <devrt/status.hpp>

#include "remote/auth.hpp"
#include "remote/protocol.hpp"
#include "remote/ucx_api.hpp"

namespace devrt::remote {

// What a round trip brought back: the reply, its text (the error message, or a build log) and its
// data (after a failure: what the command had to add, such as a build log).
struct Answer {
  wire::Reply reply;
  std::string text;
  std::vector<unsigned char> data; // unless the call named a destination
};

// One connected server. Every call is serialised by the connection's mutex (the worker is
// single-threaded); thread-safe.
class Connection {
public:
  // Connects, says hello and, when the server has a key, proves `key_file`'s key and checks that
  // the server proves it too (remote/auth.hpp); the server's devices are in devices() after it.
  // An empty key_file: DEVRT_REMOTE_KEY_FILE, else no key. permission_denied when the server
  // requires a key and the client has none or another, or when the client has one and the
  // server does not prove it.
  static Result<std::unique_ptr<Connection>> open(std::string_view address, std::string_view key_file) noexcept;
  Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  const std::string& address() const noexcept { return address_; }
  // The largest payload the server accepts in one command (its --max-message).
  std::uint64_t max_message() const noexcept { return max_message_; }
  const std::vector<wire::DeviceDescription>& devices() const noexcept { return devices_; }

  // Sends `command` with `payload` and waits for its reply. A reply carrying data lands in
  // `into` (exactly into_bytes of it) when given, else in answer.data. A failed command's code and
  // message come back as the Status, prefixed with the server's address.
  Status call(wire::Command command, std::span<const unsigned char> payload, Answer& answer, void* into = nullptr,
              std::size_t into_bytes = 0) noexcept;
  // Sends a one-way command. The payload is copied unless `borrowed`: then the caller keeps it
  // unchanged until the next round trip on this connection has returned.
  Status post(wire::Command command, std::span<const unsigned char> payload, bool borrowed = false) noexcept;

  // Closes the endpoint the way a peer sees at once (UCX's flush close: the server's side ends
  // with "connection reset", not a keep-alive timeout), waiting at most `wait` for it; later
  // calls find the server lost ("this process closed the connection"). For the process's exit;
  // thread-safe.
  void close(std::chrono::milliseconds wait) noexcept;

  // unavailable naming the server and why, once it is lost (it never comes back); else ok.
  Status lost() const noexcept;
  bool is_lost() const noexcept { return lost_flag_.load(std::memory_order_acquire); }
  std::string lost_reason() const;

private:
  friend struct ConnectionCallbacks;
  Status send(const wire::Command& command, std::span<const unsigned char> payload, bool borrowed) noexcept;
  Status wait_reply(wire::Op op) noexcept;
  Status handshake(std::string_view key_file) noexcept;
  Status authenticate(const auth::Key& key, const auth::Nonce& client_nonce, Answer& hello) noexcept;
  // Sends `command` and waits for its reply (or the loss of the server); the caller holds mutex_.
  void round_trip(wire::Command command, std::span<const unsigned char> payload, Answer& answer, void* into,
                  std::size_t into_bytes) noexcept;
  void mark_lost(std::string reason) noexcept;

  std::string address_;
  std::vector<wire::DeviceDescription> devices_;
  Worker worker_;
  ucp_ep_h endpoint_ = nullptr;
  mutable std::mutex mutex_;
  std::atomic<bool> lost_flag_{false};
  std::string lost_reason_; // under mutex_
  std::uint64_t next_sequence_ = 1;
  std::uint64_t max_message_ = 0;
  // Payload bytes posted since the last round trip: past a few of the largest messages, post()
  // waits for the server to run them (a ping), so that its queue stays bounded.
  std::uint64_t posted_bytes_ = 0;
  int timeout_ms_ = 10000;
  std::chrono::microseconds spin_{200}; // how long a round trip polls before it sleeps
  // The round trip in flight (under mutex_).
  std::uint64_t awaited_ = 0;
  std::uint32_t awaited_op_ = 0;
  bool replied_ = false;
  int data_pending_ = 0;
  Answer* answer_ = nullptr;
  void* into_ = nullptr;
  std::size_t into_bytes_ = 0;
  std::size_t sends_in_flight_ = 0;
};

// The address of each server in DEVRT_REMOTE (comma-separated host:port).
std::vector<std::string> configured_servers();
// DEVRT_REMOTE_TIMEOUT_MS, or 10000: how long a call waits for the server before giving it up.
int reply_timeout_ms() noexcept;

} // namespace devrt::remote

#endif // DEVRT_SRC_REMOTE_CONNECTION_HPP
