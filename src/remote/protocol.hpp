// SPDX-License-Identifier: Apache-2.0
// devrt's remote protocol: the commands a client sends devrt-server and the replies it gets, over
// UCX active messages (docs/remote.md, "The protocol"). A small HAL set (allocate, free, write,
// read, copy, streams, events, modules, launch), not the C API call by call. Internal: client
// and server are built from one tree, and the hello refuses any other version.
//
// Every command is one active message on the client's endpoint: a Command header and, for some,
// a payload (bytes to write, a module image, launch arguments). Commands carry a sequence number
// and the server runs each client's commands in that order. Only the calls that must answer
// (allocate, create, load, synchronize, read, query) get a Reply; the others are one-way, and a
// failure of one is kept and reported by the next synchronizing call on its device.
//
// A message that breaks the protocol (a malformed header, a payload its command does not take, an
// unknown command or device, a handle the client does not own, a sequence number out of order)
// ends the connection: the server frees what the client held and serves the others.
#ifndef DEVRT_SRC_REMOTE_PROTOCOL_HPP
#define DEVRT_SRC_REMOTE_PROTOCOL_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <devrt/attribute.hpp>
#include <devrt/backend/backend_abi.h>

namespace devrt::remote::wire {

inline constexpr std::uint32_t kVersion = 2;
// Active message ids: client -> server commands, server -> client replies.
inline constexpr unsigned kCommandMessage = 1;
inline constexpr unsigned kReplyMessage = 2;
// Both sides handle every id a peer can send, up to UCX's largest (set_message_handlers): a
// message on any id but their own ends the connection.
inline constexpr unsigned kHighestMessage = 65535;

enum class Op : std::uint32_t {
  hello = 1,          // a[0] = kVersion; data = the client's nonce (auth::kNonceBytes); reply value[0] =
                      // kHelloKeyed or 0, value[1] = the largest message the server accepts;
                      // data = the exported devices (encode_devices), or when keyed the server's
                      // nonce then its proof (remote/auth.hpp)
  allocate,           // a[0] = bytes, a[1] = alignment; reply value[0] = handle
  free,               // one-way; a[0] = handle
  write,              // one-way; a[0] = handle, a[1] = offset; data = the bytes
  read,               // a[0] = handle, a[1] = offset, a[2] = bytes; reply data = the bytes
  copy,               // one-way; a[0] = source handle, a[1] = its offset, a[2] = destination handle,
                      // a[3] = its offset, a[4] = bytes, a[5] = the source's device
  stream_create,      // reply value[0] = stream
  stream_destroy,     // one-way; a[0] = stream
  stream_synchronize, // Command.stream; reply
  event_create,       // a[0] = 1 for a timed event; reply value[0] = event
  event_destroy,      // one-way; a[0] = event
  event_record,       // one-way; a[0] = event, on Command.stream
  event_synchronize,  // a[0] = event; reply
  event_query,        // a[0] = event; reply value[0] = 1 when complete
  stream_wait_event,  // one-way; a[0] = event, Command.stream waits
  event_elapsed,      // a[0] = start, a[1] = end; reply value[0] = nanoseconds (two's complement)
  module_load,        // a[0] = format, a[1] = option bytes; data = options then image;
                      // reply value[0] = module, value[1] = the instructions its backend
                      // rewrote (Module::rewritten_instructions), text = the build log
  module_unload,      // one-way; a[0] = module
  module_function,    // a[0] = module; data = the name; reply value[0] = function
  launch,             // one-way; a[0] = function, a[1..3] = grid and block (packed_extents),
                      // a[4] = dynamic shared bytes, a[5] = argument count; data = LaunchArg[]
  device_synchronize, // reply
  server_stats,       // reply value[0] = clients, value[1] = allocated bytes, value[2] = allocations
  authenticate,       // data = the client's proof; reply data = the exported devices
  ping,               // a round trip and nothing else: everything sent before it has run
  graph_create,       // a[0] = node count; data = the nodes (GraphNode, each launch's LaunchArg[] after
                      // it); the server captures them into a devrt::Graph; reply value[0] = graph
  graph_launch,       // one-way; a[0] = graph, replayed on Command.stream
  graph_destroy,      // one-way; a[0] = graph
  last = graph_destroy,
};

inline constexpr std::uint64_t kHelloKeyed = 1;
inline constexpr std::size_t kNonceBytes = 32;     // auth::kNonceBytes
inline constexpr std::size_t kProofBytes = 32;     // auth::kProofBytes
inline constexpr std::size_t kMaxNameBytes = 4096; // a kernel's name

// True for the commands that get a reply.
constexpr bool has_reply(Op op) noexcept {
  switch (op) {
  case Op::free:
  case Op::write:
  case Op::copy:
  case Op::stream_destroy:
  case Op::event_destroy:
  case Op::event_record:
  case Op::stream_wait_event:
  case Op::module_unload:
  case Op::launch:
  case Op::graph_launch:
  case Op::graph_destroy: return false;
  default: return true;
  }
}

// True for the commands that run on an exported device (Command.device names it).
constexpr bool names_device(Op op) noexcept { return op != Op::hello && op != Op::authenticate && op != Op::ping; }

struct Command {
  std::uint32_t op = 0;
  std::uint32_t device = 0;   // the server's exported device
  std::uint64_t sequence = 0; // 1, 2, ... per connection
  std::uint64_t stream = 0;   // a stream of the client's, 0: the device's default stream
  std::uint64_t a[6] = {};    // operands, per Op
};

struct Reply {
  std::uint64_t sequence = 0;   // the command's
  std::int32_t code = 0;        // a devrt status code (DEVRT_STATUS_*)
  std::uint32_t text_bytes = 0; // an error message or build log: the first bytes of the data
  std::uint64_t value[3] = {};
};

inline constexpr std::uint64_t kMaxLaunchArgs = 64; // devrt::kMaxKernelArgs
inline constexpr std::uint64_t kMaxGraphNodes = 1u << 16;

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
  std::uint64_t extents[3] = {};    // launches: grid and block (pack_extents)
  std::uint64_t dynamic_shared_bytes = 0;
  std::uint64_t source = 0; // copies: handles and offsets on the command's device, and the size
  std::uint64_t source_offset = 0;
  std::uint64_t destination = 0;
  std::uint64_t destination_offset = 0;
  std::uint64_t bytes = 0;
};

// True when a command of this kind may carry `bytes` of payload: the size its operands and Op's
// comment give, none for the commands that take none. False for an unknown command.
constexpr bool payload_fits(const Command& c, std::uint64_t bytes) noexcept {
  if (c.op == 0 || c.op > static_cast<std::uint32_t>(Op::last)) return false;
  switch (static_cast<Op>(c.op)) {
  case Op::hello: return bytes == kNonceBytes;
  case Op::authenticate: return bytes == kProofBytes;
  case Op::write: return true;
  case Op::module_load: return c.a[1] <= bytes;
  case Op::module_function: return bytes > 0 && bytes <= kMaxNameBytes;
  case Op::launch: return c.a[5] <= kMaxLaunchArgs && bytes == c.a[5] * sizeof(LaunchArg);
  case Op::graph_create:
    return c.a[0] >= 1 && c.a[0] <= kMaxGraphNodes && bytes >= c.a[0] * sizeof(GraphNode) &&
           bytes <= c.a[0] * (sizeof(GraphNode) + kMaxLaunchArgs * sizeof(LaunchArg));
  default: return bytes == 0;
  }
}

// Grid and block, six 32-bit extents, in three operands.
inline void pack_extents(const std::uint32_t grid[3], const std::uint32_t block[3], std::uint64_t* out) noexcept {
  out[0] = grid[0] | std::uint64_t{grid[1]} << 32;
  out[1] = grid[2] | std::uint64_t{block[0]} << 32;
  out[2] = block[1] | std::uint64_t{block[2]} << 32;
}
inline void unpack_extents(const std::uint64_t* in, std::uint32_t grid[3], std::uint32_t block[3]) noexcept {
  grid[0] = static_cast<std::uint32_t>(in[0]);
  grid[1] = static_cast<std::uint32_t>(in[0] >> 32);
  grid[2] = static_cast<std::uint32_t>(in[1]);
  block[0] = static_cast<std::uint32_t>(in[1] >> 32);
  block[1] = static_cast<std::uint32_t>(in[2]);
  block[2] = static_cast<std::uint32_t>(in[2] >> 32);
}

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
