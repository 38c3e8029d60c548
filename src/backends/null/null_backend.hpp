// SPDX-License-Identifier: Apache-2.0
// The null backend: satisfies devrt::Backend and implements nothing. Copy this folder to start a
// new backend (see README.md beside this file).
#ifndef DEVRT_SRC_BACKENDS_NULL_NULL_BACKEND_HPP
#define DEVRT_SRC_BACKENDS_NULL_NULL_BACKEND_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <devrt/backend.hpp>

namespace devrt::null {

// Stateless; every member is thread-safe.
class NullBackend {
public:
  static constexpr std::string_view name = "null";
  static constexpr DeviceKind kind = DeviceKind::ext_dev;

  // A real backend loads its vendor runtime here (once, lazily) and says why it cannot.
  Status availability() noexcept { return unsupported("availability"); }
  Result<std::int32_t> device_count() noexcept { return 0; }
  Result<AttributeValue> get_attribute(std::int32_t, Attribute) noexcept { return unsupported("get_attribute"); }

  Result<void*> allocate(std::int32_t, std::size_t, std::size_t) noexcept { return unsupported("allocate"); }
  Status free(std::int32_t, void*) noexcept { return unsupported("free"); }
  Status copy(const CopyDesc&) noexcept { return unsupported("copy"); }

  Result<void*> stream_create(std::int32_t) noexcept { return unsupported("stream_create"); }
  Status stream_destroy(std::int32_t, void*) noexcept { return unsupported("stream_destroy"); }
  Status stream_synchronize(std::int32_t, void*) noexcept { return unsupported("stream_synchronize"); }

private:
  static Status unsupported(const char* call) noexcept {
    return make_error(ErrorCode::unsupported, "the null backend implements no ", call);
  }
};

static_assert(Backend<NullBackend> && !BackendEvents<NullBackend>);

} // namespace devrt::null

#endif // DEVRT_SRC_BACKENDS_NULL_NULL_BACKEND_HPP
