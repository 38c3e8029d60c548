// SPDX-License-Identifier: Apache-2.0
// One client of devrt-server: the commands that arrived, in sequence order, the thread that runs
// them, and the runner that checks and executes each against devrt's API with the client's own
// objects, freed when it leaves, dies or breaks the protocol. Internal to devrt-server
// (docs/remote.md).
#ifndef DEVRT_SRC_REMOTE_SESSION_HPP
#define DEVRT_SRC_REMOTE_SESSION_HPP

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <devrt/graph.hpp>

#include "remote/auth.hpp"
#include "remote/host_code.hpp"
#include "remote/server.hpp"
#include "remote/ucx_api.hpp"

namespace devrt::server {

namespace wire = remote::wire;
using wire::Op;

// Large payload buffers kept for reuse: a fresh 64 MiB vector costs page faults and zeroing (40 ms
// here) where the transfer itself takes 22. Keeps two buffers of 1 to 128 MiB at most.
// Thread-safe: the UCX thread takes buffers for commands' data and gives back those of sent
// replies; clients' threads give back those of commands run and take them for replies.
std::vector<unsigned char> take_staging(std::size_t bytes);
void give_staging(std::vector<unsigned char>&& buffer);

// A command as it arrived: its data may still be on its way (rendezvous) while `ready` is false.
struct Incoming {
  wire::Command command;
  std::size_t bytes = 0; // its payload's size, as accepted
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
  bool used = false; // given work since its last synchronize
};
struct EventEntry {
  std::uint32_t device = 0;
  Event event;
};
struct ModuleEntry {
  std::uint32_t device = 0;
  Module module;
};
struct GraphEntry {
  std::uint32_t device = 0;
  Graph graph;
};
struct FunctionEntry {
  std::uint32_t device = 0;
  std::uint64_t module = 0;
  Function function;
  std::string name;
};

class Client;

// A reply, or the end of a connection, on its way to the UCX thread.
struct Outgoing {
  ucp_ep_h endpoint = nullptr;
  bool has_reply = true;
  wire::Reply reply;
  std::vector<unsigned char> data;
  // A read's bytes sent from the client's own host memory instead of `data`: `lender` runs nothing
  // more until Client::in_place_done() says they have gone.
  const void* lent = nullptr;
  std::size_t lent_bytes = 0;
  Client* lender = nullptr;
  std::string disconnect; // not empty: end the connection (once the reply is sent), saying why
};

// What a client's thread needs of the server. Thread-safe.
class SessionHost {
public:
  virtual const std::vector<Exported>& devices() const = 0;
  virtual const Options& options() const = 0;
  virtual std::uint64_t clients() const = 0;
  // Counts one more client past its handshake, when the server serves fewer than Limits::clients;
  // false when it is full. Called by the thread that runs the handshake (the UCX thread).
  virtual bool admit() = 0;
  // Queues a reply or disconnection for the UCX thread.
  virtual void send(Outgoing out) = 0;

protected:
  ~SessionHost() = default;
};

// One client's commands, run one at a time in sequence order against devrt's API with the
// client's own objects: the handshake (hello, and authenticate when the server has a key), then
// the rest. Not thread-safe: the client's thread drives it (or the decoder's fuzzer).
class CommandRunner {
public:
  CommandRunner(SessionHost& host, ucp_ep_h endpoint) : host_(host), endpoint_(endpoint) {}
  CommandRunner(const CommandRunner&) = delete;
  CommandRunner& operator=(const CommandRunner&) = delete;
  ~CommandRunner() { release_all(); }

  // Runs `c` with its payload; its reply, when it has one, goes to the host. A command that breaks
  // the protocol (remote/protocol.hpp) sends the host a disconnection instead and returns
  // false: the client gets nothing more run.
  bool run(const wire::Command& c, const std::vector<unsigned char>& data);
  // True once the handshake has completed (and the host admitted the client).
  bool handshaken() const { return stage_ == Stage::ready; }
  // Whether `c` returns at once: a ping, a synchronize of streams given no work since their last
  // one (every command that names a stream counts as work on it), or a launch on a GPU API's
  // device (asynchronous; a driver blocks only when its queue is full). The UCX thread runs those
  // itself when the client's thread is idle.
  bool runs_on_arrival(const wire::Command& c) const;
  // Where a write's data can land directly (its destination in host memory, on a stream with no
  // work since its last synchronize, the range checked), or nullptr: then run() stages it.
  void* write_in_place(const wire::Command& c, std::size_t bytes) const;
  // Where a read's reply can be sent from directly (the same conditions), or nullptr.
  const void* read_in_place(const wire::Command& c) const;
  // After a launch that did not return at once: false keeps this client's launches on its thread.
  void run_launches_on_arrival(bool yes) { launches_on_arrival_ = yes; }
  // Frees everything the client held, in dependency order; the devices stay open for others.
  void release_all();

private:
  using Data = std::vector<unsigned char>;
  enum class Stage { hello, authenticate, ready };
  Status dispatch(const wire::Command& c, const Data& data, Outgoing& out);
  Status handshake(const wire::Command& c, const Data& data, Outgoing& out);
  // The handshake's end: the device list when the host admits the client, else a refusal.
  Status admit(Outgoing& out);
  // One group of commands each (dispatch's cases): the command, its device, its payload, the reply.
  Status memory_command(const wire::Command& c, Device dev, const Data& data, Outgoing& out);
  Status stream_command(const wire::Command& c, Device dev, Outgoing& out);
  Status event_command(const wire::Command& c, Device dev, Outgoing& out);
  Status module_command(const wire::Command& c, Device dev, const Data& data, Outgoing& out);
  Status launch_command(const wire::Command& c, Device dev, const Data& data);
  Status graph_command(const wire::Command& c, Device dev, const Data& data, Outgoing& out);
  // Issues a graph_create payload's nodes on `stream` (being captured).
  Status issue_nodes(const wire::Command& c, Device dev, const Data& data, StreamRef stream);
  // Launches the client's function `function` on device `device` with `count` LaunchArgs at `args`.
  Status launch(std::uint32_t device, Device dev, std::uint64_t function, const std::uint32_t grid[3],
                const std::uint32_t block[3], std::uint64_t shared_bytes, const unsigned char* args,
                std::uint64_t count, StreamRef stream);
  // The host address of [offset, + bytes) of the client's `allocation` when in host memory, on
  // `c`'s stream idle, with no failure waiting to be reported; else nullptr.
  unsigned char* in_place(const wire::Command& c, std::uint64_t allocation, std::uint64_t offset,
                          std::size_t bytes) const;
  // Whether the stream `c` names has had no work since its last synchronize.
  bool stream_idle(const wire::Command& c) const;
  // The stream `c` names (0: its device's default), marked as given work.
  Result<StreamRef> stream(const wire::Command& c);
  // After a synchronize: the streams it waited for have no work left.
  void synchronized(const wire::Command& c);
  Status take_deferred(std::uint32_t device);
  // out_of_memory when `bytes` more on `device` would take the client past --max-client-memory or
  // past the device's own memory.
  Status check_memory(std::uint32_t device, std::uint64_t bytes) const;
  // The client's object `handle` on `device` in `map`; a violation when it is none.
  template <class Map>
  Result<typename Map::mapped_type*> find(Map& map, std::uint64_t handle, std::uint32_t device, const char* what);
  // Records that the client broke the protocol (`why`), and returns an error saying so.
  Status violation(std::string why);
  std::vector<unsigned char> device_list() const;

  SessionHost& host_;
  ucp_ep_h endpoint_;
  Stage stage_ = Stage::hello;
  std::string violation_;
  remote::auth::Nonce client_nonce_{};
  remote::auth::Nonce server_nonce_{};

  std::uint64_t next_handle_ = 1;
  std::uint64_t allocated_bytes_ = 0;                             // on all devices
  std::unordered_map<std::uint32_t, std::uint64_t> allocated_on_; // per exported device
  std::unordered_map<std::uint64_t, Allocation> buffers_;
  std::unordered_map<std::uint64_t, StreamEntry> streams_;
  std::unordered_map<std::uint64_t, EventEntry> events_;
  std::unordered_map<std::uint64_t, ModuleEntry> modules_;
  std::unordered_map<std::uint64_t, FunctionEntry> functions_;
  std::unordered_map<std::uint64_t, GraphEntry> graphs_;
  std::map<std::uint32_t, Status> deferred_; // the first failure of a one-way command, per device
  bool launches_on_arrival_ = true;
  std::set<std::uint32_t> default_streams_used_; // devices whose default stream has work since its last synchronize
};

// One client: the commands that arrived, and the thread that runs them in order. Until its
// handshake completes a client has no thread: the UCX thread runs its hello and authenticate, and
// accepts nothing else. accept(), ready() and close() come from the UCX thread.
class Client {
public:
  Client(SessionHost& host, ucp_ep_h endpoint, std::uint64_t id)
      : runner_(host, endpoint), host_(host), endpoint_(endpoint), id_(id),
        connected_at_(std::chrono::steady_clock::now()) {
    message_limit_ = host.options().limits.message_bytes;
  }
  ~Client() {
    if (executor_.joinable()) executor_.join();
  }

  // UCX thread: a command arrived with `bytes` of payload (which may still be on its way: `ready`
  // false). nullptr, with `why`, when the message breaks the protocol: its sequence number is out
  // of order, its payload is not one its command takes or too large, the commands queued are too
  // large, or, before the handshake has completed, it is anything but the next step of the
  // handshake.
  Incoming* accept(const wire::Command& command, std::size_t bytes, std::string& why);
  // UCX thread: `incoming`'s data is complete. A step of the handshake runs here, and so does a
  // command that returns at once, next in line with the client's thread idle
  // (CommandRunner::runs_on_arrival). The client's thread starts when the handshake completes.
  void ready(Incoming* incoming);
  // UCX thread: where `incoming`'s data (a write's, arriving by rendezvous) can land directly
  // (CommandRunner::write_in_place) when it is next in line and the client's thread idle; the
  // client then runs nothing more until in_place_done(). nullptr: stage it.
  void* receive_in_place(Incoming* incoming);
  // UCX thread: a transfer in place has ended: the data receive_in_place() placed has landed, or a
  // reply's lent bytes (Outgoing::lent) have gone; or it failed, and the connection with it (the
  // client is being dropped). The client runs its next command.
  void in_place_done();
  // UCX thread: the client left or died; its thread frees everything and ends.
  void close() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closing_ = true;
    }
    wake_.notify_one();
    // A client whose handshake never completed has no thread and holds nothing.
    if (!executor_.joinable()) finished_.store(true, std::memory_order_release);
  }
  bool finished() const { return finished_.load(std::memory_order_acquire); }
  ucp_ep_h endpoint() const { return endpoint_; }
  std::uint64_t id() const { return id_; }
  // UCX thread: whether the handshake has completed (the host admitted the client), and when the
  // connection came.
  bool admitted() const { return executor_.joinable(); }
  std::chrono::steady_clock::time_point connected_at() const { return connected_at_; }

  // UCX thread only: replies being sent, and why to end the connection once they are.
  std::size_t sends_in_flight = 0;
  std::string disconnect_when_sent;
  std::chrono::steady_clock::time_point disconnect_after;
  bool endpoint_closed = false;

private:
  void run();
  // Runs a step of the handshake on the UCX thread; starts the client's thread after the last.
  void handshake_step(Incoming* incoming);
  // The next command in sequence, taken from the queue to run (mutex_ held); marks it running.
  std::unique_ptr<Incoming> take_next();
  // After a command ran on either thread: its buffer back to the pool, the client free to run the
  // next (or no more, after a violation).
  void finish(Incoming& done, bool goes_on);

  CommandRunner runner_;
  SessionHost& host_;
  ucp_ep_h endpoint_;
  std::uint64_t id_;
  std::chrono::steady_clock::time_point connected_at_;
  std::uint64_t message_limit_ = 0;
  std::thread executor_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::uint64_t, std::unique_ptr<Incoming>> queue_;
  std::uint64_t next_sequence_ = 1;
  std::uint64_t queued_bytes_ = 0;
  bool closing_ = false;
  bool running_ = false;               // a command runs, on the client's thread or the UCX thread
  bool serving_ = true;                // false after a violation
  std::unique_ptr<Incoming> in_place_; // the write or read moving the client's memory directly
  std::atomic<bool> finished_{false};
};
} // namespace devrt::server

#endif // DEVRT_SRC_REMOTE_SESSION_HPP
