// SPDX-License-Identifier: Apache-2.0
// Devices: a kind (DLPack's numbering) and an index, interconvertible with DLDevice.
#ifndef DEVRT_DEVICE_HPP
#define DEVRT_DEVICE_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include <dlpack/dlpack.h>

#include <devrt/detail/message.hpp>
#include <devrt/dtype.hpp>
#include <devrt/status.hpp>

// A backend's C table (devrt/backend/backend_abi.h), held by pointer in application types.
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
  // Not a DLPack device type: devices served by devrt-server on another process or machine
  // (devrt/remote.hpp).
  remote = 28,
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

// The backend side, for backend authors and tools (<devrt/backend/registry.hpp>, <devrt/backend/backend_abi.h>).
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

// ---- Memory scopes ----------------------------------------------------------------------------
//
// Where a tensor's memory lives on its device, by TVM's names. "global" is plain device memory
// (every device); "global.texture", "global.texture-nhwc" and "global.texture-weight" are images
// of RGBA texels, TVM's layouts for Adreno-class GPUs (TextureLayout says which images); "global.vtcm"
// is the Hexagon vector unit's tightly coupled memory. docs/memory-scopes.md has the rules.
// The numbers are ABI (devrt_texture_desc.scope, the C API).
enum class MemoryScope : std::int32_t {
  global = 0,
  texture = 1,        // "global.texture": activations, [N, C, H, W, c] -> N*C layers of H rows of W texels
  texture_nhwc = 2,   // "global.texture-nhwc": [N, H, W, C, c] -> N layers of H rows of W*C texels
  texture_weight = 3, // "global.texture-weight": [O, I, H, W, c] -> one layer of O rows of I*H*W texels
  vtcm = 4,           // "global.vtcm"
};
inline constexpr std::int32_t kMemoryScopeCount = 5;

// TVM's name of `scope` ("global.texture"). Thread-safe.
std::string_view to_string(MemoryScope scope) noexcept;
// The scope a TVM name gives: "" and "global" are global. Anything else is invalid_argument naming
// the text (never a guess: "texture" is not "global.texture"). Thread-safe.
Result<MemoryScope> parse_memory_scope(std::string_view name) noexcept;

constexpr bool is_texture_scope(MemoryScope scope) noexcept {
  return scope == MemoryScope::texture || scope == MemoryScope::texture_nhwc || scope == MemoryScope::texture_weight;
}

// Which images a texture scope makes, by the TVM release whose kernels read them.
// image_array (the default): TVM >= 0.23 (apache/tvm#18523 and main): every texture an image array
//   (OpenCL image2d_array_t) shaped by texture_array_extent, the last axis a pack of elements
//   in one texel (texel_channel_type).
// image2d: TVM <= 0.22: a 2-D image (image2d_t) shaped by texture_extent, the last axis exactly the
//   4 channels of a texel.
enum class TextureLayout : std::int32_t {
  image_array = 0,
  image2d = 1,
};
// "image_array" or "image2d". Thread-safe.
std::string_view to_string(TextureLayout layout) noexcept;
// The layout a name gives ("" is image_array); anything else is invalid_argument. Thread-safe.
Result<TextureLayout> parse_texture_layout(std::string_view name) noexcept;

// A texture in texels of 4 channels (RGBA): `layers` images (an image array's layers; 1 for a
// plain 2-D image) of `height` rows of `width` texels. A plain value.
struct TextureExtent {
  std::uint64_t width = 0;
  std::uint64_t height = 0;
  std::uint64_t layers = 1;
  friend constexpr bool operator==(const TextureExtent&, const TextureExtent&) = default;
};

// The channels of a texel.
inline constexpr std::int64_t kTextureChannels = 4;

// TVM <= 0.22's flattening of a shape into a 2-D image (its DefaultTextureLayoutSeparator and
// ApplyTexture2DFlattening): the last axis is the 4 channels of a texel; of the others, those
// before the scope's separator multiply into the height and the rest into the width. The
// separator is rank - 2 for "global.texture", 1 for "global.texture-weight", and 1 (rank 3) or 2
// for "global.texture-nhwc". Because rows and texels follow the shape's row-major order, a compact
// tensor's bytes are the texture's rows one after the other. Errors, naming the shape:
// invalid_argument for a scope that is no texture, fewer than 2 axes (3 for texture-nhwc), a last
// axis other than 4, a zero or negative extent; out_of_range for a width or height past INT64_MAX
// (every side devrt returns fits in int64, as TVM's sizes do). Thread-safe.
Result<TextureExtent> texture_extent(MemoryScope scope, std::span<const std::int64_t> shape) noexcept;

// TVM >= 0.23's flattening (src/backend/opencl/runtime/texture.h): the last axis is a pack of
// elements in one texel; with the separator rank - 2 ("global.texture"), 1 ("-weight") or 2
// ("-nhwc", every rank), the axes before separator - 1 multiply into the layers, the axis at
// separator - 1 is the height and the axes from the separator to the pack the width. So
// [N, C, H, W, c] is N*C layers of H x W, [O, I, H, W, c] in -weight one layer of O x I*H*W,
// [N, c] in global.texture N layers of 1 x 1 (a separator of 0 puts every axis in the layers) and
// [A, B, c] in -nhwc A layers of B x 1. The bytes keep their order: layer after layer of rows.
// Axes of 0 give sides of 0, as TVM computes them (allocation refuses an empty texture). Errors:
// invalid_argument for a scope that is no texture, fewer than 2 axes (3 for -nhwc), a negative
// axis; out_of_range for a side past INT64_MAX, each side multiplied in the shape's order as TVM
// does. Thread-safe.
Result<TextureExtent> texture_array_extent(MemoryScope scope, std::span<const std::int64_t> shape) noexcept;

// The type of each of the 4 channels of a texel holding `pack` elements of `element`, as TVM main
// chooses it: a pack of 4 is RGBA of the element type itself (DTypeToOpenCLChannelType: int8/16/32,
// uint8/16/32, float16/32); any other pack of 128 bits is RGBA float32 and of 64 bits RGBA float16
// (GetChannelType), the texel holding the pack's bytes as they are (int8 [256, 64, 16]: texels of
// 16 int8 in float32 RGBA). Anything else is invalid_argument naming pack and type. Whether the
// device has the format is Tensor::empty's question (unsupported naming both). Thread-safe.
Result<DataType> texel_channel_type(DataType element, std::int64_t pack) noexcept;

// What a device offers in one scope. Textures: the largest width and height in texels, the most
// layers of an image array (0: none), and whether 16-bit float texels are available; VTCM: the
// arena's bytes. A plain value.
struct ScopeLimits {
  MemoryScope scope = MemoryScope::global;
  std::uint64_t max_width = 0;
  std::uint64_t max_height = 0;
  std::uint64_t max_bytes = 0; // the most one allocation in this scope may take
  bool half_texels = false;
  std::uint64_t max_layers = 0;
};

// `device`'s limits in `scope`. Errors: invalid_argument (no such device), unsupported naming the
// scope and the device when it has no such memory, unavailable. Thread-safe.
Result<ScopeLimits> scope_limits(Device device, MemoryScope scope) noexcept;

} // namespace devrt

#endif // DEVRT_DEVICE_HPP
