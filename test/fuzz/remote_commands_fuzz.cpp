// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: devrt-server's admission, decoder and runner (src/remote/server_client.cpp
// and session.cpp), the code a hostile client reaches first, against the real CPU device; and
// every decoder of the protocol (src/remote/protocol.hpp): commands, replies (as the answer to each
// command) and a server's device list. The input is a client's messages: each a u8 header size,
// that many bytes of UCX header (a Header and a request, or anything), a u16 payload length and
// the payload, decoded as Server::on_command decodes them and given to a Client as the UCX thread
// gives them (accept, then ready), from before the handshake on. The first byte set to 1 sends a
// correct hello first, set to 2 makes the server keyed (an all-zero key: no input can prove it, so
// no command but the hello may ever succeed, and nothing is queued for one). Every message either
// runs, is refused, or ends the connection; after the end nothing more runs, and the client's
// objects are freed (libFuzzer reports a leak otherwise).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <devrt/devrt.hpp>

#include "fuzz_check.hpp"
#include "remote/session.hpp"

namespace {

using devrt::server::Exported;
using devrt::server::Outgoing;

class Host final : public devrt::server::SessionHost {
public:
  explicit Host(bool keyed) : keyed(keyed) {
    if (keyed) options_.key = devrt::remote::auth::Key{};
    Exported cpu;
    cpu.device = devrt::Device{devrt::DeviceKind::cpu, 0};
    cpu.description.kind = static_cast<std::int32_t>(devrt::DeviceKind::cpu);
    cpu.description.name = "cpu";
    devices_.push_back(cpu);
    options_.limits.memory_bytes = 1 << 20;
    options_.limits.message_bytes = 1 << 16;
    options_.limits.streams = 4;
    options_.limits.events = 4;
    options_.limits.modules = 2;
  }
  const std::vector<Exported>& devices() const override { return devices_; }
  const devrt::server::Options& options() const override { return options_; }
  std::uint64_t clients() const override { return 1; }
  bool admit() override { return true; }
  void send(Outgoing out) override {
    std::lock_guard<std::mutex> lock(mutex);
    if (ended) broken("a reply or disconnection after the connection ended");
    if (!out.has_reply && out.disconnect.empty()) broken("neither a reply nor a disconnection");
    if (!out.disconnect.empty()) ended = true;
    // Keyed: only hello may succeed (its reply is the challenge, never the device list).
    if (keyed && out.has_reply && out.reply.code == 0 &&
        out.reply.get<devrt::remote::wire::HelloReply>().flags != devrt::remote::wire::kHelloKeyed) {
      broken("a keyed server answered a client that cannot know its key");
    }
  }
  const bool keyed;
  std::mutex mutex; // the client's thread sends too
  bool ended = false;

private:
  std::vector<Exported> devices_;
  devrt::server::Options options_;
};

} // namespace

namespace {
namespace wire = devrt::remote::wire;

// The client's decoders: a reply to every command, and a device list.
void decode_as_client(const std::uint8_t* data, std::size_t size) {
  std::vector<wire::DeviceDescription> listed;
  static_cast<void>(wire::decode_devices(data, size, listed));
  for (std::uint32_t op = 0; op <= static_cast<std::uint32_t>(wire::Op::last) + 1; ++op) {
    std::optional<wire::Reply> reply = wire::Reply::decode(data, size, op);
    if (reply && (!wire::has_reply(op) || reply->result_bytes != wire::reply_bytes(op))) {
      broken("a reply decoded for a command that has none, or at the wrong size");
    }
  }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  decode_as_client(data, size);
  if (size == 0) return 0;
  Host host(data[0] == 2);
  auto client = std::make_unique<devrt::server::Client>(host, nullptr, 1);
  std::string why;
  // As Server::on_command hands a message over: decoded, accepted (or the connection ends), then
  // complete.
  auto deliver = [&](wire::Command command, const std::uint8_t* payload, std::size_t bytes) {
    devrt::server::Incoming* incoming = client->accept(command, bytes, why);
    if (incoming == nullptr) return false;
    incoming->data.assign(payload, payload + bytes);
    client->ready(incoming);
    return true;
  };
  std::uint64_t sequence = 1;
  if (data[0] == 1) {
    wire::Command hello = wire::make_command(wire::Hello{});
    hello.sequence = sequence++;
    const std::vector<std::uint8_t> nonce(wire::kNonceBytes);
    if (!deliver(hello, nonce.data(), nonce.size()) || !client->admitted()) broken("hello refused");
  }
  std::size_t at = 1;
  while (size - at >= 3 && size - at - 3 >= data[at]) {
    std::vector<std::uint8_t> header(data + at + 1, data + at + 1 + data[at]);
    at += 1 + header.size();
    const std::size_t bytes = std::min<std::size_t>(data[at] | data[at + 1] << 8, size - at - 2);
    at += 2;
    const std::uint8_t* payload = data + at;
    at += bytes;
    std::optional<wire::Command> command = wire::Command::decode(header.data(), header.size());
    if (!command) break; // the server ends the connection
    // In order, unless the input sets the top bit: then its low 16 bits, which may be out of order.
    command->sequence = (command->sequence >> 63) != 0 ? command->sequence & 0xFFFF : sequence;
    ++sequence;
    std::vector<unsigned char> again;
    command->encode(again);
    // Everything but the sequence number as it came (a longer hello's extra bytes aside).
    if (again.size() > header.size() || !std::equal(again.begin(), again.begin() + 8, header.begin()) ||
        !std::equal(again.begin() + 16, again.end(), header.begin() + 16)) {
      broken("a decoded command encodes to other bytes");
    }
    if (!deliver(*command, payload, bytes)) break;
  }
  // The connection ends: the client's thread (if its handshake completed) frees everything.
  client->close();
  while (!client->finished()) std::this_thread::yield();
  client.reset();
  return 0;
}
