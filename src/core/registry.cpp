// SPDX-License-Identifier: Apache-2.0
#include <devrt/registry.hpp>

#include <devrt/backend.hpp>
#include <devrt/config.hpp>
#include <devrt/log.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "core/builtin_backends.hpp"
#include "core/plugin_loader.hpp"
#include <devrt/detail/host_copy.hpp>

#if DEVRT_WITH_CPU
extern "C" const devrt_backend_table devrt_backend_table_cpu;
#endif

namespace devrt {
namespace {

constinit Registry g_registry;

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

// "<backend>:<id> <call>: <reason>", with the backend's own reason when it gave one.
[[gnu::cold, gnu::noinline]] Status backend_error(const devrt_backend_table* table, std::int32_t id, const char* call,
                                                  std::int32_t code, const devrt_error& err) noexcept {
  ErrorCode error = static_cast<ErrorCode>(code);
  if (code <= 0 || code > DEVRT_STATUS_LAST) {
    return make_error(ErrorCode::internal, table->name, " ", call, ": backend returned unknown status ", code);
  }
  detail::MessageBuilder m;
  if (id >= 0) {
    append_part(m, DeviceLabel{table, id});
  } else {
    m.append(table->name);
  }
  m.append(" ");
  m.append(call);
  m.append(": ");
  if (err.message[0] != '\0') {
    m.append(std::string_view(err.message, detail::bounded_length(err.message, DEVRT_ERROR_MESSAGE_CAPACITY)));
  } else {
    m.append(error_code_name(error));
  }
  return Status(error, m.view());
}

// Calls one table function with a fresh error buffer and turns its status into a Status.
template <class Fn, class... Args>
Status invoke(const devrt_backend_table* table, std::int32_t id, const char* call, Fn fn, Args... args) noexcept {
  devrt_error err;
  err.message[0] = '\0';
  std::int32_t code = fn(args..., &err);
  if (code == 0) return Status();
  return backend_error(table, id, call, code, err);
}

Status unsupported_events(const devrt_backend_table* table, std::int32_t id, const char* call) noexcept {
  return make_error(ErrorCode::unsupported, DeviceLabel{table, id}, " ", call, ": the ", table->name,
                    " backend has no events");
}

bool valid_backend_name(const char* name) noexcept {
  if (name == nullptr || name[0] == '\0') return false;
  std::size_t n = 0;
  for (; name[n] != '\0'; ++n) {
    char c = name[n];
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok || n >= 31) return false;
  }
  return name[0] >= 'a' && name[0] <= 'z';
}

const char* missing_function(const devrt_backend_table* t) noexcept {
  if (t->availability == nullptr) return "availability";
  if (t->device_count == nullptr) return "device_count";
  if (t->get_attribute == nullptr) return "get_attribute";
  if (t->allocate == nullptr) return "allocate";
  if (t->free == nullptr) return "free";
  if (t->copy == nullptr) return "copy";
  if (t->stream_create == nullptr) return "stream_create";
  if (t->stream_destroy == nullptr) return "stream_destroy";
  if (t->stream_synchronize == nullptr) return "stream_synchronize";
  if ((t->capabilities & DEVRT_CAP_EVENTS) != 0) {
    if (t->event_create == nullptr) return "event_create";
    if (t->event_destroy == nullptr) return "event_destroy";
    if (t->event_record == nullptr) return "event_record";
    if (t->event_synchronize == nullptr) return "event_synchronize";
    if (t->event_query == nullptr) return "event_query";
    if (t->stream_wait_event == nullptr) return "stream_wait_event";
  }
  bool modules[4] = {t->module_load != nullptr, t->module_unload != nullptr, t->module_function != nullptr,
                     t->launch != nullptr};
  if (t->struct_size >= sizeof(devrt_backend_table) &&
      (modules[0] != modules[1] || modules[0] != modules[2] || modules[0] != modules[3])) {
    return "module_load, module_unload, module_function and launch (all or none)";
  }
  return nullptr;
}

Status unsupported_modules(const devrt_backend_table* table, std::int32_t id, const char* call) noexcept {
  return make_error(ErrorCode::unsupported, DeviceLabel{table, id}, " ", call, ": the ", table->name,
                    " backend has no kernel modules");
}

} // namespace

// ---- BackendRef ------------------------------------------------------------------------------

Status BackendRef::availability() const noexcept { return invoke(table_, -1, "availability", table_->availability); }

Result<std::int32_t> BackendRef::device_count() const noexcept {
  std::int32_t count = 0;
  Status status = invoke(table_, -1, "device_count", table_->device_count, &count);
  if (!status.ok()) return status;
  return count;
}

namespace {
[[gnu::cold, gnu::noinline]] Status device_error(const devrt_backend_table* table, std::int32_t id, std::int32_t code,
                                                 std::int32_t count, const devrt_error& err) noexcept {
  if (code != 0) return backend_error(table, id, "device_count", code, err);
  if (count == 0) { // an unavailable backend: say why rather than "no device"
    devrt_error reason;
    reason.message[0] = '\0';
    std::int32_t unavailable = table->availability(&reason);
    if (unavailable != 0) return backend_error(table, id, "availability", unavailable, reason);
  }
  return make_error(ErrorCode::invalid_argument, "no device ", DeviceLabel{table, id}, " (the ", table->name,
                    " backend has ", count, count == 1 ? " device)" : " devices)");
}
} // namespace

Status BackendRef::check_device(std::int32_t id) const noexcept {
  std::int32_t count = 0;
  devrt_error err;
  err.message[0] = '\0';
  std::int32_t code = table_->device_count(&count, &err);
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
  DEVRT_RETURN_IF_ERROR(check_device(id));
  devrt_attribute_value value;
  value.type = DEVRT_VALUE_NONE;
  Status status = invoke(table_, id, "get_attribute", table_->get_attribute, id, index, &value);
  if (!status.ok()) return status;
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
  DEVRT_RETURN_IF_ERROR(check_device(id));
  std::string json(1024, '\0');
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::size_t needed = 0;
    devrt_error err;
    err.message[0] = '\0';
    std::int32_t code = table_->detect_target(id, json.data(), json.size(), &needed, &err);
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
  DEVRT_RETURN_IF_ERROR(check_device(id));
  if (nbytes == 0) return static_cast<void*>(nullptr);
  if (nbytes > static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max())) {
    return make_error(ErrorCode::out_of_memory, DeviceLabel{table_, id}, " allocate(", nbytes, " bytes, align ",
                      alignment, "): larger than any allocation can be");
  }
  void* ptr = nullptr;
  devrt_error err;
  err.message[0] = '\0';
  std::int32_t code = table_->allocate(id, nbytes, alignment, &ptr, &err);
  if (code != 0) {
    detail::MessageBuilder call;
    detail::append_parts(call, "allocate(", nbytes, " bytes, align ", alignment, ")");
    return backend_error(table_, id, call.c_str(), code, err);
  }
  if (ptr == nullptr) {
    return make_error(ErrorCode::internal, DeviceLabel{table_, id}, " allocate(", nbytes,
                      " bytes): backend returned null without an error");
  }
  return ptr;
}

Status BackendRef::free(std::int32_t id, void* ptr) const noexcept {
  if (ptr == nullptr) return Status();
  return invoke(table_, id, "free", table_->free, id, ptr);
}

Status BackendRef::copy(std::int32_t id, const devrt_copy_desc& desc) const noexcept {
  return invoke(table_, id, "copy", table_->copy, &desc);
}

Status BackendRef::device_synchronize(std::int32_t id) const noexcept {
  DEVRT_RETURN_IF_ERROR(check_device(id));
  if (has_capability(DEVRT_CAP_SYNCHRONOUS)) return Status();
  if (!has_device_synchronize()) {
    return make_error(ErrorCode::unsupported, DeviceLabel{table_, id}, " device_synchronize: the ", table_->name,
                      " backend cannot wait for all of a device's streams; synchronize each stream instead");
  }
  return invoke(table_, id, "device_synchronize", table_->device_synchronize, id);
}

Result<void*> BackendRef::stream_create(std::int32_t id) const noexcept {
  DEVRT_RETURN_IF_ERROR(check_device(id));
  void* stream = nullptr;
  Status status = invoke(table_, id, "stream_create", table_->stream_create, id, &stream);
  if (!status.ok()) return status;
  return stream;
}

Status BackendRef::stream_destroy(std::int32_t id, void* stream) const noexcept {
  if (stream == nullptr) return Status();
  return invoke(table_, id, "stream_destroy", table_->stream_destroy, id, stream);
}

Status BackendRef::stream_synchronize(std::int32_t id, void* stream) const noexcept {
  DEVRT_RETURN_IF_ERROR(check_device(id));
  return invoke(table_, id, "stream_synchronize", table_->stream_synchronize, id, stream);
}

Result<void*> BackendRef::event_create(std::int32_t id) const noexcept {
  if (!has_events()) return unsupported_events(table_, id, "event_create");
  DEVRT_RETURN_IF_ERROR(check_device(id));
  void* event = nullptr;
  Status status = invoke(table_, id, "event_create", table_->event_create, id, &event);
  if (!status.ok()) return status;
  return event;
}

Status BackendRef::event_destroy(std::int32_t id, void* event) const noexcept {
  if (!has_events()) return unsupported_events(table_, id, "event_destroy");
  if (event == nullptr) return Status();
  return invoke(table_, id, "event_destroy", table_->event_destroy, id, event);
}

Status BackendRef::event_record(std::int32_t id, void* event, void* stream) const noexcept {
  if (!has_events()) return unsupported_events(table_, id, "event_record");
  return invoke(table_, id, "event_record", table_->event_record, id, event, stream);
}

Status BackendRef::event_synchronize(std::int32_t id, void* event) const noexcept {
  if (!has_events()) return unsupported_events(table_, id, "event_synchronize");
  return invoke(table_, id, "event_synchronize", table_->event_synchronize, id, event);
}

Result<bool> BackendRef::event_query(std::int32_t id, void* event) const noexcept {
  if (!has_events()) return unsupported_events(table_, id, "event_query");
  std::int32_t complete = 0;
  Status status = invoke(table_, id, "event_query", table_->event_query, id, event, &complete);
  if (!status.ok()) return status;
  return complete != 0;
}

Status BackendRef::stream_wait_event(std::int32_t id, void* stream, void* event) const noexcept {
  if (!has_events()) return unsupported_events(table_, id, "stream_wait_event");
  return invoke(table_, id, "stream_wait_event", table_->stream_wait_event, id, stream, event);
}

// ---- Registry --------------------------------------------------------------------------------

namespace {
// The backends built into libdevrt, in their configured order. Once; thread-safe.
void add_builtin_backends() noexcept;
} // namespace

namespace detail {
// Registers the built-in backends without Registry::add's run-time checks: their tables come from
// make_backend_table (checked against the Backend concept at compile time) and Meson generates
// their list with distinct names and kinds. Keeps firmware from linking the plugin-grade
// validation it never needs.
struct RegistryAccess {
  static void add_builtin(Registry& registry, const devrt_backend_table* table) noexcept {
    LockGuard lock(registry.add_mutex_);
    std::size_t count = registry.count_.load(std::memory_order_relaxed);
    if (count == Registry::kCapacity ||
        registry.by_kind_[table->device_kind].load(std::memory_order_relaxed) != nullptr) {
      DEVRT_LOG(error, "built-in backend '", table->name,
                "' not registered: its kind is taken or the registry is full");
      return;
    }
    registry.entries_[count].store(table, std::memory_order_release);
    registry.by_kind_[table->device_kind].store(table, std::memory_order_release);
    registry.count_.store(count + 1, std::memory_order_release);
  }
};
} // namespace detail

namespace detail {
constinit std::atomic<bool> g_host_copy_direct{false};
} // namespace detail

namespace {
DEVRT_STARTUP_CODE bool add_builtin_tables() noexcept {
  for (std::size_t i = 0; i < detail::kBuiltinBackendCount; ++i) {
    detail::RegistryAccess::add_builtin(g_registry, detail::kBuiltinBackendTables[i]);
  }
  return true;
}

void add_builtin_backends() noexcept {
  static const bool added = add_builtin_tables();
  static_cast<void>(added);
}

DEVRT_STARTUP_CODE bool make_global_registry_ready() noexcept {
  add_builtin_backends();
#if DEVRT_WITH_CPU
  if (g_registry.find(DeviceKind::cpu).table() == &devrt_backend_table_cpu) {
    detail::g_host_copy_direct.store(true, std::memory_order_relaxed);
  }
#endif
  // Plugins: on first use of the registry, never during static initialisation.
  detail::autoload_plugins(g_registry);
  return true;
}
} // namespace

Registry& Registry::global() noexcept {
  static const bool ready = make_global_registry_ready();
  static_cast<void>(ready);
  return g_registry;
}

namespace {
Status validate_table(const devrt_backend_table* table) noexcept {
  if (table == nullptr) return Status(ErrorCode::invalid_argument, "registry: null backend table");
  if (table->abi_version != DEVRT_BACKEND_ABI_VERSION) {
    return make_error(ErrorCode::abi_mismatch, "registry: backend table has ABI version ", table->abi_version,
                      ", this devrt speaks ", DEVRT_BACKEND_ABI_VERSION);
  }
  if (table->struct_size < DEVRT_BACKEND_TABLE_MIN_SIZE) {
    return make_error(ErrorCode::abi_mismatch, "registry: backend table is ", table->struct_size,
                      " bytes, expected at least ", DEVRT_BACKEND_TABLE_MIN_SIZE);
  }
  if (!valid_backend_name(table->name)) {
    return make_error(ErrorCode::invalid_argument, "registry: invalid backend name '", table->name,
                      "' (want 1-31 characters of [a-z0-9_], starting with a letter)");
  }
  if (table->device_kind <= 0 || table->device_kind >= kMaxDeviceKinds) {
    return make_error(ErrorCode::invalid_argument, "registry: backend '", table->name, "' has device kind ",
                      table->device_kind, " outside [1, ", kMaxDeviceKinds, ")");
  }
  if (const char* missing = missing_function(table)) {
    return make_error(ErrorCode::invalid_argument, "registry: backend '", table->name, "' lacks function ", missing);
  }
  return Status();
}

bool is_placeholder(const devrt_backend_table* table) noexcept {
  return (table->capabilities & DEVRT_CAP_PLACEHOLDER) != 0;
}
} // namespace

Status Registry::add(const devrt_backend_table* table) noexcept {
  return add_group(std::span<const devrt_backend_table* const>(&table, 1));
}

Status Registry::add_group(std::span<const devrt_backend_table* const> tables) noexcept {
  for (const devrt_backend_table* table : tables) DEVRT_RETURN_IF_ERROR(validate_table(table));
  for (std::size_t i = 0; i < tables.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (std::string_view(tables[i]->name) == tables[j]->name || tables[i]->device_kind == tables[j]->device_kind) {
        return make_error(ErrorCode::invalid_argument, "registry: backends '", tables[j]->name, "' and '",
                          tables[i]->name, "' of one group share a name or a device kind");
      }
    }
  }

  detail::LockGuard lock(add_mutex_);
  std::size_t count = count_.load(std::memory_order_relaxed);
  // Check everything first: either the whole group goes in or nothing does.
  std::size_t replace[DEVRT_PLUGIN_MAX_TABLES];
  std::size_t added = 0;
  if (tables.size() > DEVRT_PLUGIN_MAX_TABLES) {
    return make_error(ErrorCode::invalid_argument, "registry: a group holds at most ", DEVRT_PLUGIN_MAX_TABLES,
                      " backends");
  }
  for (std::size_t t = 0; t < tables.size(); ++t) {
    const devrt_backend_table* table = tables[t];
    replace[t] = kCapacity; // kCapacity: append (or, for a table already present, nothing)
    for (std::size_t i = 0; i < count; ++i) {
      const devrt_backend_table* existing = entries_[i].load(std::memory_order_relaxed);
      if (existing == table) {
        replace[t] = i;
        continue;
      }
      bool same_name = std::string_view(existing->name) == table->name;
      if (same_name && is_placeholder(existing) && existing->device_kind == table->device_kind) {
        replace[t] = i;
        continue;
      }
      if (same_name) {
        return make_error(ErrorCode::already_exists, "registry: a backend named '", table->name,
                          "' is already registered");
      }
      if (existing->device_kind == table->device_kind) {
        return make_error(ErrorCode::already_exists, "registry: backend '", table->name, "' claims device kind ",
                          static_cast<DeviceKind>(table->device_kind), ", already served by backend '", existing->name,
                          "'");
      }
    }
    if (replace[t] == kCapacity) ++added;
  }
  if (count + added > kCapacity) {
    return make_error(ErrorCode::out_of_memory, "registry: full (", kCapacity, " backends); cannot add '",
                      tables[0]->name, "'");
  }
  for (std::size_t t = 0; t < tables.size(); ++t) {
    const devrt_backend_table* table = tables[t];
    std::size_t slot = replace[t] == kCapacity ? count++ : replace[t];
    entries_[slot].store(table, std::memory_order_release);
    by_kind_[table->device_kind].store(table, std::memory_order_release);
    DEVRT_LOG(debug, "registry: added backend '", table->name, "'");
  }
  count_.store(count, std::memory_order_release);
  return Status();
}

BackendRef Registry::find(std::string_view name) const noexcept {
  std::size_t count = size();
  for (std::size_t i = 0; i < count; ++i) {
    const devrt_backend_table* table = entries_[i].load(std::memory_order_acquire);
    if (name == table->name) return BackendRef(table);
  }
  return BackendRef();
}

Result<BackendRef> Registry::get(DeviceKind kind) const noexcept {
  if (BackendRef backend = find(kind)) return backend;
  detail::MessageBuilder m;
  detail::append_parts(m, "no backend for device kind '", kind, "' in this build (built in:");
  std::size_t count = size();
  for (std::size_t i = 0; i < count; ++i) detail::append_parts(m, " ", at(i).name());
  m.append(")");
  return Status(ErrorCode::unavailable, m.view());
}

namespace detail {
BackendRegistrar::BackendRegistrar(const devrt_backend_table* table) noexcept {
  // Straight into the storage, after the built-in ones: Registry::global() would also autoload
  // plugins, which must not happen at static-initialisation time.
  add_builtin_backends();
  Status status = g_registry.add(table);
  if (!status.ok()) DEVRT_LOG(error, "DEVRT_REGISTER_BACKEND: ", status.message());
}
} // namespace detail

// ---- Free functions --------------------------------------------------------------------------

Result<BackendRef> backend_for(Device device) noexcept {
  Result<BackendRef> backend = Registry::global().get(device.kind);
  if (!backend.ok()) return backend;
  DEVRT_RETURN_IF_ERROR(backend->check_device(device.id));
  return backend;
}

std::int32_t device_count(DeviceKind kind) noexcept {
  BackendRef backend = Registry::global().find(kind);
  if (!backend) return 0;
  Result<std::int32_t> count = backend.device_count();
  return count.ok() ? *count : 0;
}

bool device_exists(Device device) noexcept { return device.id >= 0 && device.id < device_count(device.kind); }

Result<AttributeValue> get_attribute(Device device, Attribute attribute) noexcept {
  if (attribute == Attribute::exist) return AttributeValue(device_exists(device));
  Result<BackendRef> backend = Registry::global().get(device.kind);
  if (!backend.ok()) return std::move(backend).status();
  return backend->attribute(device.id, attribute);
}

// ---- Kernel modules --------------------------------------------------------------------------

Result<void*> BackendRef::module_load(std::int32_t id, std::int32_t format, const void* data, std::size_t size,
                                      const char* options, std::string* log) const noexcept {
  if (!has_modules()) return unsupported_modules(table_, id, "module_load");
  DEVRT_RETURN_IF_ERROR(check_device(id));
  // Big enough for any build log a person reads; longer ones are cut.
  constexpr std::size_t kLogCapacity = 64 * 1024;
  std::string text(kLogCapacity, '\0');
  void* module = nullptr;
  devrt_error err;
  err.message[0] = '\0';
  std::int32_t code = table_->module_load(id, format, data, size, options != nullptr ? options : "", &module,
                                          text.data(), text.size(), &err);
  text.resize(detail::bounded_length(text.data(), text.size()));
  if (log != nullptr) *log = text;
  if (code == 0) {
    if (module == nullptr) {
      return make_error(ErrorCode::internal, DeviceLabel{table_, id}, " module_load: backend returned no module");
    }
    return module;
  }
  detail::MessageBuilder call;
  detail::append_parts(call, "module_load(", module_format_name(static_cast<ModuleFormat>(format)), ", ", size,
                       " bytes)");
  Status status = backend_error(table_, id, call.c_str(), code, err);
  if (text.empty()) return status;
  // The log can be long: it goes after the short message, outside the bounded builder.
  std::string message(status.message());
  message += "\n--- build log ---\n";
  message += text;
  return Status(status.code(), message);
}

Status BackendRef::module_unload(std::int32_t id, void* module) const noexcept {
  if (!has_modules()) return unsupported_modules(table_, id, "module_unload");
  if (module == nullptr) return Status();
  return invoke(table_, id, "module_unload", table_->module_unload, id, module);
}

Result<void*> BackendRef::module_function(std::int32_t id, void* module, const char* name) const noexcept {
  if (!has_modules()) return unsupported_modules(table_, id, "module_function");
  void* function = nullptr;
  devrt_error err;
  err.message[0] = '\0';
  std::int32_t code = table_->module_function(id, module, name, &function, &err);
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
  out->resize(64 * 1024);
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::size_t needed = 0;
    devrt_error err;
    err.message[0] = '\0';
    std::int32_t code = table_->module_binary(id, module, format, out->data(), out->size(), &needed, &err);
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

Status BackendRef::launch(std::int32_t id, void* function, const devrt_launch_desc& desc,
                          std::string_view kernel) const noexcept {
  devrt_error err;
  err.message[0] = '\0';
  std::int32_t code = table_->launch(id, function, &desc, &err);
  if (code == 0) [[likely]]
    return Status();
  detail::MessageBuilder call;
  detail::append_parts(call, "launch(", kernel, ", grid ", desc.grid[0], "x", desc.grid[1], "x", desc.grid[2],
                       ", block ", desc.block[0], "x", desc.block[1], "x", desc.block[2]);
  if (desc.dynamic_shared_bytes != 0) detail::append_parts(call, ", ", desc.dynamic_shared_bytes, " B shared");
  call.append(")");
  return backend_error(table_, id, call.c_str(), code, err);
}

} // namespace devrt
