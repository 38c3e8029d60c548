// SPDX-License-Identifier: Apache-2.0
// BackendRef: C++ calls over one backend table, each error naming backend, device and call.
#include <devrt/backend/registry.hpp>

#include <devrt/backend/detail/module_checks.hpp>
#include <devrt/config.hpp>
#include <devrt/log.hpp>
#include <devrt/module.hpp>

#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <utility>

#include "core/devices/device_record.hpp"

namespace devrt {
namespace {

// A device in messages: "opencl:0"; a backend whose name is not its device kind's name also
// shows the device, "example (ext_dev:0)", so that messages always carry devrt::to_string(device).
struct DeviceLabel {
  const devrt_backend_table* table;
  std::int32_t id;
};
void append_part(detail::MessageBuilder& m, const DeviceLabel& label) noexcept {
  std::string_view kind = device_kind_name(static_cast<DeviceKind>(label.table->device_kind));
  m.append(label.table->name);
  if (kind != label.table->name) {
    m.append(" (");
    m.append(kind);
  }
  m.append(":");
  m.append_signed(label.id);
  if (kind != label.table->name) m.append(")");
}

// The error buffer of one table call: accepts a handed-over message (devrt/backend/backend_abi.h) and
// frees one that no error took.
class ErrorBuffer {
public:
  ErrorBuffer() noexcept {
    err_.message[0] = '\0';
    err_.message[1] = DEVRT_ERROR_ACCEPTS_HANDOVER;
  }
  ErrorBuffer(const ErrorBuffer&) = delete;
  ErrorBuffer& operator=(const ErrorBuffer&) = delete;
  ~ErrorBuffer() { take_handed(); }

  devrt_error* get() noexcept { return &err_; }

  // What the backend said (empty for nothing); valid while this buffer lives.
  std::string_view reason() noexcept {
    take_handed();
    if (!handed_.ok()) return handed_.message();
    return std::string_view(err_.message, detail::bounded_length(err_.message, DEVRT_ERROR_MESSAGE_CAPACITY));
  }

private:
  // Owns a handed-over message, if the backend left one (freed with handed_).
  void take_handed() noexcept {
    if (err_.message[0] != '\0' || err_.message[1] != DEVRT_ERROR_HANDED_OVER) return;
    char* message = nullptr;
    std::char_traits<char>::copy(reinterpret_cast<char*>(&message), err_.message + DEVRT_ERROR_HANDOVER_OFFSET,
                                 sizeof message);
    handed_ = detail::StatusAccess::adopt(ErrorCode::internal, message);
    err_.message[1] = '\0';
  }

  devrt_error err_;
  Status handed_;
};

// "<backend>:<id> <call>: <reason>", with the backend's own reason when it gave one.
[[gnu::cold, gnu::noinline]] Status backend_error(const devrt_backend_table* table, std::int32_t id, const char* call,
                                                  std::int32_t code, ErrorBuffer& err) noexcept {
  ErrorCode error = static_cast<ErrorCode>(code);
  if (code <= 0 || code > DEVRT_STATUS_LAST) {
    return make_error(ErrorCode::internal, table->name, " ", call, ": backend returned unknown status ", code);
  }
  if constexpr (!DEVRT_ERROR_MESSAGES) return make_error(error); // the code alone (-Dlogging=false)
  detail::MessageBuilder m;
  if (id >= 0) {
    append_part(m, DeviceLabel{table, id});
  } else {
    m.append(table->name);
  }
  m.append(" ");
  m.append(call);
  m.append(": ");
  std::string_view reason = err.reason();
  if (reason.empty()) reason = error_code_name(error);
#if !DEVRT_BARE_METAL
  if (m.view().size() + reason.size() >= detail::MessageBuilder::kCapacity) {
    // A long reason (a build log) is kept whole, as the backend gave it. A bare-metal backend has
    // no build logs: the bounded builder keeps what fits, and no std::string is linked.
    std::string whole(m.view());
    whole += reason;
    return Status(error, whole);
  }
#endif
  m.append(reason);
  return Status(error, m.view());
}

// Calls one table function with a fresh error buffer and turns its status into a Status.
template <class Fn, class... Args>
Status invoke(const devrt_backend_table* table, std::int32_t id, const char* call, Fn fn, Args... args) noexcept {
  ErrorBuffer err;
  std::int32_t code = fn(args..., err.get());
  if (code == 0) return Status();
  return backend_error(table, id, call, code, err);
}

Status unsupported_events(const devrt_backend_table* table, std::int32_t id, const char* call) noexcept {
  return make_error(ErrorCode::unsupported, DeviceLabel{table, id}, " ", call, ": the ", table->name,
                    " backend has no events");
}

Status unsupported_modules(const devrt_backend_table* table, std::int32_t id, const char* call) noexcept {
  return make_error(ErrorCode::unsupported, DeviceLabel{table, id}, " ", call, ": the ", table->name,
                    " backend has no kernel modules");
}

} // namespace

// Declares `name`, the device object of this backend's device `id`: the open record's (two loads),
// else opened now; returns the error from the enclosing function when it cannot be.
#define DEVRT_BACKEND_DEVICE(name, id)                                                                                 \
  const devrt_backend_device* name = detail::find_backend_device(*this, id);                                           \
  if (name == nullptr) [[unlikely]] {                                                                                  \
    Result<const devrt_backend_device*> name##_opened = detail::open_backend_device(*this, id);                        \
    if (!name##_opened.ok()) return std::move(name##_opened).status();                                                 \
    name = *name##_opened;                                                                                             \
  }

// Counts the object a call is about to make on `name` (declared by DEVRT_BACKEND_DEVICE) in its
// record, so that the device stays open for it; when the record closed meanwhile, the device is
// opened again. `counted` below uncounts it if the call fails. Firmware counts nothing.
#if !DEVRT_BARE_METAL
#define DEVRT_COUNT_OBJECT(name, id)                                                                                   \
  if (!detail::count_object_on(*this, id, name)) [[unlikely]] {                                                        \
    Result<const devrt_backend_device*> name##_reopened = detail::open_for_object(*this, id);                          \
    if (!name##_reopened.ok()) return std::move(name##_reopened).status();                                             \
    name = *name##_reopened;                                                                                           \
  }
#else
#define DEVRT_COUNT_OBJECT(name, id)
#endif

namespace {
// The result of a call that made an object counted by open_for_object: uncounted when it failed.
template <class T>
T counted(BackendRef backend, std::int32_t id, T result) noexcept {
  if (!result.ok()) [[unlikely]]
    detail::object_destroyed(backend, id);
  return result;
}
// The answer of a call that destroyed a counted object: uncounted whatever the answer (the handle
// is no longer the application's either way).
Status uncounted(BackendRef backend, std::int32_t id, Status status) noexcept {
  detail::object_destroyed(backend, id);
  return status;
}
} // namespace

// ---- BackendRef ------------------------------------------------------------------------------

Status BackendRef::availability() const noexcept {
  return invoke(table_, -1, "availability", table_->availability, table_->context);
}

Result<std::int32_t> BackendRef::device_count() const noexcept {
  std::int32_t count = 0;
  DEVRT_RETURN_IF_ERROR(invoke(table_, -1, "device_count", table_->device_count, table_->context, &count));
  return count;
}

namespace {
[[gnu::cold, gnu::noinline]] Status device_error(const devrt_backend_table* table, std::int32_t id, std::int32_t code,
                                                 std::int32_t count, ErrorBuffer& err) noexcept {
  if (code != 0) return backend_error(table, id, "device_count", code, err);
  if (count == 0) { // an unavailable backend: say why rather than "no device"
    ErrorBuffer reason;
    std::int32_t unavailable = table->availability(table->context, reason.get());
    if (unavailable != 0) return backend_error(table, id, "availability", unavailable, reason);
  }
  return make_error(ErrorCode::invalid_argument, "no device ", DeviceLabel{table, id}, " (the ", table->name,
                    " backend has ", count, count == 1 ? " device)" : " devices)");
}
} // namespace

Status BackendRef::check_device(std::int32_t id) const noexcept {
#if !DEVRT_BARE_METAL
  // A device the core has opened exists: no call into the backend.
  if (detail::DeviceRecord* record = detail::find_device_record(Device{kind(), id})) {
    if (record->backend() == *this) [[likely]]
      return Status();
  }
#endif
  std::int32_t count = 0;
  ErrorBuffer err;
  std::int32_t code = table_->device_count(table_->context, &count, err.get());
  if (code == 0 && id >= 0 && id < count) [[likely]]
    return Status();
  return device_error(table_, id, code, count, err);
}

Result<AttributeValue> BackendRef::attribute(std::int32_t id, Attribute attribute) const noexcept {
  auto index = static_cast<std::int32_t>(attribute);
  if (index < 0 || index >= kAttributeCount) {
    return make_error(ErrorCode::invalid_argument, DeviceLabel{table_, id}, " get_attribute: unknown attribute ",
                      index);
  }
  DEVRT_BACKEND_DEVICE(device, id);
  devrt_attribute_value value;
  value.type = DEVRT_VALUE_NONE;
  DEVRT_RETURN_IF_ERROR(invoke(table_, id, "get_attribute", table_->get_attribute, device, index, &value));
  switch (value.type) {
  case DEVRT_VALUE_NONE: return AttributeValue();
  case DEVRT_VALUE_BOOL: return AttributeValue(value.ints[0] != 0);
  case DEVRT_VALUE_INT: return AttributeValue(value.ints[0]);
  case DEVRT_VALUE_STRING:
    value.string[DEVRT_ATTRIBUTE_STRING_CAPACITY - 1] = '\0';
    return AttributeValue(std::string(value.string));
  case DEVRT_VALUE_DIM3: return AttributeValue(Dim3{value.ints[0], value.ints[1], value.ints[2]});
  default:
    return make_error(ErrorCode::internal, DeviceLabel{table_, id}, " get_attribute(", attribute_name(attribute),
                      "): backend returned unknown value type ", value.type);
  }
}

Result<std::string> BackendRef::detect_target(std::int32_t id) const noexcept {
  if (!has_target_detection()) {
    return make_error(ErrorCode::unsupported, DeviceLabel{table_, id}, " detect_target: the ", table_->name,
                      " backend cannot describe its devices as targets");
  }
  DEVRT_RETURN_IF_ERROR(availability());
  DEVRT_BACKEND_DEVICE(device, id);
  std::string json(1024, '\0');
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::size_t needed = 0;
    ErrorBuffer err;
    std::int32_t code = table_->detect_target(device, json.data(), json.size(), &needed, err.get());
    if (code == 0) {
      json.resize(detail::bounded_length(json.data(), json.size()));
      return json;
    }
    if (code != static_cast<std::int32_t>(ErrorCode::out_of_range) || needed <= json.size() || attempt == 1) {
      return backend_error(table_, id, "detect_target", code, err);
    }
    json.assign(needed, '\0');
  }
  return make_error(ErrorCode::internal, DeviceLabel{table_, id}, " detect_target: unreachable");
}

Result<void*> BackendRef::allocate(std::int32_t id, std::size_t nbytes, std::size_t alignment) const noexcept {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > (std::size_t{1} << 20)) {
    return make_error(ErrorCode::invalid_argument, DeviceLabel{table_, id}, " allocate(", nbytes, " bytes, align ",
                      alignment, "): alignment must be a power of two no larger than 1048576");
  }
  DEVRT_BACKEND_DEVICE(device, id);
  if (nbytes == 0) return static_cast<void*>(nullptr);
  if (nbytes > static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max())) {
    return make_error(ErrorCode::out_of_memory, DeviceLabel{table_, id}, " allocate(", nbytes, " bytes, align ",
                      alignment, "): larger than any allocation can be");
  }
  DEVRT_COUNT_OBJECT(device, id);
  void* ptr = nullptr;
  ErrorBuffer err;
  std::int32_t code = table_->allocate(device, nbytes, alignment, &ptr, err.get());
  if (code != 0) {
    detail::object_destroyed(*this, id);
    detail::MessageBuilder call;
    detail::append_parts(call, "allocate(", nbytes, " bytes, align ", alignment, ")");
    return backend_error(table_, id, call.c_str(), code, err);
  }
  if (ptr == nullptr) {
    detail::object_destroyed(*this, id);
    return make_error(ErrorCode::internal, DeviceLabel{table_, id}, " allocate(", nbytes,
                      " bytes): backend returned null without an error");
  }
  return ptr;
}

Status BackendRef::free(std::int32_t id, void* ptr) const noexcept {
  if (ptr == nullptr) return Status();
  DEVRT_BACKEND_DEVICE(device, id);
  return uncounted(*this, id, invoke(table_, id, "free", table_->free, device, ptr));
}

Status BackendRef::copy(std::int32_t id, std::int32_t src_id, std::int32_t dst_id,
                        devrt_copy_desc& desc) const noexcept {
  const std::int32_t own = table_->device_kind;
  desc.src_device = nullptr;
  desc.dst_device = nullptr;
  if (desc.src_kind == own) {
    DEVRT_BACKEND_DEVICE(src, src_id);
    desc.src_device = src;
  }
  if (desc.dst_kind == own) {
    DEVRT_BACKEND_DEVICE(dst, dst_id);
    desc.dst_device = dst;
  }
  return invoke(table_, id, "copy", table_->copy, table_->context, &desc);
}

Status BackendRef::device_synchronize(std::int32_t id) const noexcept {
  DEVRT_BACKEND_DEVICE(device, id);

  if (has_capability(DEVRT_CAP_SYNCHRONOUS)) return Status();
  if (!has_device_synchronize()) {
    return make_error(ErrorCode::unsupported, DeviceLabel{table_, id}, " device_synchronize: the ", table_->name,
                      " backend cannot wait for all of a device's streams; synchronize each stream instead");
  }
  return invoke(table_, id, "device_synchronize", table_->device_synchronize, device);
}

Result<void*> BackendRef::stream_create(std::int32_t id) const noexcept {
  DEVRT_BACKEND_DEVICE(device, id);
  DEVRT_COUNT_OBJECT(device, id);
  void* stream = nullptr;
  DEVRT_RETURN_IF_ERROR(
      counted(*this, id, invoke(table_, id, "stream_create", table_->stream_create, device, &stream)));
  return stream;
}

Status BackendRef::stream_destroy(std::int32_t id, void* stream) const noexcept {
  if (stream == nullptr) return Status();
  DEVRT_BACKEND_DEVICE(device, id);
  return uncounted(*this, id, invoke(table_, id, "stream_destroy", table_->stream_destroy, device, stream));
}

Status BackendRef::stream_synchronize(std::int32_t id, void* stream) const noexcept {
  DEVRT_BACKEND_DEVICE(device, id);
  return invoke(table_, id, "stream_synchronize", table_->stream_synchronize, device, stream);
}

Result<void*> BackendRef::event_create(std::int32_t id) const noexcept {
  if (!has_events()) return unsupported_events(table_, id, "event_create");
  DEVRT_BACKEND_DEVICE(device, id);
  DEVRT_COUNT_OBJECT(device, id);
  void* event = nullptr;
  DEVRT_RETURN_IF_ERROR(counted(*this, id, invoke(table_, id, "event_create", table_->event_create, device, &event)));
  return event;
}

Status BackendRef::event_destroy(std::int32_t id, void* event) const noexcept {
  if (!has_events()) return unsupported_events(table_, id, "event_destroy");
  if (event == nullptr) return Status();
  DEVRT_BACKEND_DEVICE(device, id);
  return uncounted(*this, id, invoke(table_, id, "event_destroy", table_->event_destroy, device, event));
}

Status BackendRef::event_record(std::int32_t id, void* event, void* stream) const noexcept {
  if (!has_events()) return unsupported_events(table_, id, "event_record");
  DEVRT_BACKEND_DEVICE(device, id);
  return invoke(table_, id, "event_record", table_->event_record, device, event, stream);
}

Status BackendRef::event_synchronize(std::int32_t id, void* event) const noexcept {
  if (!has_events()) return unsupported_events(table_, id, "event_synchronize");
  DEVRT_BACKEND_DEVICE(device, id);
  return invoke(table_, id, "event_synchronize", table_->event_synchronize, device, event);
}

Result<bool> BackendRef::event_query(std::int32_t id, void* event) const noexcept {
  if (!has_events()) return unsupported_events(table_, id, "event_query");
  DEVRT_BACKEND_DEVICE(device, id);
  std::int32_t complete = 0;
  DEVRT_RETURN_IF_ERROR(invoke(table_, id, "event_query", table_->event_query, device, event, &complete));
  return complete != 0;
}

Result<void*> BackendRef::event_create_timed(std::int32_t id) const noexcept {
  if (!has_event_timing()) {
    return make_error(ErrorCode::unsupported, DeviceLabel{table_, id}, " event_create_timed: the ", table_->name,
                      " backend cannot time events");
  }
  DEVRT_BACKEND_DEVICE(device, id);
  DEVRT_COUNT_OBJECT(device, id);
  void* event = nullptr;
  DEVRT_RETURN_IF_ERROR(
      counted(*this, id, invoke(table_, id, "event_create_timed", table_->event_create_timed, device, &event)));
  return event;
}

Result<std::int64_t> BackendRef::event_elapsed(std::int32_t id, void* start, void* end) const noexcept {
  if (!has_event_timing()) {
    return make_error(ErrorCode::unsupported, DeviceLabel{table_, id}, " event_elapsed: the ", table_->name,
                      " backend cannot time events");
  }
  DEVRT_BACKEND_DEVICE(device, id);
  std::int64_t ns = 0;
  DEVRT_RETURN_IF_ERROR(invoke(table_, id, "event_elapsed", table_->event_elapsed, device, start, end, &ns));
  return ns;
}

Result<void*> BackendRef::graph_create(std::int32_t id, void* stream,
                                       std::span<const devrt_graph_node> nodes) const noexcept {
  if (!has_graphs()) {
    return make_error(ErrorCode::unsupported, DeviceLabel{table_, id}, " graph_create: the ", table_->name,
                      " backend has no graphs of its own");
  }
  DEVRT_BACKEND_DEVICE(device, id);
  DEVRT_COUNT_OBJECT(device, id);
  void* graph = nullptr;
  DEVRT_RETURN_IF_ERROR(counted(
      *this, id,
      invoke(table_, id, "graph_create", table_->graph_create, device, stream, nodes.data(), nodes.size(), &graph)));
  return graph;
}

Status BackendRef::graph_launch(std::int32_t id, void* graph, void* stream) const noexcept {
  DEVRT_BACKEND_DEVICE(device, id);
  return invoke(table_, id, "graph_launch", table_->graph_launch, device, graph, stream);
}

Status BackendRef::graph_destroy(std::int32_t id, void* graph) const noexcept {
  DEVRT_BACKEND_DEVICE(device, id);
  return uncounted(*this, id, invoke(table_, id, "graph_destroy", table_->graph_destroy, device, graph));
}

Status BackendRef::stream_wait_event(std::int32_t id, void* stream, void* event) const noexcept {
  if (!has_events()) return unsupported_events(table_, id, "stream_wait_event");
  DEVRT_BACKEND_DEVICE(device, id);
  return invoke(table_, id, "stream_wait_event", table_->stream_wait_event, device, stream, event);
}

// ---- Kernel modules --------------------------------------------------------------------------

Result<std::uint32_t> BackendRef::device_module_formats(std::int32_t id) const noexcept {
  if (!has_modules()) return module_formats();
  DEVRT_BACKEND_DEVICE(device, id);
  if (!DEVRT_BACKEND_TABLE_HAS(table_, device_module_formats)) return module_formats();
  std::uint32_t formats = 0;
  DEVRT_RETURN_IF_ERROR(invoke(table_, id, "device_module_formats", table_->device_module_formats, device, &formats));
  return formats & module_formats();
}

Result<void*> BackendRef::module_load(std::int32_t id, std::int32_t format, const void* data, std::size_t size,
                                      const char* options, std::string* log) const noexcept {
  if (!has_modules()) return unsupported_modules(table_, id, "module_load");
  DEVRT_BACKEND_DEVICE(device, id);
  std::uint32_t formats = module_formats();
#if !DEVRT_BARE_METAL // devices that differ (remote) need an operating system
  if (DEVRT_BACKEND_TABLE_HAS(table_, device_module_formats)) [[unlikely]] { // on the device already open
    std::uint32_t own = 0;
    DEVRT_RETURN_IF_ERROR(invoke(table_, id, "device_module_formats", table_->device_module_formats, device, &own));
    formats &= own;
  }
#endif
  DEVRT_RETURN_IF_ERROR(
      detail::check_module_format(table_->name, Device{kind(), id}, formats, static_cast<ModuleFormat>(format)));
  DEVRT_COUNT_OBJECT(device, id);
#if DEVRT_BARE_METAL
  // No backend of a bare-metal build writes a build log (kernel tables are not compiled): a short
  // buffer on the stack for one, and no heap.
  char text[256] = {};
  constexpr std::size_t kLogCapacity = sizeof text;
#else
  // Big enough for any build log a person reads; longer ones are cut.
  constexpr std::size_t kLogCapacity = 64 * 1024;
  std::string text(kLogCapacity, '\0');
#endif
  void* module = nullptr;
  ErrorBuffer err;
  std::int32_t code = table_->module_load(device, format, data, size, options != nullptr ? options : "", &module,
                                          std::data(text), kLogCapacity, err.get());
  std::string_view log_text(std::data(text), detail::bounded_length(std::data(text), kLogCapacity));
#if DEVRT_BARE_METAL
  if (log != nullptr) log->clear(); // no log, and no std::string growth code in the image
#else
  if (log != nullptr) log->assign(log_text.data(), log_text.size());
#endif
  if (code == 0 && module != nullptr) return module;
  detail::object_destroyed(*this, id);
  if (code == 0) {
    return make_error(ErrorCode::internal, DeviceLabel{table_, id}, " module_load: backend returned no module");
  }
  detail::MessageBuilder call;
  detail::append_parts(call, "module_load(", module_format_name(static_cast<ModuleFormat>(format)), ", ", size,
                       " bytes)");
  Status status = backend_error(table_, id, call.c_str(), code, err);
#if DEVRT_BARE_METAL
  return status;
#else
  if (log_text.empty()) return status;
  // The log can be long: it goes after the short message, outside the bounded builder.
  std::string message(status.message());
  message += "\n--- build log ---\n";
  message += log_text;
  return Status(status.code(), message);
#endif
}

Status BackendRef::module_unload(std::int32_t id, void* module) const noexcept {
  if (!has_modules()) return unsupported_modules(table_, id, "module_unload");
  if (module == nullptr) return Status();
  DEVRT_BACKEND_DEVICE(device, id);
  return uncounted(*this, id, invoke(table_, id, "module_unload", table_->module_unload, device, module));
}

Result<void*> BackendRef::module_function(std::int32_t id, void* module, const char* name) const noexcept {
  if (!has_modules()) return unsupported_modules(table_, id, "module_function");
  DEVRT_BACKEND_DEVICE(device, id);
  void* function = nullptr;
  ErrorBuffer err;
  std::int32_t code = table_->module_function(device, module, name, &function, err.get());
  if (code != 0) {
    detail::MessageBuilder call;
    detail::append_parts(call, "function(\"", name, "\")");
    return backend_error(table_, id, call.c_str(), code, err);
  }
  if (function == nullptr) {
    return make_error(ErrorCode::internal, DeviceLabel{table_, id}, " function(\"", name,
                      "\"): backend returned no function");
  }
  return function;
}

Status BackendRef::module_binary(std::int32_t id, void* module, std::int32_t* format, std::string* out) const noexcept {
  if (!DEVRT_BACKEND_TABLE_HAS(table_, module_binary)) {
    return make_error(ErrorCode::unsupported, DeviceLabel{table_, id}, " module_binary: the ", table_->name,
                      " backend cannot return a loaded module's bytes");
  }
  DEVRT_BACKEND_DEVICE(device, id);
  out->resize(64 * 1024);
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::size_t needed = 0;
    ErrorBuffer err;
    std::int32_t code = table_->module_binary(device, module, format, out->data(), out->size(), &needed, err.get());
    if (code == 0) {
      out->resize(needed);
      return Status();
    }
    if (code != static_cast<std::int32_t>(ErrorCode::out_of_range) || needed <= out->size() || attempt == 1) {
      return backend_error(table_, id, "module_binary", code, err);
    }
    out->resize(needed);
  }
  return make_error(ErrorCode::internal, DeviceLabel{table_, id}, " module_binary: unreachable");
}

Result<std::uint32_t> BackendRef::module_rewrites(std::int32_t id, void* module) const noexcept {
  if (!DEVRT_BACKEND_TABLE_HAS(table_, module_rewrites)) return std::uint32_t{0};
  DEVRT_BACKEND_DEVICE(device, id);
  std::uint32_t count = 0;
  DEVRT_RETURN_IF_ERROR(invoke(table_, id, "module_rewrites", table_->module_rewrites, device, module, &count));
  return count;
}

Status BackendRef::launch(std::int32_t id, void* function, const devrt_launch_desc& desc,
                          std::string_view kernel) const noexcept {
  DEVRT_BACKEND_DEVICE(device, id);
  ErrorBuffer err;
  std::int32_t code = table_->launch(device, function, &desc, err.get());
  if (code == 0) [[likely]]
    return Status();
  detail::MessageBuilder call;
  detail::append_parts(call, "launch(", kernel, ", grid ", desc.grid[0], "x", desc.grid[1], "x", desc.grid[2],
                       ", block ", desc.block[0], "x", desc.block[1], "x", desc.block[2]);
  if (desc.dynamic_shared_bytes != 0) detail::append_parts(call, ", ", desc.dynamic_shared_bytes, " B shared");
  call.append(")");
  return backend_error(table_, id, call.c_str(), code, err);
}

// ---- memory scopes ----------------------------------------------------------------------------

Result<ScopeLimits> BackendRef::scope_limits(std::int32_t id, MemoryScope scope) const noexcept {
  DEVRT_BACKEND_DEVICE(device, id);

  if (scope == MemoryScope::global) return ScopeLimits{};
  if (!DEVRT_BACKEND_TABLE_HAS(table_, scope_limits)) {
    return make_error(ErrorCode::unsupported, DeviceLabel{table_, id}, " has no memory scope '", to_string(scope),
                      "': the ", table_->name, " backend has only \"global\" memory");
  }
  devrt_scope_limits limits{};
  DEVRT_RETURN_IF_ERROR(
      invoke(table_, id, "scope_limits", table_->scope_limits, device, static_cast<std::int32_t>(scope), &limits));
  return ScopeLimits{
      scope, limits.max_width, limits.max_height, limits.max_bytes, limits.half_texels != 0, limits.max_layers};
}

Result<void*> BackendRef::scope_allocate(std::int32_t id, MemoryScope scope, std::size_t nbytes,
                                         std::size_t alignment) const noexcept {
  if (scope == MemoryScope::global) return allocate(id, nbytes, alignment);
  DEVRT_BACKEND_DEVICE(device, id);

  if (!DEVRT_BACKEND_TABLE_HAS(table_, scope_allocate) || is_texture_scope(scope)) {
    Result<ScopeLimits> limits = scope_limits(id, scope); // names scope and device when there is none
    if (!limits.ok()) return std::move(limits).status();
    return make_error(ErrorCode::unsupported, DeviceLabel{table_, id}, " scope_allocate: '", to_string(scope),
                      "' is not flat memory", is_texture_scope(scope) ? " (a texture: Tensor::empty makes one)" : "");
  }
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > (std::size_t{1} << 20)) {
    return make_error(ErrorCode::invalid_argument, DeviceLabel{table_, id}, " scope_allocate(", to_string(scope), ", ",
                      nbytes, " bytes, align ", alignment,
                      "): alignment must be a power of two no larger than 1048576");
  }
  if (nbytes == 0) return static_cast<void*>(nullptr);
  DEVRT_COUNT_OBJECT(device, id);
  void* ptr = nullptr;
  DEVRT_RETURN_IF_ERROR(counted(*this, id,
                                invoke(table_, id, "scope_allocate", table_->scope_allocate, device,
                                       static_cast<std::int32_t>(scope), nbytes, alignment, &ptr)));
  return ptr;
}

Result<void*> BackendRef::texture_allocate(std::int32_t id, const devrt_texture_desc& desc) const noexcept {
  DEVRT_BACKEND_DEVICE(device, id);

  if (!has_textures()) {
    return make_error(ErrorCode::unsupported, DeviceLabel{table_, id}, " texture_allocate: the ", table_->name,
                      " backend has no textures");
  }
  DEVRT_COUNT_OBJECT(device, id);
  void* texture = nullptr;
  DEVRT_RETURN_IF_ERROR(
      counted(*this, id, invoke(table_, id, "texture_allocate", table_->texture_allocate, device, &desc, &texture)));
  return texture;
}

Status BackendRef::texture_free(std::int32_t id, void* texture) const noexcept {
  DEVRT_BACKEND_DEVICE(device, id);

  if (!has_textures()) {
    return make_error(ErrorCode::unsupported, DeviceLabel{table_, id}, " texture_free: the ", table_->name,
                      " backend has no textures");
  }
  return uncounted(*this, id, invoke(table_, id, "texture_free", table_->texture_free, device, texture));
}

Result<void*> BackendRef::texture_view(std::int32_t id, devrt_texture_view_desc& desc) const noexcept {
  DEVRT_BACKEND_DEVICE(device, id);

  if (!has_textures() || !DEVRT_BACKEND_TABLE_HAS(table_, texture_view)) {
    return make_error(ErrorCode::unsupported, DeviceLabel{table_, id}, " texture_view: the ", table_->name,
                      " backend makes no textures over buffers");
  }
  DEVRT_COUNT_OBJECT(device, id);
  void* texture = nullptr;
  DEVRT_RETURN_IF_ERROR(
      counted(*this, id, invoke(table_, id, "texture_view", table_->texture_view, device, &desc, &texture)));
  return texture;
}

Status BackendRef::texture_copy(std::int32_t id, devrt_texture_copy_desc& desc) const noexcept {
  DEVRT_BACKEND_DEVICE(device, id);
  desc.device = device;
  if (!has_textures()) {
    return make_error(ErrorCode::unsupported, DeviceLabel{table_, id}, " texture_copy: the ", table_->name,
                      " backend has no textures");
  }
  return invoke(table_, id, "texture_copy", table_->texture_copy, table_->context, &desc);
}

} // namespace devrt

#undef DEVRT_BACKEND_DEVICE
#undef DEVRT_COUNT_OBJECT
