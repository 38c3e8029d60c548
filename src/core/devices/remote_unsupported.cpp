// SPDX-License-Identifier: Apache-2.0
// devrt::remote in a build without the remote backend (no UCX headers, or -Dremote=disabled).
#include <devrt/remote.hpp>

namespace devrt::remote {
namespace {
Status not_built() noexcept {
  return make_error(ErrorCode::unsupported, "devrt was built without the remote backend (it needs <ucp/api/ucp.h> and "
                                            "<sodium.h>, Debian: libucx-dev libsodium-dev)");
}
} // namespace

Result<std::vector<Device>> connect(std::string_view, const ConnectOptions&) noexcept { return not_built(); }
Result<std::vector<Device>> connect(std::string_view) noexcept { return not_built(); }
Result<DeviceInfo> describe(Device) noexcept { return not_built(); }
Result<ServerStats> server_stats(Device) noexcept { return not_built(); }

} // namespace devrt::remote
