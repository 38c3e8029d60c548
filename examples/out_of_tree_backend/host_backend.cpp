// SPDX-License-Identifier: Apache-2.0
// An out-of-tree devrt backend built as a plugin: host memory served under the ext_dev device
// kind. It uses nothing but devrt's installed headers and library; devrt finds it through
// DEVRT_PLUGIN_PATH (or <libdir>/devrt) as libdevrt_example.so.
#include <devrt/backend/backend.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace example {

class HostBackend {
public:
  static constexpr std::string_view name = "example";
  static constexpr devrt::DeviceKind kind = devrt::DeviceKind::ext_dev;
  static constexpr bool host_accessible = true;

  devrt::Status availability() noexcept { return devrt::Status(); }
  devrt::Result<std::int32_t> device_count() noexcept { return 1; }
  devrt::Result<devrt::AttributeValue> get_attribute(const devrt::BackendDevice&, devrt::Attribute attribute) noexcept {
    switch (attribute) {
    case devrt::Attribute::exist: return devrt::AttributeValue(true);
    case devrt::Attribute::device_name: return devrt::AttributeValue(std::string("example host memory"));
    default: return devrt::AttributeValue();
    }
  }

  devrt::Result<void*> allocate(const devrt::BackendDevice&, std::size_t nbytes, std::size_t alignment) noexcept {
    std::size_t rounded = (nbytes + alignment - 1) / alignment * alignment;
    void* p = rounded >= nbytes ? std::aligned_alloc(alignment, rounded) : nullptr;
    if (p == nullptr) return devrt::make_error(devrt::ErrorCode::out_of_memory, "aligned_alloc(", nbytes, ") failed");
    return p;
  }
  devrt::Status free(const devrt::BackendDevice&, void* ptr) noexcept {
    std::free(ptr);
    return devrt::Status();
  }
  devrt::Status copy(const devrt::CopyDesc& desc) noexcept {
    std::memmove(static_cast<std::byte*>(desc.dst) + desc.dst_offset,
                 static_cast<const std::byte*>(desc.src) + desc.src_offset, desc.nbytes);
    return devrt::Status();
  }

  // Streams are synchronous: every operation has finished when it returns.
  devrt::Result<void*> stream_create(const devrt::BackendDevice&) noexcept {
    static std::atomic<std::uintptr_t> next{1};
    return reinterpret_cast<void*>(next.fetch_add(1));
  }
  devrt::Status stream_destroy(const devrt::BackendDevice&, void*) noexcept { return devrt::Status(); }
  devrt::Status stream_synchronize(const devrt::BackendDevice&, void*) noexcept { return devrt::Status(); }
};

static_assert(devrt::Backend<HostBackend>);

} // namespace example

DEVRT_REGISTER_BACKEND(example, example::HostBackend)
DEVRT_PLUGIN_ENTRY(devrt_backend_anchor_example())
