// SPDX-License-Identifier: Apache-2.0
// Placeholders: a built-in plugin that is not loaded answers "unavailable: <why>" through a
// stand-in table of its own name and kind (plugin_placeholder.hpp).
#include "core/plugins/plugin_placeholder.hpp"

#include <cstdint>
#include <cstring>
#include <new>

#include <devrt/backend/backend.hpp>

namespace devrt::detail {

namespace {

// One stand-in per backend not loaded: its table and its reason, the table's context. Made on the
// heap as needed (no cap) and kept for the process in a list (the registry holds the table until a
// plugin replaces it). Added under the loader's lock.
struct Placeholder {
  devrt_backend_table table{};
  char name[32] = {};
  char reason[DEVRT_ERROR_MESSAGE_CAPACITY] = {};
  Placeholder* next = nullptr;
};
Placeholder* g_placeholders = nullptr;

// Copies as much of `text` as fits into out[0..capacity) and terminates it.
void copy_bounded(char* out, std::size_t capacity, std::string_view text) noexcept {
  std::size_t n = text.size() < capacity - 1 ? text.size() : capacity - 1;
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

void write_error(devrt_error* err, const char* text) noexcept {
  if (err != nullptr) copy_bounded(err->message, DEVRT_ERROR_MESSAGE_CAPACITY, text);
}

// The placeholders' one set of functions: each reads its placeholder from the context.
struct PlaceholderOps {
  static std::int32_t availability(void* context, devrt_error* err) noexcept {
    write_error(err, static_cast<const Placeholder*>(context)->reason);
    return static_cast<std::int32_t>(ErrorCode::unavailable);
  }
  static std::int32_t device_count(void*, std::int32_t* out, devrt_error*) noexcept {
    *out = 0;
    return 0;
  }
  static std::int32_t unavailable(const devrt_backend_device* device, devrt_error* err) noexcept {
    return availability(device->context, err);
  }
  static std::int32_t open_device(devrt_backend_device* device, devrt_error* err) noexcept {
    return unavailable(device, err);
  }
  static std::int32_t close_device(devrt_backend_device*, devrt_error*) noexcept { return 0; }
  static std::int32_t get_attribute(const devrt_backend_device* device, std::int32_t, devrt_attribute_value*,
                                    devrt_error* err) noexcept {
    return unavailable(device, err);
  }
  static std::int32_t allocate(const devrt_backend_device* device, std::size_t, std::size_t, void**,
                               devrt_error* err) noexcept {
    return unavailable(device, err);
  }
  static std::int32_t free(const devrt_backend_device* device, void*, devrt_error* err) noexcept {
    return unavailable(device, err);
  }
  static std::int32_t copy(void* context, const devrt_copy_desc*, devrt_error* err) noexcept {
    return availability(context, err);
  }
  static std::int32_t stream_create(const devrt_backend_device* device, void**, devrt_error* err) noexcept {
    return unavailable(device, err);
  }
  static std::int32_t stream_op(const devrt_backend_device* device, void*, devrt_error* err) noexcept {
    return unavailable(device, err);
  }
};

} // namespace

void add_placeholder(Registry& registry, const BuiltinPlugin& plugin, std::string_view reason) noexcept {
  auto* p = new (std::nothrow) Placeholder;
  if (p == nullptr) return;
  copy_bounded(p->name, sizeof p->name, plugin.name);
  copy_bounded(p->reason, sizeof p->reason, reason);
  devrt_backend_table& t = p->table;
  t.abi_version = DEVRT_BACKEND_ABI_VERSION;
  t.struct_size = sizeof(devrt_backend_table);
  t.name = p->name;
  t.device_kind = plugin.kind;
  t.capabilities = DEVRT_CAP_PLACEHOLDER;
  t.context = p;
  t.availability = &PlaceholderOps::availability;
  t.device_count = &PlaceholderOps::device_count;
  t.open_device = &PlaceholderOps::open_device;
  t.close_device = &PlaceholderOps::close_device;
  t.get_attribute = &PlaceholderOps::get_attribute;
  t.allocate = &PlaceholderOps::allocate;
  t.free = &PlaceholderOps::free;
  t.copy = &PlaceholderOps::copy;
  t.stream_create = &PlaceholderOps::stream_create;
  t.stream_destroy = &PlaceholderOps::stream_op;
  t.stream_synchronize = &PlaceholderOps::stream_op;
  if (!registry.add(&p->table).ok()) {
    delete p;
    return;
  }
  p->next = g_placeholders;
  g_placeholders = p;
}

} // namespace devrt::detail
