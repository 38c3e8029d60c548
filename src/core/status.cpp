#include <devrt/status.hpp>

#include <cstdio>
#include <cstdlib>

namespace devrt {

std::string_view error_code_name(ErrorCode code) noexcept {
  switch (code) {
  case ErrorCode::ok: return "ok";
  case ErrorCode::invalid_argument: return "invalid_argument";
  case ErrorCode::out_of_range: return "out_of_range";
  case ErrorCode::unavailable: return "unavailable";
  case ErrorCode::unsupported: return "unsupported";
  case ErrorCode::out_of_memory: return "out_of_memory";
  case ErrorCode::driver_error: return "driver_error";
  case ErrorCode::internal: return "internal";
  case ErrorCode::not_found: return "not_found";
  case ErrorCode::already_exists: return "already_exists";
  case ErrorCode::abi_mismatch: return "abi_mismatch";
  }
  return "unknown";
}

namespace detail {

void fatal_status(const char* what, const Status& status) noexcept {
  std::string_view name = error_code_name(status.code());
  std::string_view message = status.message();
  static_cast<void>(std::fprintf(stderr, "devrt: fatal: %s: %.*s: %.*s\n", what, static_cast<int>(name.size()),
                                 name.data(), static_cast<int>(message.size()), message.data()));
  std::abort();
}

} // namespace detail
} // namespace devrt
