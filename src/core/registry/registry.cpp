// SPDX-License-Identifier: Apache-2.0
// The registry: validating and storing backend tables, lookups, and the device queries over the
// process-wide registry. Start-up (built-in backends, autoload) is in startup.cpp.
#include <devrt/backend/registry.hpp>

#include <devrt/log.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "support/environment_variables.hpp"

namespace devrt {
namespace {

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
  if (t->open_device == nullptr) return "open_device";
  if (t->close_device == nullptr) return "close_device";
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
  if (t->struct_size >= offsetof(devrt_backend_table, launch) + sizeof t->launch &&
      (modules[0] != modules[1] || modules[0] != modules[2] || modules[0] != modules[3])) {
    return "module_load, module_unload, module_function and launch (all or none)";
  }
  return nullptr;
}

} // namespace

// ---- Registry --------------------------------------------------------------------------------

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
  // Formats 1 .. DEVRT_MODULE_FORMAT_COUNT - 1.
  constexpr std::uint32_t known_formats = DEVRT_MODULE_FORMAT_BIT(DEVRT_MODULE_FORMAT_COUNT) - 2u;
  if (table->module_load != nullptr &&
      table->struct_size >= offsetof(devrt_backend_table, module_formats) + sizeof table->module_formats &&
      (table->module_formats == 0 || (table->module_formats & ~known_formats) != 0)) {
    return make_error(ErrorCode::invalid_argument, "registry: backend '", table->name, "' declares module formats 0x",
                      detail::Hex{table->module_formats},
                      ": a backend with modules declares the DEVRT_MODULE_* formats it loads, and only those");
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
#if DEVRT_BARE_METAL // firmware keeps one implementation per kind (no choice at run time)
      if (existing->device_kind == table->device_kind) {
        return make_error(ErrorCode::already_exists, "registry: backend '", table->name, "' claims device kind ",
                          static_cast<DeviceKind>(table->device_kind), ", already served by backend '", existing->name,
                          "'");
      }
#endif
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
    const devrt_backend_table* replaced = entries_[slot].load(std::memory_order_relaxed);
    entries_[slot].store(table, std::memory_order_release);
    // A kind's first implementation serves it at once; with a second, the first lookup chooses.
    std::atomic<const devrt_backend_table*>& serving = by_kind_[table->device_kind];
    const devrt_backend_table* before = serving.load(std::memory_order_relaxed);
    if (before == nullptr || before == replaced || before == table) {
      serving.store(table, std::memory_order_release);
    } else {
      unchosen_[table->device_kind].store(true, std::memory_order_release);
    }
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

#if !DEVRT_BARE_METAL
namespace {
// Whether `name` is one of DEVRT_PREFER's comma-separated names.
bool preferred(std::string_view list, std::string_view name) noexcept {
  while (!list.empty()) {
    std::size_t comma = list.find(',');
    if (list.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}
} // namespace

void Registry::choose(std::int32_t kind) const noexcept {
  const devrt_backend_table* candidates[kCapacity];
  std::size_t n = 0;
  {
    detail::LockGuard lock(add_mutex_);
    if (!unchosen_[kind].load(std::memory_order_relaxed)) return;
    std::size_t count = count_.load(std::memory_order_relaxed);
    for (std::size_t i = 0; i < count; ++i) {
      const devrt_backend_table* table = entries_[i].load(std::memory_order_relaxed);
      if (table->device_kind == kind) candidates[n++] = table;
    }
  }
  // Outside the lock: availability may load a driver.
  const char* prefer = detail::read_text_env("DEVRT_PREFER");
  const devrt_backend_table* chosen = nullptr;
  for (std::size_t i = 0; prefer != nullptr && i < n && chosen == nullptr; ++i) {
    if (preferred(prefer, candidates[i]->name)) chosen = candidates[i];
  }
  for (std::size_t i = 0; i < n && chosen == nullptr; ++i) {
    if (!is_placeholder(candidates[i]) && BackendRef(candidates[i]).availability().ok()) chosen = candidates[i];
  }
  if (chosen == nullptr && n > 0) chosen = candidates[0];
  detail::LockGuard lock(add_mutex_);
  if (!unchosen_[kind].load(std::memory_order_relaxed)) return; // another thread chose
  if (chosen != nullptr) by_kind_[kind].store(chosen, std::memory_order_release);
  unchosen_[kind].store(false, std::memory_order_release);
  DEVRT_LOG(debug, "registry: device kind ", static_cast<DeviceKind>(kind), " is served by '",
            chosen != nullptr ? chosen->name : "", "' of ", n, " implementations");
}

Status Registry::standing_by(BackendRef backend) const noexcept {
  BackendRef serving = find(backend.kind());
  if (serving == backend || !serving) return Status();
  const char* prefer = detail::read_text_env("DEVRT_PREFER");
  const bool named = prefer != nullptr && preferred(prefer, serving.name());
  return make_error(ErrorCode::unavailable, "stands by: device kind ", backend.kind(), " is served by '",
                    serving.name(), named ? "' (named in DEVRT_PREFER)" : "' (registered first, or available first)");
}
#else
void Registry::choose(std::int32_t) const noexcept {}
Status Registry::standing_by(BackendRef) const noexcept { return Status(); }
#endif

Result<BackendRef> Registry::get(DeviceKind kind) const noexcept {
  if (BackendRef backend = find(kind)) return backend;
  detail::MessageBuilder m;
  detail::append_parts(m, "no backend for device kind '", kind, "' in this build (built in:");
  std::size_t count = size();
  for (std::size_t i = 0; i < count; ++i) detail::append_parts(m, " ", at(i).name());
  m.append(")");
  return Status(ErrorCode::unavailable, m.view());
}

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

} // namespace devrt
