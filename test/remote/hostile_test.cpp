// SPDX-License-Identifier: Apache-2.0
// devrt-server against an attacker on this machine (docs/remote.md, "Threat model"), with a UCX
// peer of the tests' own (raw_peer.hpp) that sends what devrt's client never would: every
// active-message id before and after the handshake, keyed and not; silent connections and large
// writes before any hello; a hostile server answering a devrt client on every id. Then what a
// client can reach: memory a previous client held, kernels on devices that run them inside the
// server, files of the server through a compiler. Real servers on loopback (DEVRT_TEST_SERVER); run
// over the transport UCX picks and over TCP alone.
#include <fcntl.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <devrt/backend/backend.hpp>
#include <devrt/devrt.hpp>
#include <devrt/remote.hpp>

#include "raw_peer.hpp"
#include "remote/connection.hpp"
#include "remote_process.hpp"

namespace {

using devrt::Buffer;
using devrt::Device;
using devrt::DeviceKind;
using devrt::ErrorCode;
using namespace devrt::test;

constexpr unsigned kIds[] = {0, 1, 2, 3, 40, 63, 64, 255, 256, 1000, 65535};

// The devices here whose kinds the server exports, as "--devices" wants them.
std::string present(std::initializer_list<DeviceKind> kinds) {
  std::string list;
  for (DeviceKind kind : kinds) {
    if (devrt::device_count(kind) == 0) continue;
    if (!list.empty()) list += ",";
    list += std::string(devrt::device_kind_name(kind)) + ":0";
  }
  return list;
}

std::vector<Device> connect_all(const std::string& address, const std::string& key = "") {
  devrt::remote::ConnectOptions options;
  options.key_file = key;
  devrt::Result<std::vector<Device>> devices = devrt::remote::connect(address, options);
  INFO(devices.status().message());
  REQUIRE(devices.ok());
  return *devices;
}

// A devrt client gets a round trip through: the server still serves.
void check_serving(const std::string& address, const std::string& key = "") {
  const Device device = connect_all(address, key).front();
  CHECK(devrt::synchronize(devrt::current_stream(device)).ok());
}

// A figure of /proc/PID/status in KiB: "VmRSS" (resident now), "VmHWM" (the peak).
std::uint64_t status_kib(pid_t pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1));
  }
  FAIL("no " << field << " for " << pid);
  return 0;
}

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

} // namespace

TEST_CASE("every active-message id, before and after the handshake, keyed and not, leaves the server serving",
          "[remote][hostile][ids]") {
  for (const bool keyed : {false, true}) {
    const std::string key_file = keyed ? new_key() : "";
    std::optional<devrt::remote::auth::Key> key;
    if (keyed) key = *devrt::remote::auth::read_key_file(key_file);
    Server server(keyed ? std::vector<std::string>{"--key-file", key_file} : std::vector<std::string>{});
    for (const bool after_handshake : {false, true}) {
      for (unsigned id : kIds) {
        for (std::uint32_t flags : {0u, static_cast<std::uint32_t>(UCP_AM_SEND_FLAG_REPLY)}) {
          INFO((keyed ? "keyed" : "no key")
               << ", id " << id << (after_handshake ? " after" : " before") << " the handshake, flags " << flags);
          RawPeer peer(port_of(server.address));
          if (after_handshake) REQUIRE(peer.handshake(key));
          // No header, no data: what crashed UCX 1.13's handler table on id 0.
          static_cast<void>(peer.send(id, nullptr, 0, nullptr, 0, flags));
          // And a header and payload of garbage.
          const std::vector<unsigned char> garbage(100, 0xEE);
          static_cast<void>(peer.send(id, garbage.data(), garbage.size(), garbage.data(), 16, flags));
        }
      }
      check_serving(server.address, key_file);
    }
    // All 65,536 ids on one connection, before and after its handshake: without the reply flag
    // UCX does not say whose a message is, so the server drops each and the connection stays.
    // Once: keyed or not, the server's handler table is the same.
    for (const bool after_handshake : {false, true}) {
      if (keyed) break;
      INFO("every id " << (after_handshake ? "after" : "before") << " the handshake");
      RawPeer sweeper(port_of(server.address));
      if (after_handshake) REQUIRE(sweeper.handshake(key));
      for (unsigned id = 0; id <= 65535; ++id) static_cast<void>(sweeper.send(id, nullptr, 0, nullptr, 0, 0));
      check_serving(server.address, key_file);
    }
    // The ids a client never sends end its connection (when UCX says whose message it was).
    RawPeer peer(port_of(server.address));
    REQUIRE(peer.handshake(key));
    static_cast<void>(peer.send(wire::kReplyMessage, nullptr, 0, nullptr, 0));
    CHECK(peer.ended_within(std::chrono::seconds(10)));
    CHECK(server.process.terminate() == 0); // no crash, and a clean stop
  }
}

TEST_CASE("a hostile server's messages on any id end the client's connection, not the client",
          "[remote][hostile][ids]") {
  for (unsigned id : kIds) {
    for (const bool with_header : {false, true}) {
      INFO("the server answers the hello on id " << id << (with_header ? " with a reply's header" : " bare"));
      wire::Reply reply;
      reply.sequence = 1;
      // A reply's id carries a reply, which this server follows by closing the connection.
      RawListener listener(
          [&](devrt::remote::Worker& worker, ucp_ep_h endpoint) {
            static_cast<void>(send_raw(worker, endpoint, id, with_header ? &reply : nullptr,
                                       with_header ? sizeof reply : 0, nullptr, 0, 0));
          },
          id == wire::kReplyMessage);
      devrt::Result<std::vector<Device>> devices = devrt::remote::connect(listener.address());
      INFO(devices.status().message());
      CHECK_FALSE(devices.ok());
      if (id != wire::kReplyMessage) {
        CHECK(devices.status().code() == ErrorCode::unavailable);
        CHECK(contains(devices.status().message(), "an id devrt-server never uses"));
      }
    }
  }
}

TEST_CASE("connections that never complete the handshake hold no slot past the deadline",
          "[remote][hostile][handshake]") {
  const std::string key = new_key();
  const std::string log = scratch_path("server-log");
  const std::string address_file = scratch_path("address");
  Process process({server_program(), "--devices", "cpu", "--key-file", key, "--max-clients", "2", "--handshake-timeout",
                   "3000", "--address-file", address_file},
                  log);
  const std::string address = wait_for_line(address_file);
  // 64 silent connections: more than --max-clients and than the pending budget (16). The server
  // has seen them all once it has ended the 48 oldest (UCX delivers connection requests on its
  // own time): then 16 hold the pending budget while the keyed clients connect.
  std::vector<std::unique_ptr<RawPeer>> silent;
  for (int i = 0; i < 64; ++i) silent.push_back(std::make_unique<RawPeer>(port_of(address)));
  auto cut_short = [&] {
    const std::string said = text_of(log);
    std::size_t count = 0;
    for (std::size_t at = said.find("cut short"); at != std::string::npos; at = said.find("cut short", at + 1)) ++count;
    return count;
  };
  for (int round = 0; round < 400 && cut_short() < 48; ++round) {
    for (auto& peer : silent) static_cast<void>(peer->ended_within(std::chrono::milliseconds(1)));
  }
  REQUIRE(cut_short() == 48);
  // Keyed clients still get in: all of --max-clients.
  const Device first = connect_one(address, key);
  const Device second = connect_one(address, key);
  CHECK(devrt::synchronize(devrt::current_stream(first)).ok());
  CHECK(devrt::synchronize(devrt::current_stream(second)).ok());
  // Past the deadline, every silent connection has been ended by the server.
  int ended = 0;
  for (auto& peer : silent) ended += peer->ended_within(std::chrono::seconds(5)) ? 1 : 0;
  CHECK(ended == 64);
  CHECK(devrt::synchronize(devrt::current_stream(first)).ok());
  CHECK(process.terminate() == 0);
  const std::string said = text_of(log);
  CHECK(contains(said, "did not complete the handshake within 3000 ms"));
  CHECK(contains(said, "its handshake was cut short"));
}

TEST_CASE("nothing a peer sends before the handshake is queued or allocated", "[remote][hostile][handshake]") {
  const std::string key = new_key();
  Server server({"--key-file", key});
  const pid_t pid = server.process.pid();
  const std::uint64_t before = status_kib(pid, "VmRSS"), peak_before = status_kib(pid, "VmHWM");
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  const std::vector<unsigned char> payload(kBytes, 0x5A);
  for (std::uint32_t flags : {0u, static_cast<std::uint32_t>(UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_RNDV)}) {
    RawPeer peer(port_of(server.address));
    for (int i = 0; i < 4; ++i) static_cast<void>(peer.command(wire::Write{}, payload, flags));
    // A write before the hello: refused at once, the connection ended.
    CHECK(peer.ended_within(std::chrono::seconds(10)));
  }
  // A hello with a payload of the wrong size, and an authenticate before the hello.
  for (bool hello : {true, false}) {
    RawPeer peer(port_of(server.address));
    static_cast<void>(hello ? peer.command(wire::Hello{}, std::vector<unsigned char>(4096))
                            : peer.command(wire::Authenticate{}, std::vector<unsigned char>(32)));
    CHECK(peer.ended_within(std::chrono::seconds(10)));
  }
  // Nothing is kept: the server's resident memory is back where it was. (UCX itself reassembles an
  // eager message of many fragments before any handler sees it: the peak may rise by one message
  // while it arrives. docs/remote.md, "Threat model".) Sanitizers keep freed memory resident.
  const std::uint64_t after = status_kib(pid, "VmRSS"), peak_after = status_kib(pid, "VmHWM");
  INFO("server RSS " << before << " KiB before, " << after << " KiB after 8 writes of 64 MiB; peak " << peak_before
                     << " -> " << peak_after << " KiB");
#if !DEVRT_TEST_SANITIZED
  CHECK(after < before + 16 * 1024);
  CHECK(peak_after < peak_before + (64 + 16) * 1024); // one message at a time, at most
#endif
  check_serving(server.address, key);
}

// A client that leaves `marker` bytes in an allocation of `bytes` on its `index`-th device and
// exits without freeing it (this program run as "--leave-marker ADDRESS INDEX BYTES").
int leave_marker(const char* address, const char* index, const char* bytes) {
  devrt::Result<std::vector<Device>> devices = devrt::remote::connect(address);
  if (!devices.ok()) return 1;
  const std::size_t size = std::stoull(bytes);
  devrt::Result<Buffer> buffer = Buffer::allocate(devices->at(std::stoul(index)), size);
  if (!buffer.ok()) return 1;
  std::vector<unsigned char> marker(size, 0xA5);
  if (!devrt::copy(devrt::host_span(marker.data(), size), *buffer).ok()) return 1;
  if (!devrt::synchronize(devrt::current_stream(buffer->device())).ok()) return 1;
  std::_Exit(0); // no free, no goodbye
}

TEST_CASE("a new client never reads a previous client's bytes", "[remote][hostile][isolation]") {
  const std::string devices = present({DeviceKind::cpu, DeviceKind::opencl, DeviceKind::vulkan});
  Server server({"--devices", devices});
  const std::size_t count = connect_all(server.address).size();
  int combinations = 0;
  for (std::size_t index = 0; index < count; ++index) {
    for (std::size_t bytes : {std::size_t{4096}, std::size_t{1} << 20}) {
      for (const bool abandoned : {false, true}) {
        INFO("device " << index << " of " << devices << ", " << bytes << " bytes, "
                       << (abandoned ? "abandoned by a client that died" : "freed"));
        const Device watcher = connect_all(server.address).at(index);
        const std::uint64_t held = server_allocated(watcher);
        if (abandoned) {
          Process leaver(
              {"/proc/self/exe", "--leave-marker", server.address, std::to_string(index), std::to_string(bytes)});
          REQUIRE(leaver.wait() == 0);
        } else {
          const Device a = connect_all(server.address).at(index);
          {
            Buffer buffer = std::move(Buffer::allocate(a, bytes)).value();
            std::vector<unsigned char> marker(bytes, 0xA5);
            REQUIRE(devrt::copy(devrt::host_span(marker.data(), bytes), buffer).ok());
            REQUIRE(devrt::synchronize(devrt::current_stream(a)).ok());
          }
          // Out of this client's own Buffer cache, back to the server: the free has run then.
          REQUIRE(devrt::empty_cache(a).ok());
          REQUIRE(devrt::synchronize(devrt::current_stream(a)).ok());
        }
        // The server has taken the memory back (the dead client's once it noticed).
        for (int i = 0; i < 300 && server_allocated(watcher) != held; ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        REQUIRE(server_allocated(watcher) == held);
        const Device b = connect_all(server.address).at(index);
        Buffer fresh = std::move(Buffer::allocate(b, bytes)).value();
        std::vector<unsigned char> seen(bytes, 0xFF);
        REQUIRE(devrt::copy(fresh, devrt::host_span(seen.data(), bytes)).ok());
        CHECK(seen == std::vector<unsigned char>(bytes, 0));
        ++combinations;
      }
    }
  }
  CHECK(combinations == static_cast<int>(count) * 4);
}

namespace {
// Reads any address of the process it runs in: an OpenCL C kernel as a client would write it.
constexpr const char* kPeek = "__kernel void peek(__global uchar* out, ulong address, uint n) {\n"
                              "  __global const uchar* p = (__global const uchar*)address;\n"
                              "  for (uint i = 0; i < n; ++i) out[i] = p[i];\n"
                              "}\n";

// The server's own answer to loading `image` as `format` on its device `device`, sent raw (the
// client already refuses formats a device does not list).
devrt::Status raw_module_load(const std::string& address, const std::string& key, std::uint32_t device,
                              devrt::ModuleFormat format, const std::string& options, const std::string& image) {
  devrt::Result<std::unique_ptr<devrt::remote::Connection>> c = devrt::remote::Connection::open(address, key);
  REQUIRE(c.ok());
  const wire::Command command = wire::make_command(
      wire::ModuleLoad{.format = static_cast<std::uint32_t>(format), .option_bytes = options.size()}, device);
  std::vector<unsigned char> payload(options.begin(), options.end());
  payload.insert(payload.end(), image.begin(), image.end());
  devrt::remote::Answer answer;
  return (*c)->call(command, payload, answer);
}

// Each device's own kind of module, for the server's refusal.
devrt::ModuleFormat native_format(DeviceKind kind) {
  switch (kind) {
  case DeviceKind::opencl: return devrt::ModuleFormat::opencl_c;
  case DeviceKind::vulkan: return devrt::ModuleFormat::spirv;
  case DeviceKind::webgpu: return devrt::ModuleFormat::wgsl;
  default: return devrt::ModuleFormat::shared_object;
  }
}
} // namespace

TEST_CASE("kernels on devices that run them inside the server need --allow-host-code", "[remote][hostile]") {
  const std::string devices = present({DeviceKind::cpu, DeviceKind::opencl, DeviceKind::vulkan, DeviceKind::webgpu});
  const std::string key = new_key();
  for (const bool keyed : {false, true}) {
    INFO((keyed ? "a keyed server without --allow-host-code" : "a server without a key"));
    Server server(keyed ? std::vector<std::string>{"--devices", devices, "--key-file", key}
                        : std::vector<std::string>{"--devices", devices});
    const std::string client_key = keyed ? key : "";
    const std::vector<Device> remote = connect_all(server.address, client_key);
    for (std::uint32_t i = 0; i < remote.size(); ++i) {
      devrt::Result<devrt::BackendRef> backend = devrt::backend_for(remote[i]);
      REQUIRE(backend.ok());
      devrt::Result<devrt::remote::DeviceInfo> described = devrt::remote::describe(remote[i]);
      REQUIRE(described.ok());
      INFO(devrt::device_kind_name(described->kind) << " (" << described->name << ")");
      CHECK(backend->device_module_formats(remote[i].id).value_or(1) == 0); // none listed
      const devrt::ModuleFormat format = native_format(described->kind);
      CHECK_FALSE(devrt::Module::load(remote[i], format, std::as_bytes(std::span(kPeek, std::strlen(kPeek)))).ok());
      const devrt::Status refused = raw_module_load(server.address, client_key, i, format, "", kPeek);
      INFO(refused.message());
      CHECK(refused.code() == ErrorCode::unsupported);
      CHECK((contains(refused.message(), "run as native code inside the server process") ||
             contains(refused.message(), "run host code on the server")));
    }
  }
  if (devrt::device_count(DeviceKind::opencl) > 0) {
    // With --allow-host-code (and so a key) the same kernel loads: the choice is the server's.
    Server allowing({"--devices", "opencl:0", "--key-file", key, "--allow-host-code"});
    const Device device = connect_one(allowing.address, key);
    CHECK(
        devrt::Module::load(device, devrt::ModuleFormat::opencl_c, std::as_bytes(std::span(kPeek, std::strlen(kPeek))))
            .ok());
  }
}

TEST_CASE("sources the server compiles read none of its files", "[remote][hostile][files]") {
  // main() reports this case skipped (77) where there is no OpenCL device.
  const std::string secret = scratch_path("secret");
  {
    std::ofstream out(secret);
    out << "SECRET_7f3a9c\n";
  }
  REQUIRE(::chmod(secret.c_str(), 0600) == 0);
  const std::string folder = secret.substr(0, secret.rfind('/'));
  const std::string name = secret.substr(secret.rfind('/') + 1);
  const std::string key = new_key();
  Server server({"--devices", "opencl:0", "--key-file", key, "--allow-host-code"});
  const Device device = connect_one(server.address, key);
  const std::string body = "\n__kernel void k(__global int* x) { x[0] = 1; }\n";
  struct Attempt {
    std::string options, source;
  };
  const std::vector<Attempt> attempts = {
      {"", "int v = \n#include \"" + secret + "\"\n;" + body},
      {"", "int v = \n# /**/ include \"" + secret + "\"\n;" + body},
      {"", "int v = \n#inc\\\nlude \"" + secret + "\"\n;" + body},
      {"", "int v = \n%:include \"" + secret + "\"\n;" + body},
      {"", "#define SECRET \"" + secret + "\"\nint v = \n#include SECRET\n;" + body},
      {"", "#if __has_include(\"" + secret + "\")\nint v;\n#endif\n" + body},
      {"-I " + folder, "int v = \n#include \"" + name + "\"\n;" + body},
      {"-include " + secret, body},
      {"-imacros " + secret, body},
      {"@" + secret, body},
  };
  for (const Attempt& attempt : attempts) {
    INFO("options '" << attempt.options << "', source:\n" << attempt.source);
    std::string log;
    devrt::Result<devrt::Module> loaded = devrt::Module::load(
        device, devrt::ModuleFormat::opencl_c, std::as_bytes(std::span(attempt.source.data(), attempt.source.size())),
        attempt.options, &log);
    INFO(loaded.status().message());
    CHECK(loaded.status().code() == ErrorCode::permission_denied);
    CHECK_FALSE(contains(loaded.status().message(), "SECRET_7f3a9c"));
    CHECK_FALSE(contains(log, "SECRET_7f3a9c"));
  }
  // A kernel that reads nothing builds, with the options that read nothing.
  std::string log;
  CHECK(devrt::Module::load(device, devrt::ModuleFormat::opencl_c, std::as_bytes(std::span(body.data(), body.size())),
                            "-D N=4 -cl-fast-relaxed-math", &log)
            .ok());
}

TEST_CASE("a client holds no more of a device than the device has, by default", "[remote][hostile][limits]") {
  Server server;
  const Device device = connect_one(server.address);
  devrt::Result<std::optional<std::int64_t>> total =
      devrt::get_attribute<devrt::Attribute::total_global_memory>(device);
  REQUIRE(total.ok());
  REQUIRE(total->has_value());
  const auto bytes = static_cast<std::size_t>(**total);
  devrt::Result<Buffer> twice = Buffer::allocate(device, 2 * bytes);
  INFO(twice.status().message());
  CHECK(twice.status().code() == ErrorCode::out_of_memory);
  CHECK(contains(twice.status().message(), "no client may hold more than that"));
  CHECK(devrt::synchronize(devrt::current_stream(device)).ok());
}

extern "C" int devrt_catch_session_main(int argc, char** argv);

int main(int argc, char** argv) {
  if (argc == 5 && std::string_view(argv[1]) == "--leave-marker") return leave_marker(argv[2], argv[3], argv[4]);
  if (argc == 2 && std::string_view(argv[1]) == "[files]" && devrt::device_count(DeviceKind::opencl) == 0) {
    std::puts("SKIP: the compiler cases need an OpenCL device (PoCL), and there is none here");
    return 77;
  }
  if (std::getenv("DEVRT_TEST_SERVER") == nullptr) {
    std::puts("DEVRT_TEST_SERVER is not set: it names the devrt-server to start");
    return 77;
  }
  return devrt_catch_session_main(argc, argv);
}
