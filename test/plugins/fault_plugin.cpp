// SPDX-License-Identifier: Apache-2.0
// Broken plugins for the loader's fault matrix, one per DEVRT_FAULT value (test/meson.build):
//   no_entry       a shared object without devrt_plugin_entry
//   abi_version    an entry that speaks backend ABI version 2 (table-level functions without context)
//   table_size     a backend table smaller than any devrt ever had
//   bad_table      a table the registry refuses (invalid name, no allocate)
//   duplicate      backend "twin", also provided by the `twin` variant: the second loaded fails
//   half_group     two tables, the second implementing the cpu device kind: both registered, it stands by
//   twin           a good backend "twin"; its copy returns the status code it is given as nbytes,
//                  so that every DEVRT_STATUS_* crosses a real plugin boundary
#include <devrt/backend/backend.hpp>

#include <cstring>

namespace {

struct Twin {
  static constexpr std::string_view name = "twin";
  static constexpr devrt::DeviceKind kind = devrt::DeviceKind::cuda_managed;
  devrt::Status availability() noexcept { return devrt::Status(); }
  devrt::Result<std::int32_t> device_count() noexcept { return 0; }
  devrt::Result<devrt::AttributeValue> get_attribute(const devrt::BackendDevice&, devrt::Attribute) noexcept {
    return devrt::AttributeValue();
  }
  devrt::Result<void*> allocate(const devrt::BackendDevice&, std::size_t, std::size_t) noexcept {
    return devrt::Status(devrt::ErrorCode::unsupported, "twin has no memory");
  }
  devrt::Status free(const devrt::BackendDevice&, void*) noexcept { return devrt::Status(); }
  devrt::Status copy(const devrt::CopyDesc& desc) noexcept {
    if (desc.nbytes == 0) return devrt::Status();
    return devrt::make_error(static_cast<devrt::ErrorCode>(desc.nbytes), "twin returns code ", desc.nbytes);
  }
  devrt::Result<void*> stream_create(const devrt::BackendDevice&) noexcept { return nullptr; }
  devrt::Status stream_destroy(const devrt::BackendDevice&, void*) noexcept { return devrt::Status(); }
  devrt::Status stream_synchronize(const devrt::BackendDevice&, void*) noexcept { return devrt::Status(); }
};

// A second backend of the half group: the name is new, the device kind (cpu) is taken: a second
// implementation of the cpu kind, which stands by.
struct ClaimsCpu : Twin {
  static constexpr std::string_view name = "half_second";
  static constexpr devrt::DeviceKind kind = devrt::DeviceKind::cpu;
};
struct HalfFirst : Twin {
  static constexpr std::string_view name = "half_first";
  static constexpr devrt::DeviceKind kind = devrt::DeviceKind::vpi;
};

} // namespace

#define DEVRT_FAULT_IS(x) (std::string_view(DEVRT_FAULT) == #x)

DEVRT_REGISTER_BACKEND(twin, Twin)
DEVRT_REGISTER_BACKEND(half_first, HalfFirst)
DEVRT_REGISTER_BACKEND(half_second, ClaimsCpu)

#if !defined(DEVRT_NO_ENTRY)
namespace {
devrt_backend_table modified_table() noexcept {
  devrt_backend_table table = *devrt_backend_anchor_twin();
  if (DEVRT_FAULT_IS(table_size)) table.struct_size = 16;
  if (DEVRT_FAULT_IS(bad_table)) {
    table.name = "Bad Name";
    table.allocate = nullptr;
  }
  return table;
}
} // namespace

extern "C" [[gnu::visibility("default")]] const devrt_plugin_info* devrt_plugin_entry(void) noexcept {
  static const devrt_backend_table table = modified_table();
  static const devrt_backend_table* one[] = {&table};
  static const devrt_backend_table* half[] = {devrt_backend_anchor_half_first(), devrt_backend_anchor_half_second()};
  static devrt_plugin_info info = {DEVRT_BACKEND_ABI_VERSION, sizeof(devrt_plugin_info), 1, one};
  if (DEVRT_FAULT_IS(abi_version)) info.abi_version = 2; // a plugin built for ABI 2 (no context)
  if (DEVRT_FAULT_IS(half_group)) {
    info.table_count = 2;
    info.tables = half;
  }
  return &info;
}
#else
// Something exported, so that the file is a plausible shared object.
extern "C" [[gnu::visibility("default")]] int devrt_not_a_plugin(void) { return 42; }
#endif
