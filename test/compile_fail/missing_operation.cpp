// SPDX-License-Identifier: Apache-2.0
// Compiled by compile_fail/run.sh twice: with DEVRT_EXPECT_OK the backend is complete and must
// compile; without it `free` is missing and compilation must fail naming devrt::Backend.
#include <devrt/backend/backend.hpp>

namespace {

struct IncompleteBackend {
  static constexpr std::string_view name = "incomplete";
  static constexpr devrt::DeviceKind kind = devrt::DeviceKind::vpi;
  devrt::Status availability() { return {}; }
  devrt::Result<std::int32_t> device_count() { return 0; }
  devrt::Result<devrt::AttributeValue> get_attribute(const devrt::BackendDevice&, devrt::Attribute) {
    return devrt::AttributeValue();
  }
  devrt::Result<void*> allocate(const devrt::BackendDevice&, std::size_t, std::size_t) {
    return static_cast<void*>(nullptr);
  }
#if defined(DEVRT_EXPECT_OK)
  devrt::Status free(const devrt::BackendDevice&, void*) { return {}; }
#endif
  devrt::Status copy(const devrt::CopyDesc&) { return {}; }
  devrt::Result<void*> stream_create(const devrt::BackendDevice&) { return static_cast<void*>(nullptr); }
  devrt::Status stream_destroy(const devrt::BackendDevice&, void*) { return {}; }
  devrt::Status stream_synchronize(const devrt::BackendDevice&, void*) { return {}; }
};

} // namespace

constexpr devrt_backend_table kTable = devrt::make_backend_table<IncompleteBackend>();

int main() { return kTable.abi_version == DEVRT_BACKEND_ABI_VERSION ? 0 : 1; }
