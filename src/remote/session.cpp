// SPDX-License-Identifier: Apache-2.0
#include "remote/session.hpp"

#include <algorithm>
#include <cstring>

#include <devrt/backend/backend.hpp>
#include <devrt/memory_stats.hpp>

namespace devrt::server {

namespace {
constexpr std::size_t kSmallestStaging = std::size_t{1} << 20;
constexpr std::size_t kLargestStaging = std::size_t{128} << 20;
std::mutex staging_mutex;
std::vector<std::vector<unsigned char>> staging_spares; // under staging_mutex; two at most
} // namespace

std::vector<unsigned char> take_staging(std::size_t bytes) {
  std::vector<unsigned char> buffer;
  if (bytes >= kSmallestStaging) {
    std::lock_guard<std::mutex> lock(staging_mutex);
    for (auto it = staging_spares.begin(); it != staging_spares.end(); ++it) {
      if (it->capacity() < bytes) continue;
      buffer = std::move(*it);
      staging_spares.erase(it);
      break;
    }
  }
  // Shrinking keeps the capacity; growing zeroes only the bytes past the buffer's last size.
  buffer.resize(bytes);
  return buffer;
}

void give_staging(std::vector<unsigned char>&& buffer) {
  if (buffer.capacity() < kSmallestStaging || buffer.capacity() > kLargestStaging) return;
  std::lock_guard<std::mutex> lock(staging_mutex);
  if (staging_spares.size() < 2) staging_spares.push_back(std::move(buffer));
}

void CommandRunner::release_all() {
  graphs_.clear();
  functions_.clear();
  modules_.clear();
  events_.clear();
  for (auto& [handle, entry] : streams_) static_cast<void>(entry.stream.synchronize());
  streams_.clear();
  if (!buffers_.empty()) {
    for (const Exported& e : host_.devices()) static_cast<void>(synchronize(e.device));
  }
  buffers_.clear();
  allocated_bytes_ = 0;
  allocated_on_.clear();
}

bool CommandRunner::run(const wire::Command& c, const std::vector<unsigned char>& data) {
  const auto op = static_cast<Op>(c.op);
  Outgoing out;
  out.endpoint = endpoint_;
  out.reply = wire::Reply::for_op(c.op);
  out.reply.sequence = c.sequence;
  Status status = !wire::payload_fits(c, data.size())
                      ? violation("command " + std::to_string(c.op) + " with a payload of " +
                                  std::to_string(data.size()) + " bytes")
                      : dispatch(c, data, out);
  if (!violation_.empty()) {
    out.has_reply = false;
    out.disconnect = "it broke the protocol: " + violation_;
    host_.send(std::move(out));
    return false;
  }
  if (!wire::has_reply(op)) {
    // A one-way command's failure waits for the next synchronizing call on its device.
    if (!status.ok()) deferred_.try_emplace(c.device, std::move(status));
    return true;
  }
  if (!status.ok()) { // the message, then what the command had to say (a build log)
    std::string_view text = status.message();
    out.reply.code = static_cast<std::int32_t>(status.code());
    out.reply.text_bytes = static_cast<std::uint32_t>(text.size());
    out.data.insert(out.data.begin(), text.begin(), text.end());
    // A client refused at the handshake is ended once it has the reason.
    if (stage_ != Stage::ready) out.disconnect = "refused: " + std::string(text);
  }
  const bool goes_on = out.disconnect.empty();
  host_.send(std::move(out));
  return goes_on;
}

Status CommandRunner::violation(std::string why) {
  violation_ = std::move(why);
  return make_error(ErrorCode::invalid_argument, violation_);
}

std::vector<unsigned char> CommandRunner::device_list() const {
  std::vector<wire::DeviceDescription> descriptions;
  for (const Exported& e : host_.devices()) descriptions.push_back(e.description);
  return wire::encode_devices(descriptions);
}

// hello, then authenticate when the server has a key (remote/auth.hpp).
Status CommandRunner::handshake(const wire::Command& c, const Data& data, Outgoing& out) {
  const Options& options = host_.options();
  if (static_cast<Op>(c.op) == Op::hello) {
    if (stage_ != Stage::hello) return violation("a second hello");
    const auto hello = c.request<wire::Hello>();
    if (hello.version != wire::kVersion) {
      stage_ = Stage::authenticate; // ended with the reply
      return make_error(ErrorCode::abi_mismatch, "the client speaks protocol version ", hello.version, ", this server ",
                        wire::kVersion, ": use one devrt release on both sides");
    }
    wire::HelloReply reply{.flags = 0, .max_message = options.limits.message_bytes};
    out.reply.set(reply);
    if (!options.key) return admit(out);
    std::memcpy(client_nonce_.data(), data.data(), client_nonce_.size());
    Result<remote::auth::Nonce> nonce = remote::auth::random_nonce();
    if (!nonce.ok()) return std::move(nonce).status();
    server_nonce_ = *nonce;
    Result<remote::auth::Proof> proof =
        remote::auth::prove(*options.key, remote::auth::Role::server, client_nonce_, server_nonce_);
    if (!proof.ok()) return std::move(proof).status();
    stage_ = Stage::authenticate;
    reply.flags = wire::kHelloKeyed;
    out.reply.set(reply);
    out.data.assign(server_nonce_.begin(), server_nonce_.end());
    out.data.insert(out.data.end(), proof->begin(), proof->end());
    return Status();
  }
  // authenticate
  if (stage_ != Stage::authenticate || !options.key) return violation("authenticate out of turn");
  if (!remote::auth::verify(*options.key, remote::auth::Role::client, client_nonce_, server_nonce_, data.data(),
                            data.size())) {
    return make_error(ErrorCode::permission_denied, "the client did not prove this server's key");
  }
  return admit(out);
}

Status CommandRunner::admit(Outgoing& out) {
  if (!host_.admit()) {
    stage_ = Stage::authenticate; // ended with the reply
    const std::uint64_t most = host_.options().limits.clients;
    return make_error(ErrorCode::permission_denied, "the server serves ", most,
                      " clients at most (--max-clients), all connected");
  }
  stage_ = Stage::ready;
  out.data = device_list();
  return Status();
}

Result<StreamRef> CommandRunner::stream(const wire::Command& c) {
  const Device dev = host_.devices()[c.device].device;
  if (c.stream == 0) {
    default_streams_used_.insert(c.device);
    return current_stream(dev);
  }
  auto it = streams_.find(c.stream);
  if (it == streams_.end() || it->second.device != c.device) {
    return violation("stream " + std::to_string(c.stream) + " is no stream of this client on device " +
                     std::to_string(c.device));
  }
  it->second.used = true;
  return it->second.stream.ref();
}

bool CommandRunner::stream_idle(const wire::Command& c) const {
  if (c.stream == 0) return default_streams_used_.count(c.device) == 0;
  auto it = streams_.find(c.stream);
  return it != streams_.end() && it->second.device == c.device && !it->second.used;
}

unsigned char* CommandRunner::in_place(const wire::Command& c, std::uint64_t allocation, std::uint64_t offset,
                                       std::size_t bytes) const {
  if (stage_ != Stage::ready || !violation_.empty() || c.device >= host_.devices().size()) return nullptr;
  if (deferred_.count(c.device) != 0 || !stream_idle(c)) return nullptr;
  auto it = buffers_.find(allocation);
  if (it == buffers_.end() || it->second.device != c.device) return nullptr;
  const MemorySpan span = it->second.buffer.span();
  if (span.device.kind != DeviceKind::cpu || span.data == nullptr) return nullptr;
  if (offset > span.size || bytes > span.size - offset) return nullptr;
  return static_cast<unsigned char*>(span.data) + offset;
}

void* CommandRunner::write_in_place(const wire::Command& c, std::size_t bytes) const {
  if (static_cast<Op>(c.op) != Op::write) return nullptr;
  const auto write = c.request<wire::Write>();
  return in_place(c, write.allocation, write.offset, bytes);
}

const void* CommandRunner::read_in_place(const wire::Command& c) const {
  if (static_cast<Op>(c.op) != Op::read) return nullptr;
  const auto read = c.request<wire::Read>();
  return in_place(c, read.allocation, read.offset, read.bytes);
}

bool CommandRunner::runs_on_arrival(const wire::Command& c) const {
  if (stage_ != Stage::ready || !violation_.empty()) return false;
  const auto op = static_cast<Op>(c.op);
  if (op == Op::ping) return true;
  // The CPU backend runs a kernel in the caller's thread: never on the UCX thread.
  if (op == Op::launch) {
    return launches_on_arrival_ && c.device < host_.devices().size() &&
           host_.devices()[c.device].device.kind != DeviceKind::cpu;
  }
  if (op != Op::stream_synchronize && op != Op::device_synchronize) return false;
  if (c.device >= host_.devices().size() || default_streams_used_.count(c.device) != 0) return false;
  if (op == Op::stream_synchronize) {
    if (c.stream == 0) return true;
    auto it = streams_.find(c.stream);
    return it != streams_.end() && it->second.device == c.device && !it->second.used;
  }
  for (const auto& [handle, entry] : streams_) {
    if (entry.device == c.device && entry.used) return false;
  }
  return true;
}

void CommandRunner::synchronized(const wire::Command& c) {
  if (static_cast<Op>(c.op) == Op::device_synchronize) {
    for (auto& [handle, entry] : streams_) {
      if (entry.device == c.device) entry.used = false;
    }
    default_streams_used_.erase(c.device);
  } else if (c.stream == 0) {
    default_streams_used_.erase(c.device);
  } else if (auto it = streams_.find(c.stream); it != streams_.end()) {
    it->second.used = false;
  }
}

Status CommandRunner::take_deferred(std::uint32_t device) {
  auto it = deferred_.find(device);
  if (it == deferred_.end()) return Status();
  Status s = std::move(it->second);
  deferred_.erase(it);
  return make_error(s.code(), "an earlier call failed: ", s.message());
}

template <class Map>
Result<typename Map::mapped_type*> CommandRunner::find(Map& map, std::uint64_t handle, std::uint32_t device,
                                                       const char* what) {
  auto it = map.find(handle);
  if (it == map.end() || it->second.device != device) {
    return violation(std::string(what) + " " + std::to_string(handle) + " is no " + what +
                     " of this client on device " + std::to_string(device));
  }
  return &it->second;
}

namespace {
#define SERVER_TRY_ASSIGN(name, expression)                                                                            \
  auto name##_result = (expression);                                                                                   \
  if (!name##_result.ok()) return std::move(name##_result).status();                                                   \
  auto& name = *name##_result;

// permission_denied when a client holding `held` objects of a kind may hold no more.
Status check_count(std::size_t held, std::uint64_t limit, const char* what, const char* option) {
  if (held < limit) return Status();
  return make_error(ErrorCode::permission_denied, "this client holds ", held, " ", what,
                    ", as many as the server allows one client (", option, " ", limit, ")");
}

// Zeroes a new allocation: memory a client is handed never holds another client's bytes, whether
// it came from the Buffer cache, the driver's own reuse or the system (docs/remote.md, "Threat
// model"). Host memory directly; device memory by copies from zeros, on the calling thread's
// stream, finished before the client can use it.
constexpr std::size_t kClearChunk = std::size_t{4} << 20;
Status clear(const Buffer& buffer) {
  const MemorySpan span = buffer.span();
  if (span.device.kind == DeviceKind::cpu && span.data != nullptr) {
    std::memset(span.data, 0, buffer.size());
    return Status();
  }
  static const std::vector<unsigned char> zeros(kClearChunk);
  const StreamRef stream = current_stream(buffer.device());
  for (std::size_t at = 0; at < buffer.size(); at += kClearChunk) {
    const std::size_t bytes = std::min(kClearChunk, buffer.size() - at);
    DEVRT_RETURN_IF_ERROR(copy(host_span(zeros.data(), bytes), 0, span, at, bytes, stream));
  }
  return synchronize(stream);
}

Status check_range(const Allocation& a, std::uint64_t offset, std::uint64_t bytes) {
  if (offset > a.buffer.size() || bytes > a.buffer.size() - offset) {
    return make_error(ErrorCode::out_of_range, "bytes [", offset, ", ", offset, " + ", bytes,
                      ") are outside the allocation of ", a.buffer.size());
  }
  return Status();
}
} // namespace

Status CommandRunner::check_memory(std::uint32_t device, std::uint64_t bytes) const {
  const std::uint64_t limit = host_.options().limits.memory_bytes;
  if (limit != 0 && (bytes > limit || allocated_bytes_ > limit - bytes)) {
    return make_error(ErrorCode::out_of_memory, "allocate(", bytes, " bytes): this client holds ", allocated_bytes_,
                      " bytes of the ", limit, " the server allows one client (--max-client-memory)");
  }
  // By default, and within --max-client-memory too: no more on a device than the device has.
  const Exported& exported = host_.devices()[device];
  auto held = allocated_on_.find(device);
  const std::uint64_t on_device = held == allocated_on_.end() ? 0 : held->second;
  if (exported.memory_bytes != 0 && (bytes > exported.memory_bytes || on_device > exported.memory_bytes - bytes)) {
    return make_error(ErrorCode::out_of_memory, "allocate(", bytes, " bytes): this client holds ", on_device,
                      " bytes on device ", device, " (", exported.description.name, "), whose memory is ",
                      exported.memory_bytes, " bytes: no client may hold more than that");
  }
  return Status();
}

Status CommandRunner::memory_command(const wire::Command& c, Device dev, const std::vector<unsigned char>& data,
                                     Outgoing& out) {
  switch (static_cast<Op>(c.op)) {
  case Op::allocate: {
    const auto r = c.request<wire::Allocate>();
    if (r.bytes == 0) return make_error(ErrorCode::invalid_argument, "allocate: zero bytes");
    DEVRT_RETURN_IF_ERROR(check_memory(c.device, r.bytes));
    SERVER_TRY_ASSIGN(buffer, Buffer::allocate(dev, r.bytes, r.alignment));
    DEVRT_RETURN_IF_ERROR(clear(buffer));
    const std::uint64_t handle = next_handle_++;
    allocated_bytes_ += r.bytes;
    allocated_on_[c.device] += r.bytes;
    buffers_.emplace(handle, Allocation{c.device, std::move(buffer)});
    out.reply.set(wire::Created{handle});
    return Status();
  }
  case Op::free: {
    const auto r = c.request<wire::Free>();
    SERVER_TRY_ASSIGN(a, find(buffers_, r.allocation, c.device, "allocation"));
    allocated_bytes_ -= a->buffer.size();
    allocated_on_[c.device] -= a->buffer.size();
    buffers_.erase(r.allocation);
    return Status();
  }
  case Op::write: {
    const auto r = c.request<wire::Write>();
    SERVER_TRY_ASSIGN(a, find(buffers_, r.allocation, c.device, "allocation"));
    DEVRT_RETURN_IF_ERROR(check_range(*a, r.offset, data.size()));
    SERVER_TRY_ASSIGN(s, stream(c));
    DEVRT_RETURN_IF_ERROR(copy(host_span(data.data(), data.size()), 0, a->buffer.span(), r.offset, data.size(), s));
    // The bytes are this message's: done with them before it goes.
    return synchronize(s);
  }
  case Op::read: {
    const auto r = c.request<wire::Read>();
    SERVER_TRY_ASSIGN(a, find(buffers_, r.allocation, c.device, "allocation"));
    DEVRT_RETURN_IF_ERROR(check_range(*a, r.offset, r.bytes));
    DEVRT_RETURN_IF_ERROR(take_deferred(c.device));
    SERVER_TRY_ASSIGN(s, stream(c));
    out.data = take_staging(r.bytes);
    DEVRT_RETURN_IF_ERROR(copy(a->buffer.span(), r.offset, host_span(out.data.data(), out.data.size()), 0, r.bytes, s));
    return synchronize(s);
  }
  case Op::copy: {
    const auto r = c.request<wire::Copy>();
    SERVER_TRY_ASSIGN(dst, find(buffers_, r.destination, c.device, "allocation"));
    SERVER_TRY_ASSIGN(src, find(buffers_, r.source, r.source_device, "allocation"));
    DEVRT_RETURN_IF_ERROR(check_range(*src, r.source_offset, r.bytes));
    DEVRT_RETURN_IF_ERROR(check_range(*dst, r.destination_offset, r.bytes));
    SERVER_TRY_ASSIGN(s, stream(c));
    Result<Device> runner = copy_device(src->buffer.device(), dev);
    if (runner.ok() && *runner == dev) {
      return copy(src->buffer.span(), r.source_offset, dst->buffer.span(), r.destination_offset, r.bytes, s);
    }
    // The source's device runs it: ordered after the destination's stream, finished before the next command.
    DEVRT_RETURN_IF_ERROR(synchronize(s));
    DEVRT_RETURN_IF_ERROR(copy(src->buffer.span(), r.source_offset, dst->buffer.span(), r.destination_offset, r.bytes));
    return synchronize(src->buffer.device());
  }
  default: return make_error(ErrorCode::internal, "command ", c.op, " is no memory command");
  }
}

Status CommandRunner::stream_command(const wire::Command& c, Device dev, Outgoing& out) {
  switch (static_cast<Op>(c.op)) {
  case Op::stream_create: {
    DEVRT_RETURN_IF_ERROR(
        check_count(streams_.size(), host_.options().limits.streams, "streams", "--max-client-streams"));
    SERVER_TRY_ASSIGN(created, Stream::create(dev));
    const std::uint64_t handle = next_handle_++;
    streams_.emplace(handle, StreamEntry{c.device, std::move(created)});
    out.reply.set(wire::Created{handle});
    return Status();
  }
  case Op::stream_destroy: {
    const auto r = c.request<wire::StreamDestroy>();
    SERVER_TRY_ASSIGN(entry, find(streams_, r.stream, c.device, "stream"));
    static_cast<void>(entry);
    streams_.erase(r.stream);
    return Status();
  }
  case Op::stream_synchronize: {
    SERVER_TRY_ASSIGN(s, stream(c));
    DEVRT_RETURN_IF_ERROR(synchronize(s));
    synchronized(c);
    return take_deferred(c.device);
  }
  case Op::device_synchronize:
    // Everything this client queued on the device: its streams and the default stream (other
    // clients' work is theirs; not every backend can wait for a whole device).
    for (const auto& [handle, entry] : streams_) {
      if (entry.device == c.device) DEVRT_RETURN_IF_ERROR(entry.stream.synchronize());
    }
    DEVRT_RETURN_IF_ERROR(synchronize(current_stream(dev)));
    synchronized(c);
    return take_deferred(c.device);
  default: return make_error(ErrorCode::internal, "command ", c.op, " is no stream command");
  }
}

Status CommandRunner::event_command(const wire::Command& c, Device dev, Outgoing& out) {
  switch (static_cast<Op>(c.op)) {
  case Op::event_create: {
    DEVRT_RETURN_IF_ERROR(check_count(events_.size(), host_.options().limits.events, "events", "--max-client-events"));
    SERVER_TRY_ASSIGN(created, Event::create(dev, EventOptions{c.request<wire::EventCreate>().timed != 0}));
    const std::uint64_t handle = next_handle_++;
    events_.emplace(handle, EventEntry{c.device, std::move(created)});
    out.reply.set(wire::Created{handle});
    return Status();
  }
  case Op::event_destroy: {
    const auto r = c.request<wire::EventDestroy>();
    SERVER_TRY_ASSIGN(entry, find(events_, r.event, c.device, "event"));
    static_cast<void>(entry);
    events_.erase(r.event);
    return Status();
  }
  case Op::event_record: {
    SERVER_TRY_ASSIGN(e, find(events_, c.request<wire::EventRecord>().event, c.device, "event"));
    SERVER_TRY_ASSIGN(s, stream(c));
    return e->event.record(s);
  }
  case Op::event_synchronize: {
    SERVER_TRY_ASSIGN(e, find(events_, c.request<wire::EventSynchronize>().event, c.device, "event"));
    DEVRT_RETURN_IF_ERROR(e->event.synchronize());
    return take_deferred(c.device);
  }
  case Op::event_query: {
    SERVER_TRY_ASSIGN(e, find(events_, c.request<wire::EventQuery>().event, c.device, "event"));
    SERVER_TRY_ASSIGN(done, e->event.query());
    out.reply.set(wire::EventState{done ? 1u : 0u});
    return Status();
  }
  case Op::stream_wait_event: {
    SERVER_TRY_ASSIGN(e, find(events_, c.request<wire::StreamWaitEvent>().event, c.device, "event"));
    SERVER_TRY_ASSIGN(s, stream(c));
    return e->event.wait_on(s);
  }
  case Op::event_elapsed: {
    const auto r = c.request<wire::EventElapsed>();
    SERVER_TRY_ASSIGN(start, find(events_, r.start, c.device, "event"));
    SERVER_TRY_ASSIGN(end, find(events_, r.end, c.device, "event"));
    SERVER_TRY_ASSIGN(ns, Event::elapsed_ns(start->event, end->event));
    out.reply.set(wire::Elapsed{ns});
    return Status();
  }
  default: return make_error(ErrorCode::internal, "command ", c.op, " is no event command");
  }
}

Status CommandRunner::module_command(const wire::Command& c, Device dev, const std::vector<unsigned char>& data,
                                     Outgoing& out) {
  switch (static_cast<Op>(c.op)) {
  case Op::module_load: {
    const auto r = c.request<wire::ModuleLoad>();
    const std::uint32_t format = r.format;
    if (!host_.options().allow_host_code) {
      const Exported& exported = host_.devices()[c.device];
      if (exported.kernels_in_process) {
        return make_error(ErrorCode::unsupported, "module_load: the kernels of ", device_kind_name(dev.kind), ":",
                          dev.id, " (", exported.description.name,
                          ") run as native code inside the server process, so any module on it is host code: the "
                          "server allows it only when started with --key-file and --allow-host-code");
      }
      if (format >= 32 || (kHostCodeFormats & DEVRT_MODULE_FORMAT_BIT(format)) != 0) {
        return make_error(ErrorCode::unsupported,
                          "module_load: ", module_format_name(static_cast<ModuleFormat>(format)),
                          " modules run host code on the server, which was not started with --allow-host-code");
      }
    }
    DEVRT_RETURN_IF_ERROR(
        check_count(modules_.size(), host_.options().limits.modules, "modules", "--max-client-modules"));
    std::string_view options(reinterpret_cast<const char*>(data.data()), r.option_bytes);
    std::span<const std::byte> image(reinterpret_cast<const std::byte*>(data.data()) + r.option_bytes,
                                     data.size() - r.option_bytes);
    // What the server compiles reads none of its files, whoever the client is.
    DEVRT_RETURN_IF_ERROR(check_build_options(options));
    if (format == DEVRT_MODULE_OPENCL_C) {
      DEVRT_RETURN_IF_ERROR(
          check_source_reads_no_files(std::string_view(reinterpret_cast<const char*>(image.data()), image.size())));
    }
    std::string log;
    Result<Module> module = Module::load(dev, static_cast<ModuleFormat>(format), image, options, &log);
    if (!module.ok()) {
      out.data.assign(log.begin(), log.end());
      return std::move(module).status();
    }
    Result<std::uint32_t> rewritten = module->rewritten_instructions();
    const std::uint64_t handle = next_handle_++;
    modules_.emplace(handle, ModuleEntry{c.device, std::move(module).value()});
    out.reply.set(wire::ModuleLoaded{handle, rewritten.ok() ? *rewritten : 0});
    out.reply.text_bytes = static_cast<std::uint32_t>(log.size());
    out.data.assign(log.begin(), log.end());
    return Status();
  }
  case Op::module_unload: {
    const std::uint64_t module = c.request<wire::ModuleUnload>().module;
    SERVER_TRY_ASSIGN(entry, find(modules_, module, c.device, "module"));
    static_cast<void>(entry);
    std::erase_if(functions_, [&](const auto& f) { return f.second.module == module; });
    modules_.erase(module);
    return Status();
  }
  case Op::module_function: {
    const std::uint64_t module = c.request<wire::ModuleFunction>().module;
    SERVER_TRY_ASSIGN(m, find(modules_, module, c.device, "module"));
    std::string name(data.begin(), data.end());
    // One handle per function of a module, however often it is asked for.
    for (const auto& [handle, f] : functions_) {
      if (f.module == module && f.name == name) {
        out.reply.set(wire::Created{handle});
        return Status();
      }
    }
    SERVER_TRY_ASSIGN(function, m->module.function(name));
    const std::uint64_t handle = next_handle_++;
    functions_.emplace(handle, FunctionEntry{c.device, module, function, std::move(name)});
    out.reply.set(wire::Created{handle});
    return Status();
  }
  default: return make_error(ErrorCode::internal, "command ", c.op, " is no module command");
  }
}

Status CommandRunner::launch_command(const wire::Command& c, Device dev, const std::vector<unsigned char>& data) {
  static_assert(wire::kMaxLaunchArgs == kMaxKernelArgs);
  SERVER_TRY_ASSIGN(s, stream(c));
  // payload_fits checked the argument count against the payload.
  const auto r = c.request<wire::Launch>();
  return launch(c.device, dev, r.function, r.grid, r.block, r.dynamic_shared_bytes, data.data(), r.argument_count, s);
}

Status CommandRunner::launch(std::uint32_t device, Device dev, std::uint64_t function, const std::uint32_t grid[3],
                             const std::uint32_t block[3], std::uint64_t shared_bytes, const unsigned char* arg_bytes,
                             std::uint64_t count, StreamRef stream) {
  SERVER_TRY_ASSIGN(f, find(functions_, function, device, "function"));
  std::vector<KernelArg> args;
  args.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    wire::LaunchArg arg;
    std::memcpy(&arg, arg_bytes + i * sizeof arg, sizeof arg);
    if (arg.kind == DEVRT_ARG_BUFFER) {
      SERVER_TRY_ASSIGN(a, find(buffers_, arg.handle, device, "allocation"));
      DEVRT_RETURN_IF_ERROR(check_range(*a, arg.offset, arg.size));
      args.emplace_back(MemorySpan{dev, a->buffer.data(), arg.offset + arg.size}, arg.offset);
    } else if (arg.kind == DEVRT_ARG_SCALAR) {
      args.push_back(
          KernelArg::scalar(DataType{static_cast<DataTypeCode>(arg.type_code), arg.type_bits, 1}, arg.value));
    } else {
      return violation("launch(" + f->name + "): argument " + std::to_string(i) + " has kind " +
                       std::to_string(arg.kind));
    }
  }
  LaunchConfig config;
  config.grid = Extent3{grid[0], grid[1], grid[2]};
  config.block = Extent3{block[0], block[1], block[2]};
  config.dynamic_shared_bytes = shared_bytes;
  return f->function.launch(config, args, stream);
}

Status CommandRunner::issue_nodes(const wire::Command& c, Device dev, const Data& data, StreamRef stream) {
  std::size_t at = 0;
  const std::uint64_t node_count = c.request<wire::GraphCreate>().node_count;
  for (std::uint64_t i = 0; i < node_count; ++i) {
    wire::GraphNode node;
    if (data.size() - at < sizeof node) return violation("graph_create: node " + std::to_string(i) + " cut short");
    std::memcpy(&node, data.data() + at, sizeof node);
    at += sizeof node;
    if (node.type == DEVRT_GRAPH_NODE_LAUNCH) {
      const std::uint64_t arg_bytes = std::uint64_t{node.argument_count} * sizeof(wire::LaunchArg);
      if (node.argument_count > wire::kMaxLaunchArgs || data.size() - at < arg_bytes) {
        return violation("graph_create: node " + std::to_string(i) + "'s arguments cut short");
      }
      DEVRT_RETURN_IF_ERROR(launch(c.device, dev, node.function, node.grid, node.block, node.dynamic_shared_bytes,
                                   data.data() + at, node.argument_count, stream));
      at += arg_bytes;
    } else if (node.type == DEVRT_GRAPH_NODE_COPY) {
      SERVER_TRY_ASSIGN(src, find(buffers_, node.source, c.device, "allocation"));
      SERVER_TRY_ASSIGN(dst, find(buffers_, node.destination, c.device, "allocation"));
      DEVRT_RETURN_IF_ERROR(check_range(*src, node.source_offset, node.bytes));
      DEVRT_RETURN_IF_ERROR(check_range(*dst, node.destination_offset, node.bytes));
      DEVRT_RETURN_IF_ERROR(copy(src->buffer.span(), node.source_offset, dst->buffer.span(), node.destination_offset,
                                 node.bytes, stream));
    } else {
      return violation("graph_create: node " + std::to_string(i) + " has type " + std::to_string(node.type));
    }
  }
  if (at != data.size()) return violation("graph_create: bytes after the last node");
  return Status();
}

Status CommandRunner::graph_command(const wire::Command& c, Device dev, const Data& data, Outgoing& out) {
  switch (static_cast<Op>(c.op)) {
  case Op::graph_create: {
    DEVRT_RETURN_IF_ERROR(check_count(graphs_.size(), host_.options().limits.graphs, "graphs", "--max-client-graphs"));
    // Captured on a stream of its own, then replayable on any of the client's streams.
    SERVER_TRY_ASSIGN(capturing, Stream::create(dev));
    if (Status began = begin_capture(capturing.ref()); !began.ok()) { // another client captures on the device
      return make_error(ErrorCode::unsupported, "graph_create: ", began.message());
    }
    Status issued = issue_nodes(c, dev, data, capturing.ref());
    Result<Graph> graph = end_capture(capturing.ref());
    DEVRT_RETURN_IF_ERROR(issued);
    if (!graph.ok()) return std::move(graph).status();
    const std::uint64_t handle = next_handle_++;
    graphs_.emplace(handle, GraphEntry{c.device, std::move(graph).value()});
    out.reply.set(wire::Created{handle});
    return Status();
  }
  case Op::graph_launch: {
    SERVER_TRY_ASSIGN(g, find(graphs_, c.request<wire::GraphLaunch>().graph, c.device, "graph"));
    SERVER_TRY_ASSIGN(s, stream(c));
    return g->graph.launch(s);
  }
  case Op::graph_destroy: {
    const std::uint64_t graph = c.request<wire::GraphDestroy>().graph;
    SERVER_TRY_ASSIGN(g, find(graphs_, graph, c.device, "graph"));
    static_cast<void>(g);
    graphs_.erase(graph);
    return Status();
  }
  default: return make_error(ErrorCode::internal, "command ", c.op, " is no graph command");
  }
}

Status CommandRunner::dispatch(const wire::Command& c, const std::vector<unsigned char>& data, Outgoing& out) {
  const auto op = static_cast<Op>(c.op);
  if (op == Op::hello || op == Op::authenticate) return handshake(c, data, out);
  if (stage_ != Stage::ready) return violation("command " + std::to_string(c.op) + " before the handshake");
  if (op == Op::ping) return Status();
  if (c.device >= host_.devices().size()) {
    return violation("no exported device " + std::to_string(c.device) + " (the server exports " +
                     std::to_string(host_.devices().size()) + ")");
  }
  const Device dev = host_.devices()[c.device].device;
  switch (op) {
  case Op::allocate:
  case Op::free:
  case Op::write:
  case Op::read:
  case Op::copy: return memory_command(c, dev, data, out);
  case Op::stream_create:
  case Op::stream_destroy:
  case Op::stream_synchronize:
  case Op::device_synchronize: return stream_command(c, dev, out);
  case Op::event_create:
  case Op::event_destroy:
  case Op::event_record:
  case Op::event_synchronize:
  case Op::event_query:
  case Op::stream_wait_event:
  case Op::event_elapsed: return event_command(c, dev, out);
  case Op::module_load:
  case Op::module_unload:
  case Op::module_function: return module_command(c, dev, data, out);
  case Op::launch: return launch_command(c, dev, data);
  case Op::graph_create:
  case Op::graph_launch:
  case Op::graph_destroy: return graph_command(c, dev, data, out);
  case Op::server_stats: {
    SERVER_TRY_ASSIGN(stats, memory_stats(dev));
    out.reply.set(wire::Stats{host_.clients(), stats.total.allocated_bytes, stats.total.allocations});
    return Status();
  }
  default: return violation("unknown command " + std::to_string(c.op));
  }
}

} // namespace devrt::server
