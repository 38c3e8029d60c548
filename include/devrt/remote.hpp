// SPDX-License-Identifier: Apache-2.0
// Devices on other processes and machines, served by devrt-server over UCX (docs/remote.md).
//
// A remote device is a device of kind `remote`: devrt::Device{DeviceKind::remote, n}, numbered in
// the order the servers were connected (DEVRT_REMOTE=host:port[,host:port...] at discovery, then
// connect()). It carries the server, the device's own kind and index there, its name,
// attributes and target; modules load in the formats its backend on the server loads. Its memory
// is the server's: copies move it, and DLPack export of it is refused.
#ifndef DEVRT_REMOTE_HPP
#define DEVRT_REMOTE_HPP

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <devrt/device.hpp>
#include <devrt/status.hpp>

namespace devrt::remote {

// How to connect: the key to prove, when the server has one (docs/remote.md, "Keys").
struct ConnectOptions {
  // A file of 64 hexadecimal digits readable by its owner only (devrt-server --generate-key
  // writes one). Empty: DEVRT_REMOTE_KEY_FILE, else no key.
  std::string key_file;
};

// Connects to the devrt-server at "host:port" and adds its devices, which then appear in
// devrt::devices(). Returns them. unavailable naming the address when the server cannot be reached
// within the timeout (DEVRT_REMOTE_TIMEOUT_MS, default 10000), or when UCX is not installed;
// permission_denied when the server requires a key and this client has none or another, or when
// this client has a key and the server does not prove it; unsupported when devrt was built
// without the remote backend. Connecting to one address twice gives a second set of devices.
// Thread-safe.
Result<std::vector<Device>> connect(std::string_view address, const ConnectOptions& options) noexcept;
// connect(address, {}): the key, if any, from DEVRT_REMOTE_KEY_FILE. Thread-safe.
Result<std::vector<Device>> connect(std::string_view address) noexcept;

// What a remote device is on its server.
struct DeviceInfo {
  std::string server;     // "host:port"
  DeviceKind kind{};      // its kind on the server
  std::int32_t index = 0; // its index there
  std::string name;
  bool lost = false; // the server is gone: every call on the device fails
  std::string lost_reason;
};
// invalid_argument for a device that is not a remote device. Thread-safe.
Result<DeviceInfo> describe(Device device) noexcept;

// The server's own figures for a remote device, over all of its clients: devrt-server frees what
// a client held when it disconnects or dies. Thread-safe.
struct ServerStats {
  std::uint64_t clients = 0;         // connected now, this one included
  std::uint64_t allocated_bytes = 0; // on the device, held by all clients
  std::uint64_t allocations = 0;
};
Result<ServerStats> server_stats(Device device) noexcept;

} // namespace devrt::remote

#endif // DEVRT_REMOTE_HPP
