// SPDX-License-Identifier: Apache-2.0
// The compile-time path's errors, out of line so that its calls stay short
// (devrt/backend/direct.hpp).
#include <devrt/backend/direct.hpp>

namespace devrt::direct::detail {

Status call_error(Device device, const char* call, const Status& status) noexcept {
  return make_error(status.code(), device, " ", call, ": ", status.message());
}

Status allocation_error(Device device, std::size_t nbytes, std::size_t alignment, const Status& status) noexcept {
  return make_error(status.code(), device, " allocate(", nbytes, " bytes, align ", alignment, "): ", status.message());
}

Status module_load_error(Device device, const Status& status, std::string_view log) noexcept {
  if (log.empty()) return call_error(device, "module_load", status);
  return make_error(status.code(), device, " module_load: ", status.message(), "\nbuild log:\n", log);
}

Status copy_reach_error(std::string_view backend_name, const MemorySpan& src, const MemorySpan& dst) noexcept {
  return make_error(ErrorCode::invalid_argument, "copy ", src.device, " -> ", dst.device, ": the compile-time path of ",
                    backend_name, " copies between ", backend_name,
                    " memory and host memory only; devrt::copy reaches every backend");
}

Status empty_handle_error(const char* what) noexcept {
  return make_error(ErrorCode::invalid_argument, "empty devrt::direct::", what);
}

} // namespace devrt::direct::detail
