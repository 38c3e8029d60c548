// SPDX-License-Identifier: Apache-2.0
// devrt's log (devrt/log.hpp): the level from DEVRT_LOG_LEVEL, and the sink (stderr unless the
// application sets one).
#include <devrt/log.hpp>

#include <devrt/config.hpp>

#include <devrt/backend/detail/mutex.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "support/environment_variables.hpp"

namespace devrt {
namespace {

// One fwrite per line (lines from several threads do not interleave), and no printf: firmware
// links no formatted-output code through devrt.
void stderr_sink(LogLevel level, std::string_view message, void*) {
  detail::MessageBuilder line;
  detail::append_parts(line, "devrt ", log_level_name(level), ": ", message, "\n");
  static_cast<void>(std::fwrite(line.view().data(), 1, line.view().size(), stderr));
}

// The sink and its user data change together, so both are guarded by one mutex; the sink is
// called outside it so that a sink may itself log.
detail::Mutex g_sink_mutex;
LogSink g_sink = nullptr;
void* g_sink_user_data = nullptr;
std::atomic<std::int32_t> g_level{-1};

LogLevel level_from_environment() noexcept {
#if DEVRT_BARE_METAL
  return LogLevel::warning; // no environment; set_log_level() changes it
#else
  // Read once per process (log_level caches it); nothing in devrt calls setenv.
  const char* text = detail::read_text_env("DEVRT_LOG_LEVEL");
  if (text == nullptr) return LogLevel::warning;
  static constexpr const char* kNames[] = {"trace", "debug", "info", "warning", "error", "off"};
  for (std::int32_t i = 0; i < 6; ++i) {
    if (std::strcmp(text, kNames[i]) == 0) return static_cast<LogLevel>(i);
  }
  if (text[0] >= '0' && text[0] <= '5' && text[1] == '\0') return static_cast<LogLevel>(text[0] - '0');
  detail::MessageBuilder warning;
  detail::append_parts(warning, "ignoring DEVRT_LOG_LEVEL=", text, " (expected trace|debug|info|warning|error|off)");
  stderr_sink(LogLevel::warning, warning.view(), nullptr);
  return LogLevel::warning;
#endif
}

} // namespace

std::string_view log_level_name(LogLevel level) noexcept {
  switch (level) {
  case LogLevel::trace: return "trace";
  case LogLevel::debug: return "debug";
  case LogLevel::info: return "info";
  case LogLevel::warning: return "warning";
  case LogLevel::error: return "error";
  case LogLevel::off: return "off";
  }
  return "unknown";
}

LogLevel log_level() noexcept {
  std::int32_t level = g_level.load(std::memory_order_relaxed);
  if (level < 0) {
    std::int32_t expected = -1;
    level = static_cast<std::int32_t>(level_from_environment());
    if (!g_level.compare_exchange_strong(expected, level, std::memory_order_relaxed)) level = expected;
  }
  return static_cast<LogLevel>(level);
}

void set_log_level(LogLevel level) noexcept {
  g_level.store(static_cast<std::int32_t>(level), std::memory_order_relaxed);
}

void set_log_sink(LogSink sink, void* user_data) noexcept {
  detail::LockGuard lock(g_sink_mutex);
  g_sink = sink;
  g_sink_user_data = user_data;
}

void log_message(LogLevel level, std::string_view message) noexcept {
  if (level < log_level() || level == LogLevel::off) return;
  LogSink sink;
  void* user_data;
  {
    detail::LockGuard lock(g_sink_mutex);
    sink = g_sink;
    user_data = g_sink_user_data;
  }
  if (sink != nullptr) {
    sink(level, message, user_data);
  } else {
    stderr_sink(level, message, nullptr);
  }
}

} // namespace devrt
