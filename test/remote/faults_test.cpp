// SPDX-License-Identifier: Apache-2.0
// Remote devices under real failures, with real processes on loopback: a devrt-server killed with
// SIGKILL mid-stream, a client killed while it holds memory, a server that stalls (SIGSTOP); and
// the safe defaults: host code refused, remote memory never exported through DLPack. The server
// is DEVRT_TEST_SERVER; DEVRT_REMOTE_TIMEOUT_MS bounds every wait (test/meson.build sets 3000).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <devrt/backend/backend.hpp>
#include <devrt/devrt.hpp>
#include <devrt/discovery.hpp>
#include <devrt/remote.hpp>

#include "remote_process.hpp"

namespace {

using devrt::Buffer;
using devrt::Device;
using devrt::ErrorCode;
using namespace devrt::test;

// The child of "a killed client's memory is freed": connects, holds three buffers, says so, waits.
int hold_memory(const char* address, const char* ready_file) {
  devrt::Result<std::vector<Device>> devices = devrt::remote::connect(address);
  if (!devices.ok() || devices->empty()) return 1;
  std::vector<Buffer> held;
  std::vector<unsigned char> bytes(1 << 20, 7);
  for (int i = 0; i < 3; ++i) {
    devrt::Result<Buffer> b = Buffer::allocate(devices->front(), bytes.size());
    if (!b.ok() || !devrt::copy(devrt::host_span(bytes.data(), bytes.size()), *b).ok()) return 1;
    held.push_back(std::move(b).value());
  }
  if (!devrt::synchronize(devrt::current_stream(devices->front())).ok()) return 1;
  std::ofstream(ready_file) << "ready\n";
  for (;;) ::pause();
}

} // namespace

TEST_CASE("a killed server's devices fail, naming it, and stay lost", "[remote][faults]") {
  auto server = std::make_unique<Server>();
  const Device device = connect_one(server->address);
  std::vector<unsigned char> bytes(4096, 1);
  Buffer buffer = std::move(Buffer::allocate(device, bytes.size())).value();
  // Mid-stream: one-way writes queued, none waited for.
  for (int i = 0; i < 200; ++i) REQUIRE(devrt::copy(devrt::host_span(bytes.data(), bytes.size()), buffer).ok());
  server->process.kill_and_reap();

  devrt::Status sync = devrt::synchronize(devrt::current_stream(device));
  INFO(sync.message());
  CHECK(sync.code() == ErrorCode::unavailable);
  CHECK(contains(sync.message(), server->address));
  // Every later call fails at once, naming the server; nothing hangs.
  devrt::Result<Buffer> more = Buffer::allocate(device, 64);
  CHECK(more.status().code() == ErrorCode::unavailable);
  CHECK(contains(more.status().message(), "is lost"));
  std::vector<unsigned char> back(bytes.size());
  CHECK(devrt::copy(buffer, devrt::host_span(back.data(), back.size())).code() == ErrorCode::unavailable);
  CHECK(devrt::Stream::create(device).status().code() == ErrorCode::unavailable);
  devrt::Result<devrt::remote::DeviceInfo> info = devrt::remote::describe(device);
  REQUIRE(info.ok());
  CHECK(info->lost);
  // Freeing what the lost server held succeeds: it went with the server.
  buffer = Buffer();

  // A new server gives new devices; the old one keeps failing.
  Server again;
  const Device fresh = connect_one(again.address);
  CHECK(fresh.id > device.id);
  CHECK(Buffer::allocate(fresh, 64).ok());
  CHECK(Buffer::allocate(device, 64).status().code() == ErrorCode::unavailable);
  bool listed = false;
  for (Device d : devrt::devices()) listed = listed || d == fresh;
  CHECK(listed);
}

TEST_CASE("a killed client's memory is freed and the server serves the others", "[remote][faults]") {
  Server server;
  const Device device = connect_one(server.address);
  const std::uint64_t baseline = server_allocated(device);
  const std::string ready = scratch_path("ready");
  char self[4096] = {};
  REQUIRE(::readlink("/proc/self/exe", self, sizeof self - 1) > 0);
  Process client({self, "--hold-memory", server.address, ready});
  REQUIRE(wait_for_line(ready) == "ready");
  CHECK(server_allocated(device) >= baseline + (3u << 20));
  devrt::Result<devrt::remote::ServerStats> stats = devrt::remote::server_stats(device);
  REQUIRE(stats.ok());
  CHECK(stats->clients == 2);

  client.kill_and_reap();
  // The server notices the dead endpoint and frees what it held.
  std::uint64_t now = 0;
  for (int i = 0; i < 300; ++i) {
    now = server_allocated(device);
    if (now == baseline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(now == baseline);
  // This client is still served.
  std::vector<unsigned char> bytes(1000, 9), back(1000);
  Buffer buffer = std::move(Buffer::allocate(device, bytes.size())).value();
  REQUIRE(devrt::copy(devrt::host_span(bytes.data(), bytes.size()), buffer).ok());
  REQUIRE(devrt::copy(buffer, devrt::host_span(back.data(), back.size())).ok());
  CHECK(back == bytes);
  CHECK(devrt::remote::server_stats(device)->clients == 1);
}

TEST_CASE("a stalled server times out instead of hanging", "[remote][faults]") {
  Server server;
  const Device device = connect_one(server.address);
  Buffer buffer = std::move(Buffer::allocate(device, 256)).value();
  server.process.signal(SIGSTOP);
  devrt::Status sync = devrt::synchronize(devrt::current_stream(device));
  server.process.signal(SIGCONT);
  INFO(sync.message());
  CHECK(sync.code() == ErrorCode::unavailable);
  CHECK(contains(sync.message(), "DEVRT_REMOTE_TIMEOUT_MS"));
  CHECK(contains(sync.message(), server.address));
}

TEST_CASE("host code is refused unless the server allows it", "[remote]") {
  Server plain;
  const Device device = connect_one(plain.address);
  const unsigned char elf[] = {0x7f, 'E', 'L', 'F'};
  devrt::Result<devrt::Module> so =
      devrt::Module::load(device, devrt::ModuleFormat::shared_object,
                          std::span<const std::byte>(reinterpret_cast<const std::byte*>(elf), 4));
  INFO(so.status().message());
  CHECK(so.status().code() == ErrorCode::unsupported);
  CHECK(devrt::Module::load(device, devrt::ModuleFormat::host_table, "conformance").status().code() ==
        ErrorCode::unsupported);
  devrt::Result<devrt::BackendRef> backend = devrt::backend_for(device);
  REQUIRE(backend.ok());
  CHECK_FALSE(backend->device_module_formats(device.id).value_or(~0u) &
              DEVRT_MODULE_FORMAT_BIT(DEVRT_MODULE_SHARED_OBJECT));

  const std::string key = new_key();
  Server allowing({"--allow-host-code", "--key-file", key});
  devrt::remote::ConnectOptions keyed;
  keyed.key_file = key;
  devrt::Result<std::vector<Device>> added = devrt::remote::connect(allowing.address, keyed);
  INFO(added.status().message());
  REQUIRE(added.ok());
  const Device trusted = added->front();
  CHECK(backend->device_module_formats(trusted.id).value_or(0) & DEVRT_MODULE_FORMAT_BIT(DEVRT_MODULE_SHARED_OBJECT));
}

TEST_CASE("remote devices carry their server's identity, and their memory is not exported", "[remote]") {
  Server server;
  const Device device = connect_one(server.address);
  devrt::Result<devrt::remote::DeviceInfo> info = devrt::remote::describe(device);
  REQUIRE(info.ok());
  CHECK(info->server == server.address);
  CHECK(info->kind == devrt::DeviceKind::cpu);
  CHECK(info->index == 0);
  CHECK_FALSE(info->name.empty());
  CHECK(devrt::remote::describe(devrt::kHostDevice).status().code() == ErrorCode::invalid_argument);
  devrt::Result<devrt::Target> target = devrt::detect_target(device);
  INFO(target.status().message());
  CHECK(target.ok());

  devrt::Result<devrt::Tensor> tensor = devrt::Tensor::empty({4}, devrt::DataType{}, device);
  REQUIRE(tensor.ok());
  devrt::Result<DLManagedTensor*> exported = tensor->to_dlpack();
  CHECK(exported.status().code() == ErrorCode::unsupported);
  CHECK(contains(exported.status().message(), "remote"));
}

TEST_CASE("connect refuses bad addresses and unreachable servers, naming them", "[remote]") {
  CHECK(devrt::remote::connect("no-port").status().code() == ErrorCode::invalid_argument);
  CHECK(devrt::remote::connect("127.0.0.1:99999").status().code() == ErrorCode::invalid_argument);
  // A port nobody listens on: the one a server had before it stopped.
  std::string address;
  {
    Server gone;
    address = gone.address;
  }
  devrt::Result<std::vector<Device>> refused = devrt::remote::connect(address);
  INFO(refused.status().message());
  CHECK(refused.status().code() == ErrorCode::unavailable);
  CHECK(contains(refused.status().message(), address));
}

extern "C" int devrt_catch_session_main(int argc, char** argv);

int main(int argc, char** argv) {
  if (argc == 4 && std::string_view(argv[1]) == "--hold-memory") return hold_memory(argv[2], argv[3]);
  if (std::getenv("DEVRT_TEST_SERVER") == nullptr) {
    std::puts("DEVRT_TEST_SERVER is not set: it names the devrt-server to start");
    return 77;
  }
  return devrt_catch_session_main(argc, argv);
}
