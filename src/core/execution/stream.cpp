// SPDX-License-Identifier: Apache-2.0
// Streams and events (devrt/stream.hpp): creation, synchronisation, recording, waiting and
// elapsed time, each asking a capture first (capture_hooks.hpp).
#include <devrt/backend/registry.hpp>
#include <devrt/stream.hpp>

#include <devrt/backend/detail/mutex.hpp>
#include <devrt/log.hpp>

#include <new>
#include <optional>

#include "core/execution/capture_hooks.hpp"

namespace devrt {
namespace {

#if !DEVRT_BARE_METAL
// Per-thread current streams, no cap: a table of kDirectIds handles per device kind, made at the
// kind's first current stream on the thread, found by kind and id; devices with larger ids in a
// list. `set` counts the non-default entries, so that a thread that never set one (the common
// case) answers with one load. Freed when the thread exits.
constexpr std::int32_t kDirectIds = 64;
struct CurrentStreams {
  struct Other {
    StreamRef stream;
    Other* next;
  };
  void** by_kind[kMaxDeviceKinds] = {};
  Other* others = nullptr;
  std::size_t set = 0;
  CurrentStreams() noexcept = default;
  CurrentStreams(const CurrentStreams&) = delete;
  CurrentStreams& operator=(const CurrentStreams&) = delete;
  ~CurrentStreams() {
    for (void** handles : by_kind) delete[] handles;
    while (Other* other = others) {
      others = other->next;
      delete other;
    }
  }
};
#else
constexpr int kMaxCurrentStreams = 16;

// Per-thread current streams: a small fixed table, no heap (firmware).
struct CurrentStreams {
  StreamRef entries[kMaxCurrentStreams];
  int count = 0;
};
#endif
DEVRT_DETAIL_THREAD_LOCAL CurrentStreams t_current;

Status mismatch(const char* call, Device expected, Device got) noexcept {
  return make_error(ErrorCode::invalid_argument, call, ": stream of ", got, " used with ", expected);
}

} // namespace

Result<Stream> Stream::create(Device device) noexcept { return create(Registry::global(), device); }

Result<Stream> Stream::create(const Registry& registry, Device device) noexcept {
  Result<BackendRef> backend = registry.get(device.kind);
  if (!backend.ok()) return std::move(backend).status();
  Result<void*> handle = backend->stream_create(device.id);
  if (!handle.ok()) return std::move(handle).status();
  Stream stream;
  stream.backend_ = backend->table();
  stream.ref_ = StreamRef{device, *handle};
  return stream;
}

Status Stream::synchronize() const noexcept {
  if (!backend_) return Status(ErrorCode::invalid_argument, "Stream::synchronize: empty stream");
  if (detail::captures_active()) [[unlikely]] {
    if (std::optional<Status> refused = detail::g_capture_hooks.wait("synchronize", ref_, false, nullptr))
      return *refused;
  }
  return BackendRef(backend_).stream_synchronize(ref_.device.id, ref_.handle);
}

void Stream::reset() noexcept {
  if (backend_ && ref_.handle != nullptr) {
    if (detail::captures_active()) [[unlikely]]
      detail::g_capture_hooks.stream_destroyed(ref_);
    if (current_stream(ref_.device) == ref_) static_cast<void>(set_current_stream(StreamRef{ref_.device, nullptr}));
    Status status = BackendRef(backend_).stream_destroy(ref_.device.id, ref_.handle);
    if (!status.ok()) DEVRT_LOG(error, "Stream: ", status.message());
  }
  backend_ = nullptr;
  ref_ = StreamRef{};
}

Status synchronize(StreamRef stream) noexcept {
  Result<BackendRef> backend = Registry::global().get(stream.device.kind);
  if (!backend.ok()) return std::move(backend).status();
  if (detail::captures_active()) [[unlikely]] {
    if (std::optional<Status> refused = detail::g_capture_hooks.wait("synchronize", stream, false, nullptr))
      return *refused;
  }
  return backend->stream_synchronize(stream.device.id, stream.handle);
}

Status synchronize(Device device) noexcept {
  Result<BackendRef> backend = Registry::global().get(device.kind);
  if (!backend.ok()) return std::move(backend).status();
  if (detail::captures_active()) [[unlikely]] {
    if (std::optional<Status> refused =
            detail::g_capture_hooks.wait("synchronize(device)", StreamRef{device, nullptr}, true, nullptr))
      return *refused;
  }
  return backend->device_synchronize(device.id);
}

Status sync_stream_from_to(StreamRef from, StreamRef to) noexcept {
  if (from.device != to.device) return mismatch("sync_stream_from_to", from.device, to.device);
  Result<BackendRef> backend = backend_for(from.device);
  if (!backend.ok()) return std::move(backend).status();
  if (from.handle == to.handle) return Status();
  if (!backend->has_events()) return backend->stream_synchronize(from.device.id, from.handle);
  Result<void*> event = backend->event_create(from.device.id);
  if (!event.ok()) return std::move(event).status();
  Status status = backend->event_record(from.device.id, *event, from.handle);
  if (status.ok()) status = backend->stream_wait_event(to.device.id, to.handle, *event);
  Status destroyed = backend->event_destroy(from.device.id, *event);
  return status.ok() ? destroyed : status;
}

#if !DEVRT_BARE_METAL
namespace {
bool valid_kind(Device device) noexcept {
  auto kind = static_cast<std::uint32_t>(device.kind);
  return kind < static_cast<std::uint32_t>(kMaxDeviceKinds) && device.id >= 0;
}
} // namespace

StreamRef current_stream(Device device) noexcept {
  const CurrentStreams& table = t_current;
  if (table.set == 0 || !valid_kind(device)) [[likely]]
    return StreamRef{device, nullptr};
  if (device.id < kDirectIds) {
    void* const* handles = table.by_kind[static_cast<std::int32_t>(device.kind)];
    return StreamRef{device, handles != nullptr ? handles[device.id] : nullptr};
  }
  for (const CurrentStreams::Other* other = table.others; other != nullptr; other = other->next) {
    if (other->stream.device == device) return other->stream;
  }
  return StreamRef{device, nullptr};
}

Status set_current_stream(StreamRef stream) noexcept {
  if (!valid_kind(stream.device)) {
    return make_error(ErrorCode::invalid_argument, "set_current_stream(", stream.device, "): no such device");
  }
  CurrentStreams& table = t_current;
  if (stream.device.id < kDirectIds) {
    void**& handles = table.by_kind[static_cast<std::int32_t>(stream.device.kind)];
    if (handles == nullptr) {
      if (stream.handle == nullptr) return Status();
      handles = new (std::nothrow) void*[kDirectIds]();
      if (handles == nullptr) {
        return make_error(ErrorCode::out_of_memory, "set_current_stream(", stream.device, "): no host memory");
      }
    }
    void*& slot = handles[stream.device.id];
    table.set = table.set - (slot != nullptr ? 1 : 0) + (stream.handle != nullptr ? 1 : 0);
    slot = stream.handle;
    return Status();
  }
  CurrentStreams::Other** link = &table.others;
  while (*link != nullptr && (*link)->stream.device != stream.device) link = &(*link)->next;
  if (CurrentStreams::Other* other = *link) {
    if (stream.handle != nullptr) {
      other->stream = stream;
      return Status();
    }
    *link = other->next;
    delete other;
    --table.set;
    return Status();
  }
  if (stream.handle == nullptr) return Status();
  auto* other = new (std::nothrow) CurrentStreams::Other{stream, table.others};
  if (other == nullptr)
    return make_error(ErrorCode::out_of_memory, "set_current_stream(", stream.device, "): no host memory");
  table.others = other;
  ++table.set;
  return Status();
}
#else
StreamRef current_stream(Device device) noexcept {
  for (int i = 0; i < t_current.count; ++i) {
    if (t_current.entries[i].device == device) return t_current.entries[i];
  }
  return StreamRef{device, nullptr};
}

Status set_current_stream(StreamRef stream) noexcept {
  CurrentStreams& table = t_current;
  for (int i = 0; i < table.count; ++i) {
    if (table.entries[i].device != stream.device) continue;
    if (stream.handle != nullptr) {
      table.entries[i] = stream;
    } else {
      table.entries[i] = table.entries[--table.count];
    }
    return Status();
  }
  if (stream.handle == nullptr) return Status();
  if (table.count == kMaxCurrentStreams) {
    return make_error(ErrorCode::out_of_range, "set_current_stream(", stream.device, "): this thread already has ",
                      kMaxCurrentStreams, " devices with a non-default current stream (a firmware build's most)");
  }
  table.entries[table.count++] = stream;
  return Status();
}
#endif

// ---- Event -----------------------------------------------------------------------------------

Result<Event> Event::create(Device device, EventOptions options) noexcept {
  Result<BackendRef> backend = Registry::global().get(device.kind);
  if (!backend.ok()) return std::move(backend).status();
  Result<void*> handle = options.timing ? backend->event_create_timed(device.id) : backend->event_create(device.id);
  if (!handle.ok()) return std::move(handle).status();
  Event event;
  event.backend_ = backend->table();
  event.device_ = device;
  event.handle_ = *handle;
  event.timed_ = options.timing;
  return event;
}

Result<std::int64_t> Event::elapsed_ns(const Event& start, const Event& end) noexcept {
  if (!start.backend_ || !end.backend_) {
    return Status(ErrorCode::invalid_argument, "Event::elapsed_ns: an empty event");
  }
  if (start.device_ != end.device_) {
    return make_error(ErrorCode::invalid_argument, "Event::elapsed_ns: the events belong to ", start.device_, " and ",
                      end.device_);
  }
  if (!start.timed_ || !end.timed_) {
    return make_error(ErrorCode::invalid_argument, "Event::elapsed_ns(", start.device_, "): the ",
                      !start.timed_ ? "start" : "end", " event was created without EventOptions::timing");
  }
  return BackendRef(start.backend_).event_elapsed(start.device_.id, start.handle_, end.handle_);
}

Status Event::record(StreamRef stream) const noexcept {
  if (!backend_) return Status(ErrorCode::invalid_argument, "Event::record: empty event");
  if (stream.device != device_) return mismatch("Event::record", device_, stream.device);
  if (detail::captures_active()) [[unlikely]] {
    if (std::optional<Status> captured = detail::g_capture_hooks.event_record(handle_, stream)) return *captured;
  }
  return BackendRef(backend_).event_record(device_.id, handle_, stream.handle);
}

Status Event::synchronize() const noexcept {
  if (!backend_) return Status(ErrorCode::invalid_argument, "Event::synchronize: empty event");
  if (detail::captures_active()) [[unlikely]] {
    if (std::optional<Status> refused =
            detail::g_capture_hooks.wait("Event::synchronize", StreamRef{device_, nullptr}, false, handle_))
      return *refused;
  }
  return BackendRef(backend_).event_synchronize(device_.id, handle_);
}

Result<bool> Event::query() const noexcept {
  if (!backend_) return Status(ErrorCode::invalid_argument, "Event::query: empty event");
  return BackendRef(backend_).event_query(device_.id, handle_);
}

Status Event::wait_on(StreamRef stream) const noexcept {
  if (!backend_) return Status(ErrorCode::invalid_argument, "Event::wait_on: empty event");
  if (stream.device != device_) return mismatch("Event::wait_on", device_, stream.device);
  if (detail::captures_active()) [[unlikely]] {
    if (std::optional<Status> captured = detail::g_capture_hooks.event_wait(handle_, stream)) return *captured;
  }
  return BackendRef(backend_).stream_wait_event(device_.id, stream.handle, handle_);
}

void Event::reset() noexcept {
  if (backend_ && handle_ != nullptr) {
    Status status = BackendRef(backend_).event_destroy(device_.id, handle_);
    if (!status.ok()) DEVRT_LOG(error, "Event: ", status.message());
  }
  backend_ = nullptr;
  handle_ = nullptr;
  timed_ = false;
}

} // namespace devrt
