// The CPU backend: host memory, synchronous streams, attributes read from the OS.
#ifndef DEVRT_SRC_BACKENDS_CPU_CPU_BACKEND_HPP
#define DEVRT_SRC_BACKENDS_CPU_CPU_BACKEND_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <devrt/backend.hpp>

namespace devrt::cpu {

// Copies n bytes between non-overlapping host ranges, as fast as this machine allows (memcpy, or
// non-temporal stores for copies larger than the last-level cache). Thread-safe.
void copy_bytes(void* dst, const void* src, std::size_t n) noexcept;

// Stateless: every member is thread-safe. Streams and events are tokens, since every operation
// has finished when it returns.
class CpuBackend {
public:
  static constexpr std::string_view name = "cpu";
  static constexpr DeviceKind kind = DeviceKind::cpu;
  static constexpr bool host_accessible = true;

  Status availability() noexcept { return Status(); }
  Result<std::int32_t> device_count() noexcept { return 1; }
  Result<AttributeValue> get_attribute(std::int32_t device, Attribute attribute) noexcept;

  Result<void*> allocate(std::int32_t device, std::size_t nbytes, std::size_t alignment) noexcept;
  Status free(std::int32_t device, void* ptr) noexcept;
  Status copy(const CopyDesc& desc) noexcept {
    copy_bytes(static_cast<std::byte*>(desc.dst) + desc.dst_offset,
               static_cast<const std::byte*>(desc.src) + desc.src_offset, desc.nbytes);
    return Status();
  }

  Result<void*> stream_create(std::int32_t device) noexcept;
  Status stream_destroy(std::int32_t, void*) noexcept { return Status(); }
  Status stream_synchronize(std::int32_t, void*) noexcept { return Status(); }

  Result<void*> event_create(std::int32_t device) noexcept;
  Status event_destroy(std::int32_t, void*) noexcept { return Status(); }
  Status event_record(std::int32_t, void*, void*) noexcept { return Status(); }
  Status event_synchronize(std::int32_t, void*) noexcept { return Status(); }
  Result<bool> event_query(std::int32_t, void*) noexcept { return true; }
  Status stream_wait_event(std::int32_t, void*, void*) noexcept { return Status(); }
};

static_assert(Backend<CpuBackend> && BackendEvents<CpuBackend> && HostAccessibleMemory<CpuBackend>);

} // namespace devrt::cpu

#endif // DEVRT_SRC_BACKENDS_CPU_CPU_BACKEND_HPP
