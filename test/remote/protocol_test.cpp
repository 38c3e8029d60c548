// SPDX-License-Identifier: Apache-2.0
// The remote protocol's messages (src/remote/protocol.hpp) without a connection: every request and
// every reply round-trips through its encoder and decoder field for field, and the decoders refuse
// bytes of the wrong size, unknown commands and payloads a command does not take.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>

#include "remote/protocol.hpp"

namespace {

namespace wire = devrt::remote::wire;

// A record whose every byte differs from its neighbours' and from zero, so that a field read from
// the wrong place, or not at all, shows.
template <class T>
T patterned(unsigned seed) {
  T value{};
  if constexpr (!std::is_empty_v<T>) {
    unsigned char bytes[sizeof(T)];
    for (std::size_t i = 0; i < sizeof bytes; ++i) bytes[i] = static_cast<unsigned char>(seed * 31 + i * 7 + 1);
    std::memcpy(&value, bytes, sizeof value);
  }
  return value;
}

template <class T>
bool same_bytes(const T& a, const T& b) {
  if constexpr (wire::kWireBytes<T> == 0) {
    return true;
  } else {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
  }
}

// The request R through make_command, encode and Command::decode; its reply through set, encode and
// Reply::decode.
template <class R>
void round_trip(unsigned seed) {
  INFO("op " << static_cast<unsigned>(R::op));
  const R request = patterned<R>(seed);
  wire::Command sent = wire::make_command(request, 5, 0x1122334455667788u);
  sent.sequence = 42 + seed;
  std::vector<unsigned char> bytes;
  sent.encode(bytes);
  CHECK(bytes.size() == sizeof(wire::Header) + wire::kWireBytes<R>);
  std::optional<wire::Command> received = wire::Command::decode(bytes.data(), bytes.size());
  REQUIRE(received);
  CHECK(received->op == static_cast<std::uint32_t>(R::op));
  CHECK(received->device == 5);
  CHECK(received->sequence == 42 + seed);
  CHECK(received->stream == 0x1122334455667788u);
  CHECK(same_bytes(received->request<R>(), request));
  // One byte short, or one too many (a hello aside: a later version's may be longer), is no command.
  if (!bytes.empty()) CHECK_FALSE(wire::Command::decode(bytes.data(), bytes.size() - 1));
  bytes.push_back(0);
  CHECK(wire::Command::decode(bytes.data(), bytes.size()).has_value() == (R::op == wire::Op::hello));

  using Reply = typename R::Reply;
  const std::uint32_t op = static_cast<std::uint32_t>(R::op);
  CHECK(wire::has_reply(R::op) == !std::is_same_v<Reply, wire::NoReply>);
  if constexpr (!std::is_same_v<Reply, wire::NoReply>) {
    wire::Reply answer = wire::Reply::for_op(op);
    answer.sequence = sent.sequence;
    answer.code = -3;
    answer.text_bytes = 17;
    const Reply result = patterned<Reply>(seed + 100);
    answer.set(result);
    std::vector<unsigned char> reply_bytes;
    answer.encode(reply_bytes);
    CHECK(reply_bytes.size() == sizeof(wire::ReplyHeader) + wire::kWireBytes<Reply>);
    std::optional<wire::Reply> back = wire::Reply::decode(reply_bytes.data(), reply_bytes.size(), op);
    REQUIRE(back);
    CHECK(back->sequence == sent.sequence);
    CHECK(back->code == -3);
    CHECK(back->text_bytes == 17);
    CHECK(same_bytes(back->get<Reply>(), result));
    CHECK_FALSE(wire::Reply::decode(reply_bytes.data(), reply_bytes.size() - 1, op));
    reply_bytes.push_back(0);
    CHECK_FALSE(wire::Reply::decode(reply_bytes.data(), reply_bytes.size(), op));
  } else {
    const wire::ReplyHeader header{};
    CHECK_FALSE(wire::Reply::decode(&header, sizeof header, op));
  }
}

template <class... R>
void round_trip_all(wire::RequestList<R...>) {
  unsigned seed = 0;
  (round_trip<R>(++seed), ...);
}

} // namespace

TEST_CASE("every request and reply round-trips field for field", "[remote][protocol]") {
  round_trip_all(wire::AllRequests{});
}

TEST_CASE("the decoders refuse what is no command or reply", "[remote][protocol]") {
  wire::Header header;
  CHECK_FALSE(wire::Command::decode(&header, sizeof header)); // op 0
  header.op = static_cast<std::uint32_t>(wire::Op::last) + 1;
  CHECK_FALSE(wire::Command::decode(&header, sizeof header));
  header.op = static_cast<std::uint32_t>(wire::Op::ping);
  CHECK(wire::Command::decode(&header, sizeof header));
  CHECK_FALSE(wire::Command::decode(&header, sizeof header - 1));
  CHECK_FALSE(wire::Command::decode(nullptr, 0));
  // A request read as another command's is no request: zeros.
  const wire::Command free = wire::make_command(wire::Free{.allocation = 9});
  CHECK(free.request<wire::Free>().allocation == 9);
  CHECK(free.request<wire::EventDestroy>().event == 0);
  // A reply to an unknown command.
  const wire::ReplyHeader reply{};
  CHECK_FALSE(wire::Reply::decode(&reply, sizeof reply, 0));
  CHECK_FALSE(wire::Reply::decode(&reply, sizeof reply, 999));
}

TEST_CASE("each command takes the payload its request describes, and no other", "[remote][protocol]") {
  using wire::make_command;
  using wire::payload_fits;
  CHECK(payload_fits(make_command(wire::Hello{}), wire::kNonceBytes));
  CHECK_FALSE(payload_fits(make_command(wire::Hello{}), wire::kNonceBytes + 1));
  CHECK(payload_fits(make_command(wire::Authenticate{}), wire::kProofBytes));
  CHECK(payload_fits(make_command(wire::Write{}), 1 << 20));
  CHECK(payload_fits(make_command(wire::ModuleLoad{.option_bytes = 8}), 8));
  CHECK_FALSE(payload_fits(make_command(wire::ModuleLoad{.option_bytes = 9}), 8));
  CHECK_FALSE(payload_fits(make_command(wire::ModuleFunction{}), 0));
  CHECK_FALSE(payload_fits(make_command(wire::ModuleFunction{}), wire::kMaxNameBytes + 1));
  CHECK(payload_fits(make_command(wire::Launch{.argument_count = 2}), 2 * sizeof(wire::LaunchArg)));
  CHECK_FALSE(payload_fits(make_command(wire::Launch{.argument_count = 2}), sizeof(wire::LaunchArg)));
  CHECK_FALSE(payload_fits(make_command(wire::Launch{.argument_count = 65}), 65 * sizeof(wire::LaunchArg)));
  CHECK(payload_fits(make_command(wire::GraphCreate{.node_count = 1}), sizeof(wire::GraphNode)));
  CHECK_FALSE(payload_fits(make_command(wire::GraphCreate{.node_count = 0}), 0));
  CHECK_FALSE(payload_fits(make_command(wire::GraphCreate{.node_count = 2}), sizeof(wire::GraphNode)));
  CHECK_FALSE(payload_fits(make_command(wire::Read{}), 8));
  CHECK(payload_fits(make_command(wire::Read{}), 0));
  wire::Command unknown;
  unknown.op = 999;
  CHECK_FALSE(payload_fits(unknown, 0));
}

TEST_CASE("a device list round-trips, and a truncated one is refused", "[remote][protocol]") {
  std::vector<wire::DeviceDescription> devices(2);
  devices[0].kind = 4;
  devices[0].index = 1;
  devices[0].module_formats = 0x30;
  devices[0].capabilities = 7;
  devices[0].name = "opencl device";
  devices[0].target_json = R"({"kind":"opencl"})";
  devices[0].attributes[0].type = DEVRT_VALUE_INT;
  devices[0].attributes[0].ints[0] = 1024;
  devices[1].name = "cpu";
  const std::vector<unsigned char> bytes = wire::encode_devices(devices);
  std::vector<wire::DeviceDescription> back;
  REQUIRE(wire::decode_devices(bytes.data(), bytes.size(), back));
  REQUIRE(back.size() == 2);
  CHECK(back[0].kind == 4);
  CHECK(back[0].index == 1);
  CHECK(back[0].module_formats == 0x30);
  CHECK(back[0].capabilities == 7);
  CHECK(back[0].name == "opencl device");
  CHECK(back[0].target_json == R"({"kind":"opencl"})");
  CHECK(back[0].attributes[0].ints[0] == 1024);
  CHECK(back[1].name == "cpu");
  for (std::size_t cut : {std::size_t{0}, std::size_t{3}, bytes.size() / 2, bytes.size() - 1}) {
    INFO("cut at " << cut);
    CHECK_FALSE(wire::decode_devices(bytes.data(), cut, back));
  }
}
