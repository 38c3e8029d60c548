// SPDX-License-Identifier: Apache-2.0
// Logging: levels, a process-wide sink an application can replace, and macros that compile to
// nothing when devrt is configured with -Dlogging=false.
#ifndef DEVRT_LOG_HPP
#define DEVRT_LOG_HPP

#include <cstdint>
#include <string_view>

#include <devrt/config.hpp>
#include <devrt/detail/message.hpp>
#include <devrt/status.hpp>

namespace devrt {

enum class LogLevel : std::int32_t { trace = 0, debug = 1, info = 2, warning = 3, error = 4, off = 5 };

// Receives every message at or above the current level. Called from whichever thread logged;
// the sink must be thread-safe. `message` is valid only during the call.
using LogSink = void (*)(LogLevel level, std::string_view message, void* user_data);

// Routes messages to `sink` (nullptr restores the default, which writes to stderr). Thread-safe;
// a sink being replaced may still receive a message already in flight.
void set_log_sink(LogSink sink, void* user_data = nullptr) noexcept;

// The current threshold. Initially from DEVRT_LOG_LEVEL (trace|debug|info|warning|error|off, or
// 0-5), default warning. Thread-safe.
LogLevel log_level() noexcept;
void set_log_level(LogLevel level) noexcept;

// "warning" etc. Thread-safe.
std::string_view log_level_name(LogLevel level) noexcept;

// Sends one message to the sink if `level` passes the threshold. Thread-safe.
void log_message(LogLevel level, std::string_view message) noexcept;

namespace detail {
template <class... Parts>
void log_parts(LogLevel level, const Parts&... parts) noexcept {
  if (level < log_level()) return;
  MessageBuilder message;
  append_parts(message, parts...);
  log_message(level, message.view());
}
} // namespace detail

} // namespace devrt

#if DEVRT_ENABLE_LOGGING
// DEVRT_LOG(warning, "opencl: ", count, " platforms") — parts as for devrt::make_error.
#define DEVRT_LOG(level, ...) ::devrt::detail::log_parts(::devrt::LogLevel::level, __VA_ARGS__)
#else
#define DEVRT_LOG(level, ...) static_cast<void>(0)
#endif

#endif // DEVRT_LOG_HPP
