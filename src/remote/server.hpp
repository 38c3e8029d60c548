// SPDX-License-Identifier: Apache-2.0
// devrt-server: serves this machine's devices to devrt's remote backend over UCX (docs/remote.md).
// One thread drives UCX (the listener, every client's endpoint, receiving and sending); each client
// gets a thread of its own that runs its commands in order against devrt's API, with objects of
// its own, all freed when it leaves or dies.
#ifndef DEVRT_SRC_REMOTE_SERVER_HPP
#define DEVRT_SRC_REMOTE_SERVER_HPP

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <devrt/devrt.hpp>

#include "remote/auth.hpp"
#include "remote/protocol.hpp"

namespace devrt::server {

// What one client may hold and send (docs/remote.md, "Limits"). Going past one is an error to that
// client (out_of_memory for memory, permission_denied for the others); a message larger than
// message_bytes breaks the protocol and ends its connection.
struct Limits {
  std::uint64_t clients = 64;                 // connected at once, past the handshake
  std::uint64_t memory_bytes = 0;             // allocated by one client on all devices; 0: no such limit
                                              // (each device's own memory still bounds it there)
  std::uint64_t modules = 256;                // loaded by one client
  std::uint64_t streams = 256;                // created by one client
  std::uint64_t events = 4096;                // created by one client
  std::uint64_t graphs = 256;                 // captured by one client
  std::uint64_t message_bytes = 256ull << 20; // one command's payload
};

// Connections whose handshake has not completed: a small budget of their own, apart from
// Limits::clients, so that peers that never prove anything cannot hold the slots of those that do.
// Such a connection may send its hello and authenticate and nothing else; it gets no thread, and
// nothing is queued, allocated or run for it.
struct Handshakes {
  std::uint64_t pending = 16;               // at once; a new connection beyond this ends the oldest pending one
  std::chrono::milliseconds deadline{5000}; // from connecting to the handshake's end
};

struct Options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;               // 0: any free port
  std::vector<std::string> devices;     // backend[:index] each; empty: every present device
  bool allow_host_code = false;         // shared_object and host_table modules (needs a key)
  std::string address_file;             // where to write host:port once listening
  std::optional<remote::auth::Key> key; // clients must prove it (--key-file)
  Limits limits;
  Handshakes handshakes;
};

// A device this server exports, in the hello's order.
struct Exported {
  Device device;
  remote::wire::DeviceDescription description;
  // Its kernels run as native code in this process (kernels_run_in_process): every module is host
  // code, loaded only with --allow-host-code.
  bool kernels_in_process = false;
  std::uint64_t memory_bytes = 0; // total_global_memory: one client's cap on it; 0 when unknown
};

// The devices `specs` name ("cpu", "opencl:0"), or every present device when empty; an error names
// a spec that matches nothing.
Result<std::vector<Exported>> export_devices(const std::vector<std::string>& specs, bool allow_host_code);

// Serves until `stop` becomes true. Prints "devrt-server: listening on host:port" when ready.
Status serve(const Options& options, const std::vector<Exported>& devices, const std::atomic<bool>& stop);

} // namespace devrt::server

#endif // DEVRT_SRC_REMOTE_SERVER_HPP
