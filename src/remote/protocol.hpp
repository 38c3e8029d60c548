// SPDX-License-Identifier: Apache-2.0
// devrt's remote protocol: the commands a client sends devrt-server and the replies it gets, over
// UCX active messages (docs/remote.md, "The protocol"). A small HAL set (allocate, free, write,
// read, copy, streams, events, modules, launch), not the C API call by call. Internal: client
// and server are built from one tree, and the hello refuses any other version.
//
// Every command is one active message on the client's endpoint. Its UCX header is a Header then
// the command's request (a struct below, one per Op), its data a payload for some (bytes to write,
// a module image, launch arguments). Commands carry a sequence number and the server runs each
// client's commands in that order. Only the calls that must answer (allocate, create, load,
// synchronize, read, query) get a reply: a ReplyHeader then the request's Reply type, and data
// for some; the others are one-way, and a failure of one is kept and reported by the next
// synchronizing call on its device. Command::decode and Reply::decode are the only readers of
// those bytes, and check their sizes against the Op; nothing reads an operand by position.
//
// A message that breaks the protocol (a malformed header, a payload its command does not take, an
// unknown command or device, a handle the client does not own, a sequence number out of order)
// ends the connection: the server frees what the client held and serves the others.
#ifndef DEVRT_SRC_REMOTE_PROTOCOL_HPP
#define DEVRT_SRC_REMOTE_PROTOCOL_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <devrt/attribute.hpp>
#include <devrt/backend/backend_abi.h>

namespace devrt::remote::wire {

// 3: typed requests and replies (the header no longer carries six positional operands).
inline constexpr std::uint32_t kVersion = 3;
// Active message ids: client -> server commands, server -> client replies.
inline constexpr unsigned kCommandMessage = 1;
inline constexpr unsigned kReplyMessage = 2;
// Both sides handle every id a peer can send, up to UCX's largest (set_message_handlers): a
// message on any id but their own ends the connection.
inline constexpr unsigned kHighestMessage = 65535;

enum class Op : std::uint32_t {
  hello = 1,
  allocate,
  free,
  write,
  read,
  copy,
  stream_create,
  stream_destroy,
  stream_synchronize,
  event_create,
  event_destroy,
  event_record,
  event_synchronize,
  event_query,
  stream_wait_event,
  event_elapsed,
  module_load,
  module_unload,
  module_function,
  launch,
  device_synchronize,
  server_stats,
  authenticate,
  ping,
  graph_create,
  graph_launch,
  graph_destroy,
  last = graph_destroy,
};

inline constexpr std::uint64_t kHelloKeyed = 1;
inline constexpr std::size_t kNonceBytes = 32;      // auth::kNonceBytes
inline constexpr std::size_t kProofBytes = 32;      // auth::kProofBytes
inline constexpr std::size_t kMaxNameBytes = 4096;  // a kernel's name
inline constexpr std::uint64_t kMaxLaunchArgs = 64; // devrt::kMaxKernelArgs
inline constexpr std::uint64_t kMaxGraphNodes = 1u << 16;

// ---- Replies ---------------------------------------------------------------------------------

struct NoReply {}; // a one-way command's
struct Done {};    // a reply that says only whether the command succeeded (and its data, for some)
struct HelloReply {
  std::uint64_t flags = 0;       // kHelloKeyed, or 0
  std::uint64_t max_message = 0; // the largest payload the server accepts
};
struct Created {
  std::uint64_t handle = 0; // the new object's, the client's own on the server
};
struct ModuleLoaded {
  std::uint64_t module = 0;
  std::uint64_t rewritten_instructions = 0; // Module::rewritten_instructions
};
struct EventState {
  std::uint64_t complete = 0; // 1 when complete
};
struct Elapsed {
  std::int64_t nanoseconds = 0;
};
struct Stats {
  std::uint64_t clients = 0;
  std::uint64_t allocated_bytes = 0;
  std::uint64_t allocations = 0;
};

// ---- Requests: one per Op; `device` and `stream` are the Header's ------------------------------

// data: the client's nonce. Reply data: the exported devices (encode_devices), or when keyed the
// server's nonce then its proof (auth.hpp). `version` is the first operand in every version.
struct Hello {
  static constexpr Op op = Op::hello;
  using Reply = HelloReply;
  std::uint64_t version = kVersion;
};
struct Allocate {
  static constexpr Op op = Op::allocate;
  using Reply = Created;
  std::uint64_t bytes = 0;
  std::uint64_t alignment = 0;
};
struct Free {
  static constexpr Op op = Op::free;
  using Reply = NoReply;
  std::uint64_t allocation = 0;
};
struct Write { // data: the bytes
  static constexpr Op op = Op::write;
  using Reply = NoReply;
  std::uint64_t allocation = 0;
  std::uint64_t offset = 0;
};
struct Read { // reply data: the bytes
  static constexpr Op op = Op::read;
  using Reply = Done;
  std::uint64_t allocation = 0;
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};
struct Copy { // on the Header's device and stream; the source may be on another of the server's
  static constexpr Op op = Op::copy;
  using Reply = NoReply;
  std::uint64_t source = 0;
  std::uint64_t source_offset = 0;
  std::uint64_t destination = 0;
  std::uint64_t destination_offset = 0;
  std::uint64_t bytes = 0;
  std::uint32_t source_device = 0;
  std::uint32_t reserved = 0;
};
struct StreamCreate {
  static constexpr Op op = Op::stream_create;
  using Reply = Created;
};
struct StreamDestroy {
  static constexpr Op op = Op::stream_destroy;
  using Reply = NoReply;
  std::uint64_t stream = 0;
};
struct StreamSynchronize { // the Header's stream
  static constexpr Op op = Op::stream_synchronize;
  using Reply = Done;
};
struct EventCreate {
  static constexpr Op op = Op::event_create;
  using Reply = Created;
  std::uint64_t timed = 0; // 1 for a timed event
};
struct EventDestroy {
  static constexpr Op op = Op::event_destroy;
  using Reply = NoReply;
  std::uint64_t event = 0;
};
struct EventRecord { // on the Header's stream
  static constexpr Op op = Op::event_record;
  using Reply = NoReply;
  std::uint64_t event = 0;
};
struct EventSynchronize {
  static constexpr Op op = Op::event_synchronize;
  using Reply = Done;
  std::uint64_t event = 0;
};
struct EventQuery {
  static constexpr Op op = Op::event_query;
  using Reply = EventState;
  std::uint64_t event = 0;
};
struct StreamWaitEvent { // the Header's stream waits
  static constexpr Op op = Op::stream_wait_event;
  using Reply = NoReply;
  std::uint64_t event = 0;
};
struct EventElapsed {
  static constexpr Op op = Op::event_elapsed;
  using Reply = Elapsed;
  std::uint64_t start = 0;
  std::uint64_t end = 0;
};
struct ModuleLoad { // data: the options then the image; reply text: the build log
  static constexpr Op op = Op::module_load;
  using Reply = ModuleLoaded;
  std::uint32_t format = 0; // devrt::ModuleFormat
  std::uint32_t reserved = 0;
  std::uint64_t option_bytes = 0;
};
struct ModuleUnload {
  static constexpr Op op = Op::module_unload;
  using Reply = NoReply;
  std::uint64_t module = 0;
};
struct ModuleFunction { // data: the name
  static constexpr Op op = Op::module_function;
  using Reply = Created;
  std::uint64_t module = 0;
};
struct Launch { // on the Header's stream; data: LaunchArg[argument_count]
  static constexpr Op op = Op::launch;
  using Reply = NoReply;
  std::uint64_t function = 0;
  std::uint32_t grid[3] = {};
  std::uint32_t block[3] = {};
  std::uint64_t dynamic_shared_bytes = 0;
  std::uint32_t argument_count = 0;
  std::uint32_t reserved = 0;
};
struct DeviceSynchronize {
  static constexpr Op op = Op::device_synchronize;
  using Reply = Done;
};
struct ServerStats {
  static constexpr Op op = Op::server_stats;
  using Reply = Stats;
};
struct Authenticate { // data: the client's proof; reply data: the exported devices
  static constexpr Op op = Op::authenticate;
  using Reply = Done;
};
struct Ping { // a round trip and nothing else: everything sent before it has run
  static constexpr Op op = Op::ping;
  using Reply = Done;
};
// data: the nodes (GraphNode, each launch's LaunchArg[] after it); the server captures them into a
// devrt::Graph.
struct GraphCreate {
  static constexpr Op op = Op::graph_create;
  using Reply = Created;
  std::uint64_t node_count = 0;
};
struct GraphLaunch { // replayed on the Header's stream
  static constexpr Op op = Op::graph_launch;
  using Reply = NoReply;
  std::uint64_t graph = 0;
};
struct GraphDestroy {
  static constexpr Op op = Op::graph_destroy;
  using Reply = NoReply;
  std::uint64_t graph = 0;
};

// ---- Payload records ---------------------------------------------------------------------------

// One launch argument (devrt_kernel_arg with a handle for the buffer).
struct LaunchArg {
  std::int32_t kind = 0; // DEVRT_ARG_BUFFER or DEVRT_ARG_SCALAR
  std::uint8_t type_code = 0;
  std::uint8_t type_bits = 0;
  std::uint16_t reserved = 0;
  std::uint64_t handle = 0; // buffers
  std::uint64_t offset = 0; // buffers
  std::uint64_t size = 0;   // buffers
  std::uint64_t value = 0;  // scalars: the little-endian bytes
};

// One node of a graph_create payload; a launch's LaunchArg[argument_count] follow it.
struct GraphNode {
  std::uint32_t type = 0;           // DEVRT_GRAPH_NODE_LAUNCH or DEVRT_GRAPH_NODE_COPY
  std::uint32_t argument_count = 0; // launches
  std::uint64_t function = 0;       // launches
  std::uint32_t grid[3] = {};       // launches
  std::uint32_t block[3] = {};      // launches
  std::uint64_t dynamic_shared_bytes = 0;
  std::uint64_t source = 0; // copies: handles and offsets on the command's device, and the size
  std::uint64_t source_offset = 0;
  std::uint64_t destination = 0;
  std::uint64_t destination_offset = 0;
  std::uint64_t bytes = 0;
};

// ---- The table of requests ---------------------------------------------------------------------

template <class... Requests>
struct RequestList {};
// Every request, in Op order (checked below).
using AllRequests =
    RequestList<Hello, Allocate, Free, Write, Read, Copy, StreamCreate, StreamDestroy, StreamSynchronize, EventCreate,
                EventDestroy, EventRecord, EventSynchronize, EventQuery, StreamWaitEvent, EventElapsed, ModuleLoad,
                ModuleUnload, ModuleFunction, Launch, DeviceSynchronize, ServerStats, Authenticate, Ping, GraphCreate,
                GraphLaunch, GraphDestroy>;

// The bytes a request or reply takes on the wire: none for one with no fields.
template <class T>
inline constexpr std::size_t kWireBytes = std::is_empty_v<T> ? 0 : sizeof(T);

namespace detail {
template <class T>
constexpr bool is_wire_record() {
  // Plain bytes with no padding: what one side writes, the other reads field for field.
  return std::is_trivially_copyable_v<T> && (std::is_empty_v<T> || std::has_unique_object_representations_v<T>);
}
template <class... R>
constexpr bool well_formed(RequestList<R...>) {
  std::uint32_t expected = 1;
  return ((static_cast<std::uint32_t>(R::op) == expected++ && is_wire_record<R>() &&
           is_wire_record<typename R::Reply>()) &&
          ...) &&
         expected == static_cast<std::uint32_t>(Op::last) + 1;
}
template <class F, class... R>
constexpr bool visit(std::uint32_t op, F& f, RequestList<R...>) {
  return ((op == static_cast<std::uint32_t>(R::op) ? (f(R{}), true) : false) || ...);
}
template <class... R>
constexpr std::size_t largest_request(RequestList<R...>) {
  return std::max({kWireBytes<R>...});
}
template <class... R>
constexpr std::size_t largest_reply(RequestList<R...>) {
  return std::max({kWireBytes<typename R::Reply>...});
}
} // namespace detail
static_assert(detail::well_formed(AllRequests{}), "one plain request per Op, in Op order");
static_assert(detail::is_wire_record<LaunchArg>() && detail::is_wire_record<GraphNode>());

// Calls f(R{}) with the request type R of `op`; false for an op that is none.
template <class F>
constexpr bool with_request(std::uint32_t op, F&& f) {
  return detail::visit(op, f, AllRequests{});
}

inline constexpr std::size_t kMaxRequestBytes = detail::largest_request(AllRequests{});
inline constexpr std::size_t kMaxReplyBytes = detail::largest_reply(AllRequests{});

// True for the commands that get a reply; false for one-way commands and unknown ones.
constexpr bool has_reply(std::uint32_t op) noexcept {
  bool replies = false;
  with_request(op, [&](auto request) { replies = !std::is_same_v<typename decltype(request)::Reply, NoReply>; });
  return replies;
}
constexpr bool has_reply(Op op) noexcept { return has_reply(static_cast<std::uint32_t>(op)); }

// The bytes of `op`'s reply after its ReplyHeader (0 for an unknown op).
constexpr std::size_t reply_bytes(std::uint32_t op) noexcept {
  std::size_t bytes = 0;
  with_request(op, [&](auto request) { bytes = kWireBytes<typename decltype(request)::Reply>; });
  return bytes;
}

// What each command's payload may be: none for most.
template <class R>
constexpr bool takes_payload(const R&, std::uint64_t bytes) noexcept {
  return bytes == 0;
}
constexpr bool takes_payload(const Hello&, std::uint64_t bytes) noexcept { return bytes == kNonceBytes; }
constexpr bool takes_payload(const Authenticate&, std::uint64_t bytes) noexcept { return bytes == kProofBytes; }
constexpr bool takes_payload(const Write&, std::uint64_t) noexcept { return true; }
constexpr bool takes_payload(const ModuleLoad& r, std::uint64_t bytes) noexcept { return r.option_bytes <= bytes; }
constexpr bool takes_payload(const ModuleFunction&, std::uint64_t bytes) noexcept {
  return bytes > 0 && bytes <= kMaxNameBytes;
}
constexpr bool takes_payload(const Launch& r, std::uint64_t bytes) noexcept {
  return r.argument_count <= kMaxLaunchArgs && bytes == r.argument_count * sizeof(LaunchArg);
}
constexpr bool takes_payload(const GraphCreate& r, std::uint64_t bytes) noexcept {
  return r.node_count >= 1 && r.node_count <= kMaxGraphNodes && bytes >= r.node_count * sizeof(GraphNode) &&
         bytes <= r.node_count * (sizeof(GraphNode) + kMaxLaunchArgs * sizeof(LaunchArg));
}

// What every command starts with.
struct Header {
  std::uint32_t op = 0;
  std::uint32_t device = 0;   // the server's exported device (0 for hello, authenticate, ping)
  std::uint64_t sequence = 0; // 1, 2, ... per connection
  std::uint64_t stream = 0;   // a stream of the client's, 0: the device's default stream
};

// Appends a record's bytes.
inline void append_bytes(std::vector<unsigned char>& out, const void* bytes, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(bytes);
  out.insert(out.end(), p, p + size);
}

// A command's UCX header: the Header, then its request's bytes. Made by make_command, read back by
// decode (which checks the size against the op) and request<R>().
struct Command : Header {
  // The bytes to send: the Header and the request.
  void encode(std::vector<unsigned char>& out) const {
    out.reserve(out.size() + sizeof(Header) + request_bytes);
    append_bytes(out, static_cast<const Header*>(this), sizeof(Header));
    append_bytes(out, operands, request_bytes);
  }

  // The request; R must be the request type of `op` (a mismatch gives a zero request).
  template <class R>
  R request() const noexcept {
    R r{};
    if constexpr (!std::is_empty_v<R>) {
      if (op == static_cast<std::uint32_t>(R::op)) std::memcpy(&r, operands, sizeof r);
    }
    return r;
  }

  // A command from a peer's bytes; nullopt unless they are exactly a Header and the request of a
  // known op. A hello may be longer (a later version's): its version is read and checked later.
  static std::optional<Command> decode(const void* bytes, std::size_t size) noexcept {
    Command c;
    if (size < sizeof(Header)) return std::nullopt;
    std::memcpy(static_cast<Header*>(&c), bytes, sizeof(Header));
    std::size_t expected = 0;
    if (!with_request(c.op, [&](auto r) { expected = kWireBytes<decltype(r)>; })) return std::nullopt;
    if (c.op == static_cast<std::uint32_t>(Op::hello) && size > sizeof(Header) + expected)
      size = sizeof(Header) + expected;
    if (size != sizeof(Header) + expected) return std::nullopt;
    std::memcpy(c.operands, static_cast<const unsigned char*>(bytes) + sizeof(Header), expected);
    c.request_bytes = static_cast<std::uint32_t>(expected);
    return c;
  }

  unsigned char operands[kMaxRequestBytes] = {};
  std::uint32_t request_bytes = 0; // not sent: how many of `operands` are
};

// The command that carries `request` to exported device `device`, on stream `stream`.
template <class R>
Command make_command(const R& request, std::uint32_t device = 0, std::uint64_t stream = 0) noexcept {
  Command c;
  c.op = static_cast<std::uint32_t>(R::op);
  c.device = device;
  c.stream = stream;
  if constexpr (!std::is_empty_v<R>) std::memcpy(c.operands, &request, sizeof request);
  c.request_bytes = static_cast<std::uint32_t>(kWireBytes<R>);
  return c;
}

// True when `c`'s command may carry `bytes` of payload (takes_payload of its request). False for
// an unknown command.
inline bool payload_fits(const Command& c, std::uint64_t bytes) noexcept {
  bool fits = false;
  with_request(c.op, [&](auto r) { fits = takes_payload(c.request<decltype(r)>(), bytes); });
  return fits;
}

// What every reply starts with.
struct ReplyHeader {
  std::uint64_t sequence = 0;   // the command's
  std::int32_t code = 0;        // a devrt status code (DEVRT_STATUS_*)
  std::uint32_t text_bytes = 0; // an error message or build log: the first bytes of the data
};

// A reply's UCX header: the ReplyHeader, then the command's Reply (zeros after a failure).
struct Reply : ReplyHeader {
  // The bytes to send: the ReplyHeader and the result.
  void encode(std::vector<unsigned char>& out) const {
    out.reserve(out.size() + sizeof(ReplyHeader) + result_bytes);
    append_bytes(out, static_cast<const ReplyHeader*>(this), sizeof(ReplyHeader));
    append_bytes(out, results, result_bytes);
  }

  // Sets the result; T must be the Reply type of the command answered.
  template <class T>
  void set(const T& result) noexcept {
    if constexpr (!std::is_empty_v<T>) std::memcpy(results, &result, sizeof result);
  }
  template <class T>
  T get() const noexcept {
    T t{};
    if constexpr (!std::is_empty_v<T>) std::memcpy(&t, results, sizeof t);
    return t;
  }
  // An answer to command `op` (a known op with a reply): result_bytes from it.
  static Reply for_op(std::uint32_t op) noexcept {
    Reply r;
    r.result_bytes = static_cast<std::uint32_t>(reply_bytes(op));
    return r;
  }
  // A reply from a peer's bytes, as the answer to command `op`; nullopt unless they are exactly a
  // ReplyHeader and op's Reply.
  static std::optional<Reply> decode(const void* bytes, std::size_t size, std::uint32_t op) noexcept {
    if (!has_reply(op) || size != sizeof(ReplyHeader) + reply_bytes(op)) return std::nullopt;
    Reply r = for_op(op);
    std::memcpy(static_cast<ReplyHeader*>(&r), bytes, sizeof(ReplyHeader));
    std::memcpy(r.results, static_cast<const unsigned char*>(bytes) + sizeof(ReplyHeader), r.result_bytes);
    return r;
  }

  unsigned char results[kMaxReplyBytes] = {};
  std::uint32_t result_bytes = 0; // not sent
};

// An exported device as the hello describes it.
struct DeviceDescription {
  std::int32_t kind = 0;            // the device's kind on the server
  std::int32_t index = 0;           // its index there
  std::uint32_t module_formats = 0; // DEVRT_MODULE_FORMAT_BIT each, as the server allows them
  std::uint32_t capabilities = 0;   // DEVRT_CAP_* of its backend there
  std::string name;
  std::string target_json; // empty when the device cannot describe itself
  devrt_attribute_value attributes[kAttributeCount] = {};
};

// Appends plain values and length-prefixed text to a byte vector.
class Writer {
public:
  template <class T>
  void put(const T& value) {
    const auto* p = reinterpret_cast<const unsigned char*>(&value);
    bytes.insert(bytes.end(), p, p + sizeof value);
  }
  void put_text(std::string_view text) {
    put(static_cast<std::uint32_t>(text.size()));
    bytes.insert(bytes.end(), text.begin(), text.end());
  }
  std::vector<unsigned char> bytes;
};

// Reads what Writer wrote; every read is bounds-checked and a short input sets failed().
class Reader {
public:
  Reader(const void* data, std::size_t size) noexcept : p_(static_cast<const unsigned char*>(data)), left_(size) {}
  template <class T>
  bool get(T& value) noexcept {
    if (left_ < sizeof value) return fail();
    std::memcpy(&value, p_, sizeof value);
    p_ += sizeof value;
    left_ -= sizeof value;
    return true;
  }
  bool get_text(std::string& text) {
    std::uint32_t n = 0;
    if (!get(n) || left_ < n) return fail();
    text.assign(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    left_ -= n;
    return true;
  }
  bool failed() const noexcept { return failed_; }

private:
  bool fail() noexcept {
    failed_ = true;
    return false;
  }
  const unsigned char* p_;
  std::size_t left_;
  bool failed_ = false;
};

inline std::vector<unsigned char> encode_devices(const std::vector<DeviceDescription>& devices) {
  Writer w;
  w.put(static_cast<std::uint32_t>(devices.size()));
  for (const DeviceDescription& d : devices) {
    w.put(d.kind);
    w.put(d.index);
    w.put(d.module_formats);
    w.put(d.capabilities);
    w.put_text(d.name);
    w.put_text(d.target_json);
    for (const devrt_attribute_value& value : d.attributes) w.put(value);
  }
  return std::move(w.bytes);
}

// False when the bytes are not a device list (truncated, or more devices than bytes).
inline bool decode_devices(const void* data, std::size_t size, std::vector<DeviceDescription>& out) {
  Reader r(data, size);
  std::uint32_t count = 0;
  if (!r.get(count) || count > size / sizeof(devrt_attribute_value)) return false;
  out.resize(count);
  for (DeviceDescription& d : out) {
    r.get(d.kind);
    r.get(d.index);
    r.get(d.module_formats);
    r.get(d.capabilities);
    r.get_text(d.name);
    r.get_text(d.target_json);
    for (devrt_attribute_value& value : d.attributes) {
      r.get(value);
      value.string[DEVRT_ATTRIBUTE_STRING_CAPACITY - 1] = '\0';
    }
    if (r.failed()) return false;
  }
  return true;
}

} // namespace devrt::remote::wire

#endif // DEVRT_SRC_REMOTE_PROTOCOL_HPP
