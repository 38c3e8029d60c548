// SPDX-License-Identifier: Apache-2.0
// Device kinds and devices as text (devrt/device.hpp): names, parsing "kind:id", and a
// compile-time check that the kinds the build declares agree with DeviceKind.
#include <devrt/device.hpp>

#include <devrt/config.hpp>

#include <array>
#include <charconv>
#include <cstdint>

namespace devrt {
namespace {

struct KindName {
  DeviceKind kind;
  std::string_view name;
};

constexpr std::array kKindNames {
  KindName{DeviceKind::cpu, "cpu"}, KindName{DeviceKind::cuda, "cuda"}, KindName{DeviceKind::cuda_host, "cuda_host"},
      KindName{DeviceKind::opencl, "opencl"}, KindName{DeviceKind::vulkan, "vulkan"},
      KindName{DeviceKind::metal, "metal"}, KindName{DeviceKind::vpi, "vpi"}, KindName{DeviceKind::rocm, "rocm"},
      KindName{DeviceKind::rocm_host, "rocm_host"}, KindName{DeviceKind::ext_dev, "ext_dev"},
      KindName{DeviceKind::cuda_managed, "cuda_managed"}, KindName{DeviceKind::oneapi, "oneapi"},
      KindName{DeviceKind::webgpu, "webgpu"}, KindName{DeviceKind::hexagon, "hexagon"},
#if !DEVRT_BARE_METAL // remote devices need an operating system (and 16 bytes of firmware are worth keeping)
      KindName{DeviceKind::remote, "remote"},
#endif
};

// The backends' device kinds are declared once, each in its folder's meson.build; a backend that
// registers under the name of one of DLPack's device types must use that type's number, and a
// number of DeviceKind's must keep its name.
struct DeclaredKind {
  std::string_view name;
  std::int32_t kind;
};
constexpr DeclaredKind kDeclaredKinds[] = {DEVRT_DECLARED_KINDS};
constexpr bool declared_kinds_agree_with_device_kind() noexcept {
  for (const DeclaredKind& declared : kDeclaredKinds) {
    for (const KindName& known : kKindNames) {
      if ((known.name == declared.name) != (static_cast<std::int32_t>(known.kind) == declared.kind)) return false;
    }
  }
  return true;
}
static_assert(declared_kinds_agree_with_device_kind(),
              "a backend's meson.build declares a device kind that contradicts devrt::DeviceKind (DEVRT_KIND_* in "
              "<devrt/config.hpp>): the name of a DeviceKind with another number, or its number under another name");

} // namespace

std::string_view device_kind_name(DeviceKind kind) noexcept {
  for (const KindName& entry : kKindNames) {
    if (entry.kind == kind) return entry.name;
  }
  return {};
}

Result<DeviceKind> parse_device_kind(std::string_view name) noexcept {
  for (const KindName& entry : kKindNames) {
    if (entry.name == name) return entry.kind;
  }
  return make_error(ErrorCode::not_found, "unknown device kind '", name, "'");
}

namespace detail {

void append_part(MessageBuilder& m, DeviceKind kind) noexcept {
  std::string_view name = device_kind_name(kind);
  if (!name.empty()) {
    m.append(name);
  } else {
    m.append("kind<");
    m.append_signed(static_cast<std::int32_t>(kind));
    m.append(">");
  }
}

void append_part(MessageBuilder& m, Device device) noexcept {
  append_part(m, device.kind);
  m.append(":");
  m.append_signed(device.id);
}

} // namespace detail

std::string to_string(Device device) {
  detail::MessageBuilder m;
  detail::append_part(m, device);
  return std::string(m.view());
}

Result<Device> parse_device(std::string_view text) noexcept {
  std::string_view kind_text = text;
  std::int32_t id = 0;
  if (std::size_t colon = text.find(':'); colon != std::string_view::npos) {
    kind_text = text.substr(0, colon);
    std::string_view id_text = text.substr(colon + 1);
    auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
    if (ec != std::errc() || end != id_text.data() + id_text.size() || id < 0 || id_text.empty()) {
      return make_error(ErrorCode::invalid_argument, "malformed device '", text,
                        "': expected <kind>:<non-negative index>, e.g. cuda:0");
    }
  }
  Result<DeviceKind> kind = parse_device_kind(kind_text);
  if (!kind.ok()) {
    return make_error(ErrorCode::invalid_argument, "malformed device '", text, "': unknown device kind '", kind_text,
                      "'");
  }
  return Device{*kind, id};
}

} // namespace devrt
