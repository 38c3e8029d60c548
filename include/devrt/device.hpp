// SPDX-License-Identifier: Apache-2.0
// Devices: a kind (DLPack's numbering) and an index, interconvertible with DLDevice.
#ifndef DEVRT_DEVICE_HPP
#define DEVRT_DEVICE_HPP

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include <dlpack/dlpack.h>

#include <devrt/detail/message.hpp>
#include <devrt/status.hpp>

// A backend's C table (devrt/backend_abi.h), held by pointer in application types.
struct devrt_backend_table;

namespace devrt {

// Device kinds, numbered as DLPack numbers DLDeviceType (values beyond Debian's DLPack 0.6, such as
// oneapi/webgpu/hexagon, follow DLPack 1.x).
enum class DeviceKind : std::int32_t {
  cpu = 1,
  cuda = 2,
  cuda_host = 3,
  opencl = 4,
  vulkan = 7,
  metal = 8,
  vpi = 9,
  rocm = 10,
  rocm_host = 11,
  ext_dev = 12,
  cuda_managed = 13,
  oneapi = 14,
  webgpu = 15,
  hexagon = 16,
};

namespace detail {
// The integer with DLDevice::device_type's size: 32 bits, or 8 where the ABI packs enums into the
// smallest type that holds them (Arm EABI bare-metal, -fshort-enums). DLPack's values fit either.
using DLDeviceTypeBits = std::conditional_t<sizeof(DLDeviceType) == sizeof(std::int32_t), std::int32_t,
                                            std::conditional_t<sizeof(DLDeviceType) == 2, std::int16_t, std::int8_t>>;
static_assert(sizeof(DLDeviceTypeBits) == sizeof(DLDeviceType), "DLDevice::device_type has an unexpected size");
} // namespace detail

// Kinds fit in [0, kMaxDeviceKinds); registries index by kind.
inline constexpr std::int32_t kMaxDeviceKinds = 32;

// Stable lower-case name ("cuda_host"), or "" for a value that is not a DeviceKind. Thread-safe.
std::string_view device_kind_name(DeviceKind kind) noexcept;

// Parses a kind name ("cuda"). Thread-safe. Returns not_found for an unknown name.
Result<DeviceKind> parse_device_kind(std::string_view name) noexcept;

// One device: a kind and an index within that kind. A plain value; thread-safe.
struct Device {
  DeviceKind kind = DeviceKind::cpu;
  std::int32_t id = 0;

  friend constexpr bool operator==(const Device&, const Device&) = default;

  // The kind travels through the bytes of DLDevice::device_type, never through an enum
  // conversion: DLPack 0.6's DLDeviceType has no fixed underlying type and ends at 13, so
  // converting oneapi/webgpu/hexagon (14-16) to it would be undefined behaviour.
  DLDevice to_dlpack() const noexcept {
    DLDevice device{};
    auto type = static_cast<detail::DLDeviceTypeBits>(kind);
    std::char_traits<char>::copy(reinterpret_cast<char*>(&device.device_type), reinterpret_cast<const char*>(&type),
                                 sizeof type);
    device.device_id = id;
    return device;
  }
  static Device from_dlpack(const DLDevice& device) noexcept {
    detail::DLDeviceTypeBits type = 0;
    std::char_traits<char>::copy(reinterpret_cast<char*>(&type), reinterpret_cast<const char*>(&device.device_type),
                                 sizeof type);
    return Device{static_cast<DeviceKind>(type), device.device_id};
  }
};

inline constexpr Device kHostDevice{DeviceKind::cpu, 0};

// The alignment of device allocations (Buffer, Workspace) unless one asks for another, and the
// largest one may ask for.
inline constexpr std::size_t kDefaultAlignment = 64;
inline constexpr std::size_t kMaxAlignment = std::size_t{1} << 20;

// The backend side, for backend authors and tools (<devrt/registry.hpp>, <devrt/backend_abi.h>).
// Application types (Buffer, Stream, Module, ...) hold a backend by its table pointer and name
// these types only in declarations, so that applications do not compile the backend API.
class BackendRef;
class Registry;

// "cpu:0", "cuda:1"; an unknown kind prints as "kind<N>:id". Thread-safe.
std::string to_string(Device device);

// Parses "cuda:1" or "cpu" (index 0). Thread-safe. invalid_argument on malformed text.
Result<Device> parse_device(std::string_view text) noexcept;

namespace detail {
void append_part(MessageBuilder& m, Device device) noexcept;
void append_part(MessageBuilder& m, DeviceKind kind) noexcept;
} // namespace detail

} // namespace devrt

#endif // DEVRT_DEVICE_HPP
