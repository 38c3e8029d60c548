// SPDX-License-Identifier: Apache-2.0
// devrt-server [--listen HOST] [--port N] [--devices LIST] [--key-file PATH] [--allow-host-code]
//              [--address-file PATH] [--max-* N ...] | --generate-key PATH
#include <sys/stat.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "remote/server.hpp"
#include "remote/ucx_api.hpp"
#include "support/environment.hpp"

namespace {

std::atomic<bool> stop_requested{false};

void request_stop(int) { stop_requested.store(true); }

constexpr const char* kUsage =
    "usage: devrt-server [options]\n"
    "Serves this machine's devices to devrt's remote backend over UCX (docs/remote.md).\n"
    "  --listen HOST[:PORT]    IPv4 address to listen on (default 127.0.0.1; any other needs --key-file)\n"
    "  --port N                port (default 0: any free one; the address is printed)\n"
    "  --devices LIST          what to export: backend[:index],... (default: every present device)\n"
    "  --key-file PATH         clients must prove this key (mode 0600; clients: DEVRT_REMOTE_KEY_FILE)\n"
    "  --allow-host-code       accept host code: shared_object and host_table modules, and any module\n"
    "                          on a device whose kernels run in this process (needs --key-file, since\n"
    "                          every local user reaches loopback)\n"
    "  --address-file PATH     write host:port there once listening\n"
    "  --max-clients N         clients connected at once (default 64)\n"
    "  --max-client-memory N   bytes one client may allocate (default: no limit but the devices')\n"
    "  --max-client-modules N  modules one client may load (default 256)\n"
    "  --max-client-streams N  streams one client may create (default 256)\n"
    "  --max-client-events N   events one client may create (default 4096)\n"
    "  --max-client-graphs N   graphs one client may capture (default 256)\n"
    "  --max-message N         bytes of one command's payload (default 268435456); a larger one ends\n"
    "                          the client's connection (devrt's clients split their copies to fit)\n"
    "  --max-pending N         connections waiting to complete their handshake (default 16; one more\n"
    "                          ends the oldest of them); they do not count in --max-clients\n"
    "  --handshake-timeout MS  what a connection has to complete its handshake in (default 5000)\n"
    "  --generate-key PATH     write a new random key to PATH (mode 0600; missing folders are made,\n"
    "                          0700) and exit\n"
    "Threat model (docs/remote.md): without a key, any local user is a client; with one, whoever\n"
    "proves it. Before the handshake a connection can send its hello and nothing else. Memory a\n"
    "client is handed is cleared first. Devices whose kernels run as native code in this process\n"
    "(cpu; OpenCL, Vulkan or WebGPU implemented on the CPU: PoCL, lavapipe, llvmpipe) load modules\n"
    "only with --allow-host-code. On a GPU every client's kernels share one device context: a\n"
    "client that may load modules is trusted with every client's device memory there.\n";

int usage_error(const char* what) {
  std::fprintf(stderr, "devrt-server: %s\n%s", what, kUsage);
  return 2;
}

// Creates the folders above `path` that do not exist yet, readable by this user alone (0700), as
// a key's folder should be: --generate-key ~/.config/devrt/server.key works on a new account.
void make_parent_folders(const std::string& path) {
  for (std::size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
    const std::string folder = path.substr(0, slash);
    if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) return; // write_key_file then says why
  }
}

bool is_loopback(const std::string& host) { return host.rfind("127.", 0) == 0; }

// The value of a --max-* option: a count or byte size from 1 up.
bool parse_limit(const char* text, std::uint64_t& out) { return devrt::detail::parse_unsigned(text, out) && out > 0; }

// The options `limits` takes, or nullptr for another argument.
std::uint64_t* limit_option(const std::string& arg, devrt::server::Limits& limits) {
  if (arg == "--max-clients") return &limits.clients;
  if (arg == "--max-client-memory") return &limits.memory_bytes;
  if (arg == "--max-client-modules") return &limits.modules;
  if (arg == "--max-client-streams") return &limits.streams;
  if (arg == "--max-client-events") return &limits.events;
  if (arg == "--max-client-graphs") return &limits.graphs;
  if (arg == "--max-message") return &limits.message_bytes;
  return nullptr;
}

// The options `handshakes` takes, or nullptr for another argument.
std::uint64_t* handshake_option(const std::string& arg, devrt::server::Handshakes& handshakes,
                                std::uint64_t& deadline_ms) {
  if (arg == "--max-pending") return &handshakes.pending;
  if (arg == "--handshake-timeout") return &deadline_ms;
  return nullptr;
}

// What the options allow together, or an error: keys guard everything beyond a loopback server
// that runs no client's code.
int check_safety(const devrt::server::Options& options) {
  if (!options.key && !is_loopback(options.host)) {
    std::fprintf(stderr,
                 "devrt-server: --listen %s needs --key-file: a server beyond loopback (127.x.x.x) serves only "
                 "clients that prove a key (docs/remote.md, \"Keys\")\n",
                 options.host.c_str());
    return 2;
  }
  if (!options.key && options.allow_host_code) {
    std::fprintf(stderr, "devrt-server: --allow-host-code needs --key-file: host code runs in this process, and every "
                         "local user can reach loopback (docs/remote.md, \"Keys\")\n");
    return 2;
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  devrt::server::Options options;
  std::uint64_t deadline_ms = static_cast<std::uint64_t>(options.handshakes.deadline.count());
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (std::uint64_t* limit = limit_option(arg, options.limits); limit != nullptr && has_value) {
      if (!parse_limit(argv[++i], *limit)) return usage_error((arg + ": a number from 1 up").c_str());
    } else if (std::uint64_t* value = handshake_option(arg, options.handshakes, deadline_ms);
               value != nullptr && has_value) {
      if (!parse_limit(argv[++i], *value) || *value > 3'600'000) {
        return usage_error((arg + ": a number from 1 to 3600000").c_str());
      }
    } else if (arg == "--key-file" && has_value) {
      devrt::Result<devrt::remote::auth::Key> key = devrt::remote::auth::read_key_file(argv[++i]);
      if (!key.ok()) return usage_error(std::string(key.status().message()).c_str());
      if (devrt::Status s = devrt::remote::auth::available(); !s.ok()) {
        std::fprintf(stderr, "devrt-server: %s\n", std::string(s.message()).c_str());
        return 1;
      }
      options.key = *key;
    } else if (arg == "--generate-key" && has_value) {
      make_parent_folders(argv[++i]);
      devrt::Status s = devrt::remote::auth::write_key_file(argv[i]);
      if (!s.ok()) std::fprintf(stderr, "devrt-server: %s\n", std::string(s.message()).c_str());
      return s.ok() ? 0 : 1;
    } else if (arg == "--allow-host-code") {
      options.allow_host_code = true;
    } else if (arg == "--listen" && has_value) {
      // HOST, or HOST:PORT as DEVRT_REMOTE names a server.
      const std::string value = argv[++i];
      if (value.find(':') == std::string::npos) {
        options.host = value;
      } else {
        devrt::Result<devrt::remote::SocketAddress> address = devrt::remote::parse_address(value);
        if (!address.ok()) return usage_error(("--listen: " + std::string(address.status().message())).c_str());
        options.host = address->host;
        options.port = address->port;
      }
    } else if (arg == "--port" && has_value) {
      std::uint64_t port = 0;
      if (!devrt::detail::parse_unsigned(argv[++i], port) || port > 65535) return usage_error("--port: 0 to 65535");
      options.port = static_cast<std::uint16_t>(port);
    } else if (arg == "--devices" && has_value) {
      options.devices = devrt::detail::split_list(argv[++i], ',');
    } else if (arg == "--address-file" && has_value) {
      options.address_file = argv[++i];
    } else {
      return usage_error(("unknown argument or missing value: " + arg).c_str());
    }
  }
  options.handshakes.deadline = std::chrono::milliseconds(deadline_ms);
  if (int refused = check_safety(options); refused != 0) return refused;
  devrt::Result<std::vector<devrt::server::Exported>> devices =
      devrt::server::export_devices(options.devices, options.allow_host_code);
  if (!devices.ok()) {
    std::fprintf(stderr, "devrt-server: %s\n", std::string(devices.status().message()).c_str());
    return 1;
  }
  for (const devrt::server::Exported& e : *devices) {
    std::printf("devrt-server: exporting %s:%d (%s)\n", std::string(devrt::device_kind_name(e.device.kind)).c_str(),
                e.device.id, e.description.name.c_str());
  }
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  std::signal(SIGPIPE, SIG_IGN);
  devrt::Status s = devrt::server::serve(options, *devices, stop_requested);
  if (!s.ok()) {
    std::fprintf(stderr, "devrt-server: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
