// SPDX-License-Identifier: Apache-2.0
// The C API's validation mode (DEVRT_VALIDATE=1): handles as generation-checked table slots.
#include "capi/capi_internal.hpp"

#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#include "support/environment.hpp"

namespace devrt::capi {
namespace {

// A handle value: generation (32 bits) | slot (24 bits) | kind (8 bits). The generation starts at 1
// and grows at each release, so no value is 0 and a stale value never matches a live slot.
constexpr unsigned kKindBits = 8;
constexpr unsigned kSlotBits = 24;
constexpr std::uintptr_t kSlotLimit = std::uintptr_t{1} << kSlotBits;

struct Slot {
  void* object = nullptr;
  std::uint32_t generation = 1;
  std::uint8_t kind = 0;
  bool live = false;
};

struct Table {
  std::mutex mutex;
  std::vector<Slot> slots;
  std::vector<std::uint32_t> free;
};

Table& table() noexcept {
  static Table* instance = new Table(); // never destroyed: handles may be released during exit
  return *instance;
}

std::uintptr_t encode(std::uint32_t generation, std::uintptr_t slot, std::uint8_t kind) noexcept {
  return (static_cast<std::uintptr_t>(generation) << (kSlotBits + kKindBits)) | (slot << kKindBits) | kind;
}

} // namespace

bool validating() noexcept {
  static const bool enabled = detail::read_boolean_env("DEVRT_VALIDATE", false);
  return enabled;
}

std::uintptr_t handles::register_handle(void* object, std::uint8_t kind) noexcept {
  static_assert(sizeof(std::uintptr_t) == 8, "the validation mode's handles need 64-bit pointers");
  Table& t = table();
  std::lock_guard lock(t.mutex);
  std::uint32_t slot = 0;
  if (!t.free.empty()) {
    slot = t.free.back();
    t.free.pop_back();
  } else {
    if (t.slots.size() >= kSlotLimit) return 0;
    slot = static_cast<std::uint32_t>(t.slots.size());
    t.slots.emplace_back();
  }
  Slot& entry = t.slots[slot];
  entry.object = object;
  entry.kind = kind;
  entry.live = true;
  return encode(entry.generation, slot, kind);
}

void* handles::find_handle(std::uintptr_t value, std::uint8_t kind, const char* kind_name, const char* call,
                           bool retire) noexcept {
  const auto value_kind = static_cast<std::uint8_t>(value & 0xff);
  const std::uintptr_t slot = (value >> kKindBits) & (kSlotLimit - 1);
  const auto generation = static_cast<std::uint32_t>(value >> (kSlotBits + kKindBits));
  Table& t = table();
  std::lock_guard lock(t.mutex);
  if (slot >= t.slots.size() || generation == 0) {
    fail(make_error(ErrorCode::invalid_argument, call, ": ", kind_name, " ", reinterpret_cast<void*>(value),
                    " is not a handle this library made (validation mode)"));
    return nullptr;
  }
  Slot& entry = t.slots[slot];
  if (entry.kind != 0 && entry.kind != value_kind) {
    fail(make_error(ErrorCode::invalid_argument, call, ": ", kind_name, " ", reinterpret_cast<void*>(value),
                    " is not a handle this library made (validation mode)"));
    return nullptr;
  }
  if (value_kind != kind) {
    fail(make_error(ErrorCode::invalid_argument, call, ": the handle ", reinterpret_cast<void*>(value), " is not a ",
                    kind_name, " (validation mode: wrong handle type)"));
    return nullptr;
  }
  if (!entry.live || entry.generation != generation) {
    fail(make_error(ErrorCode::invalid_argument, call, ": ", kind_name, " ", reinterpret_cast<void*>(value),
                    retire ? " was released already (validation mode: double release)"
                           : " was released (validation mode: use after release)"));
    return nullptr;
  }
  void* object = entry.object;
  if (retire) {
    entry.live = false;
    entry.object = nullptr;
    ++entry.generation;
    if (entry.generation == 0) entry.generation = 1;
    t.free.push_back(static_cast<std::uint32_t>(slot));
  }
  return object;
}

} // namespace devrt::capi
