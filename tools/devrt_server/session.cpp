// SPDX-License-Identifier: Apache-2.0
#include "session.hpp"

#include <cstring>

#include <devrt/backend/backend.hpp>
#include <devrt/memory_stats.hpp>

namespace devrt::server {

void Client::run() {
  for (;;) {
    std::unique_ptr<Incoming> next;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] {
        auto it = queue_.find(next_sequence_);
        return closing_ || (it != queue_.end() && it->second->ready);
      });
      if (closing_) break;
      auto it = queue_.find(next_sequence_);
      next = std::move(it->second);
      queue_.erase(it);
      ++next_sequence_;
    }
    execute(*next);
  }
  // Frees everything the client held, in dependency order; the devices stay open for others.
  functions_.clear();
  modules_.clear();
  events_.clear();
  for (auto& [handle, entry] : streams_) static_cast<void>(entry.stream.synchronize());
  streams_.clear();
  for (const Exported& e : host_.devices()) static_cast<void>(synchronize(e.device));
  buffers_.clear();
  finished_.store(true, std::memory_order_release);
}

void Client::execute(Incoming& incoming) {
  const wire::Command& c = incoming.command;
  const auto op = static_cast<Op>(c.op);
  Outgoing out;
  out.endpoint = endpoint_;
  out.reply.sequence = c.sequence;
  Status status = dispatch(c, incoming.data, out);
  if (!wire::has_reply(op)) {
    // A one-way command's failure waits for the next synchronizing call on its device.
    if (!status.ok()) deferred_.try_emplace(c.device, std::move(status));
    return;
  }
  if (!status.ok()) { // the message, then what the command had to say (a build log)
    std::string_view text = status.message();
    out.reply.code = static_cast<std::int32_t>(status.code());
    out.reply.text_bytes = static_cast<std::uint32_t>(text.size());
    out.data.insert(out.data.begin(), text.begin(), text.end());
  }
  host_.send(std::move(out));
}

Result<Device> Client::device(std::uint32_t index) const {
  if (index >= host_.devices().size()) {
    return make_error(ErrorCode::invalid_argument, "no exported device ", index, " (the server exports ",
                      host_.devices().size(), ")");
  }
  return host_.devices()[index].device;
}

Result<StreamRef> Client::stream(const wire::Command& c) const {
  Result<Device> d = device(c.device);
  if (!d.ok()) return std::move(d).status();
  if (c.stream == 0) return current_stream(*d);
  auto it = streams_.find(c.stream);
  if (it == streams_.end() || it->second.device != c.device) {
    return make_error(ErrorCode::invalid_argument, "stream ", c.stream, " is no stream of this client on ", *d);
  }
  return it->second.stream.ref();
}

Status Client::take_deferred(std::uint32_t device) {
  auto it = deferred_.find(device);
  if (it == deferred_.end()) return Status();
  Status s = std::move(it->second);
  deferred_.erase(it);
  return make_error(s.code(), "an earlier call failed: ", s.message());
}

namespace {
// The named object of the client, or invalid_argument naming what was asked for.
template <class Map>
auto find_object(Map& map, std::uint64_t handle, std::uint32_t device, const char* what)
    -> Result<typename Map::mapped_type*> {
  auto it = map.find(handle);
  if (it == map.end() || it->second.device != device) {
    return make_error(ErrorCode::invalid_argument, what, " ", handle, " is no ", what, " of this client on device ",
                      device);
  }
  return &it->second;
}

#define SERVER_TRY_ASSIGN(name, expression)                                                                            \
  auto name##_result = (expression);                                                                                   \
  if (!name##_result.ok()) return std::move(name##_result).status();                                                   \
  auto& name = *name##_result;

Status check_range(const Allocation& a, std::uint64_t offset, std::uint64_t bytes) {
  if (offset > a.buffer.size() || bytes > a.buffer.size() - offset) {
    return make_error(ErrorCode::out_of_range, "bytes [", offset, ", ", offset, " + ", bytes,
                      ") are outside the allocation of ", a.buffer.size());
  }
  return Status();
}
} // namespace

Status Client::memory_command(const wire::Command& c, Device dev, const std::vector<unsigned char>& data,
                              Outgoing& out) {
  switch (static_cast<Op>(c.op)) {
  case Op::allocate: {
    if (c.a[0] == 0) return make_error(ErrorCode::invalid_argument, "allocate: zero bytes");
    SERVER_TRY_ASSIGN(buffer, Buffer::allocate(dev, c.a[0], c.a[1]));
    const std::uint64_t handle = next_handle_++;
    buffers_.emplace(handle, Allocation{c.device, std::move(buffer)});
    out.reply.value[0] = handle;
    return Status();
  }
  case Op::free:
    if (buffers_.erase(c.a[0]) == 0) return make_error(ErrorCode::invalid_argument, "free: no allocation ", c.a[0]);
    return Status();
  case Op::write: {
    SERVER_TRY_ASSIGN(a, find_object(buffers_, c.a[0], c.device, "allocation"));
    DEVRT_RETURN_IF_ERROR(check_range(*a, c.a[1], data.size()));
    SERVER_TRY_ASSIGN(s, stream(c));
    DEVRT_RETURN_IF_ERROR(copy(host_span(data.data(), data.size()), 0, a->buffer.span(), c.a[1], data.size(), s));
    // The bytes are this message's: done with them before it goes.
    return synchronize(s);
  }
  case Op::read: {
    SERVER_TRY_ASSIGN(a, find_object(buffers_, c.a[0], c.device, "allocation"));
    DEVRT_RETURN_IF_ERROR(check_range(*a, c.a[1], c.a[2]));
    DEVRT_RETURN_IF_ERROR(take_deferred(c.device));
    SERVER_TRY_ASSIGN(s, stream(c));
    out.data.resize(c.a[2]);
    DEVRT_RETURN_IF_ERROR(copy(a->buffer.span(), c.a[1], host_span(out.data.data(), out.data.size()), 0, c.a[2], s));
    return synchronize(s);
  }
  case Op::copy: {
    SERVER_TRY_ASSIGN(dst, find_object(buffers_, c.a[2], c.device, "allocation"));
    SERVER_TRY_ASSIGN(src, find_object(buffers_, c.a[0], static_cast<std::uint32_t>(c.a[5]), "allocation"));
    DEVRT_RETURN_IF_ERROR(check_range(*src, c.a[1], c.a[4]));
    DEVRT_RETURN_IF_ERROR(check_range(*dst, c.a[3], c.a[4]));
    SERVER_TRY_ASSIGN(s, stream(c));
    Result<Device> runner = copy_device(src->buffer.device(), dev);
    if (runner.ok() && *runner == dev) return copy(src->buffer.span(), c.a[1], dst->buffer.span(), c.a[3], c.a[4], s);
    // The source's device runs it: ordered after the destination's stream, finished before the next command.
    DEVRT_RETURN_IF_ERROR(synchronize(s));
    DEVRT_RETURN_IF_ERROR(copy(src->buffer.span(), c.a[1], dst->buffer.span(), c.a[3], c.a[4]));
    return synchronize(src->buffer.device());
  }
  default: return make_error(ErrorCode::internal, "command ", c.op, " is no memory command");
  }
}

Status Client::stream_command(const wire::Command& c, Device dev, Outgoing& out) {
  switch (static_cast<Op>(c.op)) {
  case Op::stream_create: {
    SERVER_TRY_ASSIGN(created, Stream::create(dev));
    const std::uint64_t handle = next_handle_++;
    streams_.emplace(handle, StreamEntry{c.device, std::move(created)});
    out.reply.value[0] = handle;
    return Status();
  }
  case Op::stream_destroy: {
    SERVER_TRY_ASSIGN(entry, find_object(streams_, c.a[0], c.device, "stream"));
    static_cast<void>(entry);
    streams_.erase(c.a[0]);
    return Status();
  }
  case Op::stream_synchronize: {
    SERVER_TRY_ASSIGN(s, stream(c));
    DEVRT_RETURN_IF_ERROR(synchronize(s));
    return take_deferred(c.device);
  }
  case Op::device_synchronize:
    // Everything this client queued on the device: its streams and the default stream (other
    // clients' work is theirs; not every backend can wait for a whole device).
    for (const auto& [handle, entry] : streams_) {
      if (entry.device == c.device) DEVRT_RETURN_IF_ERROR(entry.stream.synchronize());
    }
    DEVRT_RETURN_IF_ERROR(synchronize(current_stream(dev)));
    return take_deferred(c.device);
  default: return make_error(ErrorCode::internal, "command ", c.op, " is no stream command");
  }
}

Status Client::event_command(const wire::Command& c, Device dev, Outgoing& out) {
  switch (static_cast<Op>(c.op)) {
  case Op::event_create: {
    SERVER_TRY_ASSIGN(created, Event::create(dev, EventOptions{c.a[0] != 0}));
    const std::uint64_t handle = next_handle_++;
    events_.emplace(handle, EventEntry{c.device, std::move(created)});
    out.reply.value[0] = handle;
    return Status();
  }
  case Op::event_destroy: {
    SERVER_TRY_ASSIGN(entry, find_object(events_, c.a[0], c.device, "event"));
    static_cast<void>(entry);
    events_.erase(c.a[0]);
    return Status();
  }
  case Op::event_record: {
    SERVER_TRY_ASSIGN(e, find_object(events_, c.a[0], c.device, "event"));
    SERVER_TRY_ASSIGN(s, stream(c));
    return e->event.record(s);
  }
  case Op::event_synchronize: {
    SERVER_TRY_ASSIGN(e, find_object(events_, c.a[0], c.device, "event"));
    DEVRT_RETURN_IF_ERROR(e->event.synchronize());
    return take_deferred(c.device);
  }
  case Op::event_query: {
    SERVER_TRY_ASSIGN(e, find_object(events_, c.a[0], c.device, "event"));
    SERVER_TRY_ASSIGN(done, e->event.query());
    out.reply.value[0] = done ? 1 : 0;
    return Status();
  }
  case Op::stream_wait_event: {
    SERVER_TRY_ASSIGN(e, find_object(events_, c.a[0], c.device, "event"));
    SERVER_TRY_ASSIGN(s, stream(c));
    return e->event.wait_on(s);
  }
  case Op::event_elapsed: {
    SERVER_TRY_ASSIGN(start, find_object(events_, c.a[0], c.device, "event"));
    SERVER_TRY_ASSIGN(end, find_object(events_, c.a[1], c.device, "event"));
    SERVER_TRY_ASSIGN(ns, Event::elapsed_ns(start->event, end->event));
    out.reply.value[0] = static_cast<std::uint64_t>(ns);
    return Status();
  }
  default: return make_error(ErrorCode::internal, "command ", c.op, " is no event command");
  }
}

Status Client::module_command(const wire::Command& c, Device dev, const std::vector<unsigned char>& data,
                              Outgoing& out) {
  switch (static_cast<Op>(c.op)) {
  case Op::module_load: {
    const auto format = static_cast<std::uint32_t>(c.a[0]);
    if (format >= 32 || (kHostCodeFormats & DEVRT_MODULE_FORMAT_BIT(format)) != 0) {
      if (!host_.options().allow_host_code) {
        return make_error(ErrorCode::unsupported,
                          "module_load: ", module_format_name(static_cast<ModuleFormat>(format)),
                          " modules run host code on the server, which was not started with --allow-host-code");
      }
    }
    if (c.a[1] > data.size()) return make_error(ErrorCode::invalid_argument, "module_load: options past the message");
    std::string_view options(reinterpret_cast<const char*>(data.data()), c.a[1]);
    std::span<const std::byte> image(reinterpret_cast<const std::byte*>(data.data()) + c.a[1], data.size() - c.a[1]);
    std::string log;
    Result<Module> module = Module::load(dev, static_cast<ModuleFormat>(format), image, options, &log);
    if (!module.ok()) {
      out.data.assign(log.begin(), log.end());
      return std::move(module).status();
    }
    const std::uint64_t handle = next_handle_++;
    modules_.emplace(handle, ModuleEntry{c.device, std::move(module).value()});
    out.reply.value[0] = handle;
    out.reply.text_bytes = static_cast<std::uint32_t>(log.size());
    out.data.assign(log.begin(), log.end());
    return Status();
  }
  case Op::module_unload: {
    SERVER_TRY_ASSIGN(entry, find_object(modules_, c.a[0], c.device, "module"));
    static_cast<void>(entry);
    std::erase_if(functions_, [&](const auto& f) { return f.second.module == c.a[0]; });
    modules_.erase(c.a[0]);
    return Status();
  }
  case Op::module_function: {
    SERVER_TRY_ASSIGN(m, find_object(modules_, c.a[0], c.device, "module"));
    std::string name(data.begin(), data.end());
    SERVER_TRY_ASSIGN(function, m->module.function(name));
    const std::uint64_t handle = next_handle_++;
    functions_.emplace(handle, FunctionEntry{c.device, c.a[0], function, std::move(name)});
    out.reply.value[0] = handle;
    return Status();
  }
  default: return make_error(ErrorCode::internal, "command ", c.op, " is no module command");
  }
}

Status Client::launch_command(const wire::Command& c, Device dev, const std::vector<unsigned char>& data) {
  SERVER_TRY_ASSIGN(f, find_object(functions_, c.a[0], c.device, "function"));
  const std::uint64_t count = c.a[5];
  if (count > kMaxKernelArgs || data.size() != count * sizeof(wire::LaunchArg)) {
    return make_error(ErrorCode::invalid_argument, "launch(", f->name, "): ", count, " arguments in ", data.size(),
                      " bytes");
  }
  std::vector<KernelArg> args;
  args.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    wire::LaunchArg arg;
    std::memcpy(&arg, data.data() + i * sizeof arg, sizeof arg);
    if (arg.kind == DEVRT_ARG_BUFFER) {
      SERVER_TRY_ASSIGN(a, find_object(buffers_, arg.handle, c.device, "allocation"));
      DEVRT_RETURN_IF_ERROR(check_range(*a, arg.offset, arg.size));
      args.emplace_back(MemorySpan{dev, a->buffer.data(), arg.offset + arg.size}, arg.offset);
    } else if (arg.kind == DEVRT_ARG_SCALAR) {
      args.push_back(
          KernelArg::scalar(DataType{static_cast<DataTypeCode>(arg.type_code), arg.type_bits, 1}, arg.value));
    } else {
      return make_error(ErrorCode::invalid_argument, "launch(", f->name, "): argument ", i, " has kind ", arg.kind);
    }
  }
  LaunchConfig config;
  std::uint32_t grid[3], block[3];
  wire::unpack_extents(c.a + 1, grid, block);
  config.grid = Extent3{grid[0], grid[1], grid[2]};
  config.block = Extent3{block[0], block[1], block[2]};
  config.dynamic_shared_bytes = c.a[4];
  SERVER_TRY_ASSIGN(s, stream(c));
  return f->function.launch(config, args, s);
}

Status Client::dispatch(const wire::Command& c, const std::vector<unsigned char>& data, Outgoing& out) {
  const auto op = static_cast<Op>(c.op);
  if (op == Op::hello) {
    if (c.a[0] != wire::kVersion) {
      return make_error(ErrorCode::abi_mismatch, "the client speaks protocol version ", c.a[0], ", this server ",
                        wire::kVersion, ": use one devrt release on both sides");
    }
    std::vector<wire::DeviceDescription> descriptions;
    for (const Exported& e : host_.devices()) descriptions.push_back(e.description);
    out.data = wire::encode_devices(descriptions);
    return Status();
  }
  SERVER_TRY_ASSIGN(dev, device(c.device));
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
  case Op::server_stats: {
    SERVER_TRY_ASSIGN(stats, memory_stats(dev));
    out.reply.value[0] = host_.clients();
    out.reply.value[1] = stats.total.allocated_bytes;
    out.reply.value[2] = stats.total.allocations;
    return Status();
  }
  default: return make_error(ErrorCode::invalid_argument, "unknown command ", c.op);
  }
}

} // namespace devrt::server
