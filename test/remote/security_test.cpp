// SPDX-License-Identifier: Apache-2.0
// devrt-server against clients it must not trust (docs/remote.md, "Keys", "Limits", "Hostile
// clients"): keys that refuse, options that need a key, each per-client limit exceeded, and
// messages that break the protocol, sent raw through the remote backend's own connection; each
// ends only its own client's connection. Real servers on loopback (DEVRT_TEST_SERVER).
#include <sys/stat.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <devrt/devrt.hpp>
#include <devrt/graph.hpp>
#include <devrt/remote.hpp>
#include <devrt/timing.hpp>

#include "remote/connection.hpp"
#include "remote_process.hpp"

namespace {

using devrt::Buffer;
using devrt::Device;
using devrt::ErrorCode;
using devrt::remote::Connection;
using devrt::remote::wire::Command;
namespace wire = devrt::remote::wire;
using namespace devrt::test;

void check_error(const devrt::Status& status, ErrorCode code, std::string_view part) {
  INFO(status.message());
  CHECK(status.code() == code);
  CHECK(contains(status.message(), part));
}

devrt::Status connect_with(const std::string& address, const std::string& key_file) {
  devrt::remote::ConnectOptions options;
  options.key_file = key_file;
  return devrt::remote::connect(address, options).status();
}

std::unique_ptr<Connection> open_raw(const std::string& address, const std::string& key_file = "") {
  devrt::Result<std::unique_ptr<Connection>> c = Connection::open(address, key_file);
  INFO(c.status().message());
  REQUIRE(c.ok());
  return std::move(c).value();
}

// A command with no request: `op` is none of the protocol's.
Command unknown(std::uint32_t op) {
  Command c;
  c.op = op;
  return c;
}

// A round trip on `c`: ok while the server still serves it.
devrt::Status ping(Connection& c) {
  devrt::remote::Answer answer;
  return c.call(wire::make_command(wire::Ping{}), {}, answer);
}

} // namespace

TEST_CASE("a keyed server serves only clients that prove its key, and proves it to them", "[remote][keys]") {
  const std::string key = new_key();
  const std::string other = new_key();
  Server keyed({"--key-file", key});
  check_error(connect_with(keyed.address, ""), ErrorCode::permission_denied, "requires a key");
  check_error(connect_with(keyed.address, other), ErrorCode::permission_denied, "did not prove");
  const Device device = connect_one(keyed.address, key);
  Buffer buffer = std::move(Buffer::allocate(device, 4096)).value();
  std::vector<unsigned char> bytes(4096, 5), back(4096);
  REQUIRE(devrt::copy(devrt::host_span(bytes.data(), bytes.size()), buffer).ok());
  REQUIRE(devrt::copy(buffer, devrt::host_span(back.data(), back.size())).ok());
  CHECK(back == bytes);
  // The refused connections are ended: this client is the only one left.
  devrt::Result<devrt::remote::ServerStats> stats = devrt::remote::server_stats(device);
  REQUIRE(stats.ok());
  for (int i = 0; i < 100 && stats->clients != 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stats = devrt::remote::server_stats(device);
  }
  CHECK(stats->clients == 1);

  // A client with a key refuses a server that does not ask for one.
  Server open;
  check_error(connect_with(open.address, key), ErrorCode::permission_denied, "does not ask for one");
  check_error(connect_with(keyed.address, "/nonexistent/key"), ErrorCode::not_found, "/nonexistent/key");
}

TEST_CASE("host code, other addresses and shared key files need a key", "[remote][keys]") {
  std::string output;
  CHECK(run_server({"--allow-host-code"}, &output) == 2);
  CHECK(contains(output, "--allow-host-code needs --key-file"));
  CHECK(run_server({"--listen", "0.0.0.0"}, &output) == 2);
  CHECK(contains(output, "needs --key-file"));

  const std::string key = new_key();
  struct stat st {};
  REQUIRE(::stat(key.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(run_server({"--generate-key", key}, &output) == 1);
  CHECK(contains(output, "never overwritten"));
  REQUIRE(::chmod(key.c_str(), 0644) == 0);
  CHECK(run_server({"--key-file", key}, &output) == 2);
  CHECK(contains(output, "chmod 600"));
  Server open;
  check_error(connect_with(open.address, key), ErrorCode::permission_denied, "chmod 600");
  REQUIRE(::chmod(key.c_str(), 0600) == 0);
  const std::string garbage = scratch_path("garbage");
  std::FILE* f = std::fopen(garbage.c_str(), "w");
  REQUIRE(f != nullptr);
  std::fputs("not a key\n", f);
  std::fclose(f);
  REQUIRE(::chmod(garbage.c_str(), 0600) == 0);
  CHECK(run_server({"--key-file", garbage}, &output) == 2);
  CHECK(contains(output, "64 hexadecimal digits"));
}

TEST_CASE("each per-client limit is an error to that client alone", "[remote][limits]") {
  const std::string key = new_key();
  Server server({"--key-file", key, "--allow-host-code", "--max-clients", "2", "--max-client-memory", "1048576",
                 "--max-client-streams", "2", "--max-client-events", "2", "--max-client-modules", "1", "--max-message",
                 "65536"});
  const Device device = connect_one(server.address, key);
  const Device other = connect_one(server.address, key);
  check_error(connect_with(server.address, key), ErrorCode::permission_denied, "--max-clients");

  // Memory: 1 MiB in all, whatever the pieces.
  Buffer most = std::move(Buffer::allocate(device, 768 << 10)).value();
  check_error(Buffer::allocate(device, 512 << 10).status(), ErrorCode::out_of_memory, "--max-client-memory");
  CHECK(Buffer::allocate(other, 1 << 20).ok()); // the other client's own megabyte
  most = Buffer();
  Buffer whole = std::move(Buffer::allocate(device, 1 << 20)).value();

  // Messages: a copy larger than --max-message goes in pieces; a module that large cannot.
  std::vector<unsigned char> bytes(1 << 20), back(1 << 20);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 7);
  REQUIRE(devrt::copy(devrt::host_span(bytes.data(), bytes.size()), whole).ok());
  REQUIRE(devrt::copy(whole, devrt::host_span(back.data(), back.size())).ok());
  CHECK(back == bytes);
  std::vector<std::byte> image(1 << 17, std::byte{0});
  check_error(devrt::Module::load(device, devrt::ModuleFormat::shared_object, image).status(),
              ErrorCode::permission_denied, "--max-message");

  // Streams and events: two each.
  devrt::Stream s1 = std::move(devrt::Stream::create(device)).value();
  devrt::Stream s2 = std::move(devrt::Stream::create(device)).value();
  check_error(devrt::Stream::create(device).status(), ErrorCode::permission_denied, "--max-client-streams");
  devrt::Event e1 = std::move(devrt::Event::create(device)).value();
  devrt::Event e2 = std::move(devrt::Event::create(device)).value();
  check_error(devrt::Event::create(device).status(), ErrorCode::permission_denied, "--max-client-events");
  CHECK(devrt::Stream::create(other).ok());
  CHECK(devrt::Event::create(other).ok());

  // Modules: one. The CPU kernels as a shared object (host code: this server has a key).
  const char* kernels = std::getenv("DEVRT_TEST_CPU_KERNELS_SO");
  REQUIRE(kernels != nullptr);
  devrt::Result<devrt::Module> first = devrt::Module::load_file(device, devrt::ModuleFormat::shared_object, kernels);
  INFO(first.status().message());
  REQUIRE(first.ok());
  check_error(devrt::Module::load_file(device, devrt::ModuleFormat::shared_object, kernels).status(),
              ErrorCode::permission_denied, "--max-client-modules");
  CHECK(devrt::Module::load_file(other, devrt::ModuleFormat::shared_object, kernels).ok());
  // Still served after every refusal.
  CHECK(devrt::synchronize(devrt::current_stream(device)).ok());
}

TEST_CASE("messages that break the protocol end their own connection, and the server serves the others",
          "[remote][hostile]") {
  Server server({"--max-message", "65536"});
  const Device bystander = connect_one(server.address);
  Buffer kept = std::move(Buffer::allocate(bystander, 4096)).value();
  const std::uint64_t held = server_allocated(bystander);

  struct Case {
    const char* name;
    Command command;
    std::vector<unsigned char> payload;
  };
  // The bystander's first handle, not this connection's.
  const Command foreign_free = wire::make_command(wire::Free{.allocation = 1});
  // Two arguments announced, one sent.
  const Command launch = wire::make_command(wire::Launch{.argument_count = 2});
  // An allocate whose header stops after its first operand.
  Command short_allocate = wire::make_command(wire::Allocate{.bytes = 64});
  short_allocate.request_bytes = 8;
  std::vector<Case> cases = {
      {"an unknown command", unknown(999), {}},
      {"a command header shorter than its request", short_allocate, {}},
      {"a device the server does not export", wire::make_command(wire::Allocate{.bytes = 64}, 7), {}},
      {"a handle another client owns", foreign_free, {}},
      {"a payload on a command that takes none", wire::make_command(wire::DeviceSynchronize{}),
       std::vector<unsigned char>(8)},
      {"launch arguments cut short", launch, std::vector<unsigned char>(sizeof(wire::LaunchArg))},
      {"a payload beyond --max-message", wire::make_command(wire::Write{}), std::vector<unsigned char>(65537)},
      {"a second hello", wire::make_command(wire::Hello{}), std::vector<unsigned char>(32)},
      // On the cpu device a read of host memory is answered in place, on the UCX thread: the
      // payload check holds there too.
      {"a read carrying a payload", wire::make_command(wire::Read{.allocation = 1, .bytes = 8}),
       std::vector<unsigned char>(8)},
  };
  for (Case& c : cases) {
    INFO(c.name);
    std::unique_ptr<Connection> hostile = open_raw(server.address);
    REQUIRE(ping(*hostile).ok());
    // One-way: it may already find the connection ended (a rendezvous the server refused).
    const devrt::Status posted = hostile->post(c.command, c.payload);
    CHECK((posted.ok() || posted.code() == ErrorCode::unavailable));
    devrt::Status after = ping(*hostile);
    INFO(after.message());
    CHECK(after.code() == ErrorCode::unavailable);
    CHECK(hostile->is_lost());
    // The bystander keeps its memory and its service.
    CHECK(server_allocated(bystander) == held);
    CHECK(devrt::synchronize(devrt::current_stream(bystander)).ok());
  }
  std::vector<unsigned char> bytes(4096, 3), back(4096);
  REQUIRE(devrt::copy(devrt::host_span(bytes.data(), bytes.size()), kept).ok());
  REQUIRE(devrt::copy(kept, devrt::host_span(back.data(), back.size())).ok());
  CHECK(back == bytes);
}

// A client that moves 64 MiB to and from its buffer for as long as it lives (this program run as
// "--mover ADDRESS"): the server sends and receives it in place, in the buffer's own memory.
int run_mover(const char* address) {
  devrt::Result<std::vector<Device>> devices = devrt::remote::connect(address);
  if (!devices.ok() || devices->empty()) return 1;
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  devrt::Result<Buffer> buffer = Buffer::allocate(devices->front(), kBytes);
  if (!buffer.ok()) return 1;
  std::vector<unsigned char> bytes(kBytes, 1);
  for (;;) {
    if (!devrt::copy(devrt::host_span(bytes.data(), kBytes), *buffer).ok()) return 1;
    if (!devrt::copy(*buffer, devrt::host_span(bytes.data(), kBytes)).ok()) return 1;
  }
}

TEST_CASE("a client killed while its memory moves is freed, and the server serves the others", "[remote][hostile]") {
  Server server;
  const Device bystander = connect_one(server.address);
  const std::uint64_t held = server_allocated(bystander);
  for (int round = 0; round < 3; ++round) {
    Process mover({"/proc/self/exe", "--mover", server.address});
    std::this_thread::sleep_for(std::chrono::milliseconds(400 + 150 * round));
    mover.kill_and_reap();
    bool freed = false;
    for (int i = 0; i < 100 && !freed; ++i) {
      freed = server_allocated(bystander) == held;
      if (!freed) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    CHECK(freed);
  }
  CHECK(devrt::synchronize(devrt::current_stream(bystander)).ok());
  CHECK(server.process.terminate() == 0);
}

TEST_CASE("time_evaluator and graphs on a remote device run on the server", "[remote][graph]") {
  const std::string key = new_key();
  Server server({"--key-file", key, "--allow-host-code", "--max-client-graphs", "2"});
  const Device device = connect_one(server.address, key);
  const char* kernels = std::getenv("DEVRT_TEST_CPU_KERNELS_SO");
  REQUIRE(kernels != nullptr);
  devrt::Module module =
      std::move(devrt::Module::load_file(device, devrt::ModuleFormat::shared_object, kernels)).value();
  devrt::Function scale = std::move(module.function("scale")).value();
  constexpr std::int32_t n = 256;
  std::vector<float> ones(n, 1.0f), back(n);
  Buffer x = std::move(Buffer::allocate(device, n * sizeof(float))).value();
  REQUIRE(devrt::copy(devrt::host_span(ones.data(), ones.size() * sizeof(float)), x).ok());
  const devrt::LaunchConfig config{.grid = {4}, .block = {64}};

  // Each timed batch is a graph of `number` launches, replayed once: 5 + 5 launches, then the
  // untimed first call.
  devrt::TimeEvaluatorOptions options;
  options.number = 5;
  options.repeat = 2;
  devrt::TimeEvaluator evaluator = std::move(devrt::TimeEvaluator::create(device, options)).value();
  devrt::Result<std::vector<double>> seconds = evaluator.run(scale, config, {x, 2.0f, n});
  INFO(seconds.status().message());
  REQUIRE(seconds.ok());
  REQUIRE(seconds->size() == 2);
  for (double s : *seconds) CHECK(s >= 0.0);
  REQUIRE(devrt::copy(x, devrt::host_span(back.data(), back.size() * sizeof(float))).ok());
  CHECK(back[0] >= 2048.0f); // 2^11, or more when a batch read 0 ns and was repeated
  CHECK(back == std::vector<float>(n, back[0]));
  REQUIRE(devrt::copy(devrt::host_span(ones.data(), ones.size() * sizeof(float)), x).ok());
  REQUIRE(devrt::synchronize(devrt::current_stream(device)).ok());

  // A graph replays natively (one message each); the server's limit on graphs holds.
  devrt::Stream stream = std::move(devrt::Stream::create(device)).value();
  REQUIRE(devrt::begin_capture(stream.ref()).ok());
  REQUIRE(scale.launch(config, {x, 0.5f, n}, stream.ref()).ok());
  devrt::Graph halving = std::move(devrt::end_capture(stream.ref())).value();
  CHECK(halving.mode() == devrt::GraphMode::native);
  for (int i = 0; i < 3; ++i) REQUIRE(halving.launch(stream.ref()).ok());
  REQUIRE(
      devrt::copy(x, 0, devrt::host_span(back.data(), back.size() * sizeof(float)), 0, n * sizeof(float), stream.ref())
          .ok());
  REQUIRE(devrt::synchronize(stream.ref()).ok());
  CHECK(back == std::vector<float>(n, 0.125f));
  REQUIRE(devrt::begin_capture(stream.ref()).ok());
  REQUIRE(scale.launch(config, {x, 1.0f, n}, stream.ref()).ok());
  devrt::Result<devrt::Graph> second = devrt::end_capture(stream.ref());
  REQUIRE(second.ok());
  REQUIRE(devrt::begin_capture(stream.ref()).ok());
  REQUIRE(scale.launch(config, {x, 1.0f, n}, stream.ref()).ok());
  devrt::Result<devrt::Graph> third = devrt::end_capture(stream.ref());
  check_error(third.status(), ErrorCode::permission_denied, "--max-client-graphs");
  CHECK(devrt::synchronize(stream.ref()).ok()); // still served
}

TEST_CASE("several clients at once, each with its own objects", "[remote][concurrency]") {
  Server server;
  constexpr int kClients = 4;
  std::vector<Device> devices;
  for (int i = 0; i < kClients; ++i) devices.push_back(connect_one(server.address));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t) {
    threads.emplace_back([&, t] {
      const Device device = devices[static_cast<std::size_t>(t)];
      for (int round = 0; round < 20; ++round) {
        std::vector<unsigned char> bytes(8192, static_cast<unsigned char>(t * 31 + round)), back(8192);
        devrt::Result<Buffer> b = Buffer::allocate(device, bytes.size());
        devrt::Result<devrt::Stream> s = devrt::Stream::create(device);
        const bool ok =
            b.ok() && s.ok() &&
            devrt::copy(devrt::host_span(bytes.data(), bytes.size()), 0, b->span(), 0, bytes.size(), s->ref()).ok() &&
            devrt::copy(b->span(), 0, devrt::host_span(back.data(), back.size()), 0, back.size(), s->ref()).ok() &&
            devrt::synchronize(s->ref()).ok() && back == bytes &&
            // The stream has no work left: the server's UCX thread answers this one itself.
            devrt::synchronize(s->ref()).ok();
        if (!ok) failures.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(failures.load() == 0);
  devrt::Result<devrt::remote::ServerStats> stats = devrt::remote::server_stats(devices.front());
  REQUIRE(stats.ok());
  CHECK(stats->clients == kClients);
  // The server's own threads passed too: under TSan a race there ends it with status 66.
  CHECK(server.process.terminate() == 0);
}

extern "C" int devrt_catch_session_main(int argc, char** argv);

int main(int argc, char** argv) {
  if (argc == 3 && std::string_view(argv[1]) == "--mover") return run_mover(argv[2]);
  if (std::getenv("DEVRT_TEST_SERVER") == nullptr) {
    std::puts("DEVRT_TEST_SERVER is not set: it names the devrt-server to start");
    return 77;
  }
  return devrt_catch_session_main(argc, argv);
}
