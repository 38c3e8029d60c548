// SPDX-License-Identifier: Apache-2.0
// One client of devrt-server: the commands that arrived, in sequence order, and the thread that runs
// them against devrt's API with the client's own objects, freed when it leaves or dies. Internal
// to devrt-server (docs/remote.md).
#ifndef DEVRT_TOOLS_DEVRT_SERVER_SESSION_HPP
#define DEVRT_TOOLS_DEVRT_SERVER_SESSION_HPP

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "backends/remote/ucx_api.hpp"
#include "server.hpp"

namespace devrt::server {

namespace wire = remote::wire;
using wire::Op;

// The module formats that run host code in the server: refused without --allow-host-code.
inline constexpr std::uint32_t kHostCodeFormats =
    DEVRT_MODULE_FORMAT_BIT(DEVRT_MODULE_HOST_TABLE) | DEVRT_MODULE_FORMAT_BIT(DEVRT_MODULE_SHARED_OBJECT);

// A command as it arrived: its data may still be on its way (rendezvous) while `ready` is false.
struct Incoming {
  wire::Command command;
  std::vector<unsigned char> data;
  bool ready = false;
};

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

// What a client's thread needs of the server. Thread-safe.
class SessionHost {
public:
  virtual const std::vector<Exported>& devices() const = 0;
  virtual const Options& options() const = 0;
  virtual std::uint64_t clients() const = 0;
  // Queues a reply for the UCX thread to send.
  virtual void send(Outgoing out) = 0;

protected:
  ~SessionHost() = default;
};

// One client; its thread runs the commands. accept(), ready() and close() come from the UCX thread.
class Client {
public:
  Client(SessionHost& host, ucp_ep_h endpoint, std::uint64_t id) : host_(host), endpoint_(endpoint), id_(id) {}
  ~Client() {
    if (executor_.joinable()) executor_.join();
  }
  void start() {
    executor_ = std::thread([this] { run(); });
  }

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
  // One group of commands each (dispatch's cases): the command, its device, its payload, the reply.
  using Data = std::vector<unsigned char>;
  Status memory_command(const wire::Command& c, Device dev, const Data& data, Outgoing& out);
  Status stream_command(const wire::Command& c, Device dev, Outgoing& out);
  Status event_command(const wire::Command& c, Device dev, Outgoing& out);
  Status module_command(const wire::Command& c, Device dev, const Data& data, Outgoing& out);
  Status launch_command(const wire::Command& c, Device dev, const Data& data);
  Result<Device> device(std::uint32_t index) const;
  Result<StreamRef> stream(const wire::Command& c) const;
  Status take_deferred(std::uint32_t device);

  SessionHost& host_;
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
} // namespace devrt::server

#endif // DEVRT_TOOLS_DEVRT_SERVER_SESSION_HPP
