// SPDX-License-Identifier: Apache-2.0
// devrt-server [--listen HOST] [--port N] [--devices LIST] [--allow-host-code] [--address-file PATH]
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "server.hpp"
#include "support/environment.hpp"

namespace {

std::atomic<bool> stop_requested{false};

void request_stop(int) { stop_requested.store(true); }

constexpr const char* kUsage =
    "usage: devrt-server [options]\n"
    "Serves this machine's devices to devrt's remote backend over UCX (docs/remote.md).\n"
    "  --listen HOST        IPv4 address to listen on (default 127.0.0.1; loopback only until keys exist)\n"
    "  --port N             port (default 0: any free one; the address is printed)\n"
    "  --devices LIST       what to export: backend[:index],... (default: every present device)\n"
    "  --allow-host-code    accept shared_object and host_table modules (they run code in this process)\n"
    "  --address-file PATH  write host:port there once listening\n";

int usage_error(const char* what) {
  std::fprintf(stderr, "devrt-server: %s\n%s", what, kUsage);
  return 2;
}

bool is_loopback(const std::string& host) { return host.rfind("127.", 0) == 0; }

} // namespace

int main(int argc, char** argv) {
  devrt::server::Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--allow-host-code") {
      options.allow_host_code = true;
    } else if (arg == "--listen" && has_value) {
      options.host = argv[++i];
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
  if (!is_loopback(options.host)) {
    std::fprintf(stderr,
                 "devrt-server: --listen %s refused: this server has no authentication yet, so it listens on "
                 "loopback (127.x.x.x) only (docs/remote.md, \"What is not protected yet\")\n",
                 options.host.c_str());
    return 2;
  }
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
