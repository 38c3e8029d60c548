// SPDX-License-Identifier: Apache-2.0
#include <devrt/backend/backend.hpp>
#include <devrt/devrt.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace {

struct Captured {
  std::vector<std::pair<devrt::LogLevel, std::string>> messages;
};

void capture(devrt::LogLevel level, std::string_view message, void* user) {
  static_cast<Captured*>(user)->messages.emplace_back(level, std::string(message));
}

// Restores the default sink and level however a test ends.
struct SinkScope {
  explicit SinkScope(Captured& c) : saved(devrt::log_level()) { devrt::set_log_sink(&capture, &c); }
  ~SinkScope() {
    devrt::set_log_sink(nullptr);
    devrt::set_log_level(saved);
  }
  devrt::LogLevel saved;
};

} // namespace

TEST_CASE("messages at or above the level reach the application's sink", "[log]") {
  Captured captured;
  SinkScope scope(captured);
  devrt::set_log_level(devrt::LogLevel::info);
  DEVRT_LOG(debug, "hidden ", 1);
  DEVRT_LOG(info, "shown ", 2, " on ", devrt::Device{devrt::DeviceKind::opencl, 3});
  devrt::log_message(devrt::LogLevel::error, "direct");
  devrt::log_message(devrt::LogLevel::off, "never");
#if DEVRT_ENABLE_LOGGING
  REQUIRE(captured.messages.size() == 2);
  CHECK(captured.messages[0].first == devrt::LogLevel::info);
  CHECK(captured.messages[0].second == "shown 2 on opencl:3");
#else
  REQUIRE(captured.messages.size() == 1);
#endif
  CHECK(captured.messages.back().second == "direct");

  devrt::set_log_level(devrt::LogLevel::off);
  devrt::log_message(devrt::LogLevel::error, "silenced");
  CHECK(captured.messages.back().second == "direct");
}

TEST_CASE("errors inside devrt are logged through the sink", "[log]") {
  Captured captured;
  SinkScope scope(captured);
  devrt::set_log_level(devrt::LogLevel::warning);
  devrt::Registry registry;
  devrt_backend_table bogus{};
  // A registrar failing is logged, not fatal.
  devrt::detail::BackendRegistrar registrar(&bogus);
#if DEVRT_ENABLE_LOGGING
  REQUIRE_FALSE(captured.messages.empty());
  CHECK(captured.messages.back().first == devrt::LogLevel::error);
  CHECK(captured.messages.back().second.find("ABI version 0") != std::string::npos);
#endif
}

TEST_CASE("level names are stable", "[log]") {
  CHECK(devrt::log_level_name(devrt::LogLevel::trace) == "trace");
  CHECK(devrt::log_level_name(devrt::LogLevel::warning) == "warning");
  CHECK(devrt::log_level_name(devrt::LogLevel::off) == "off");
}
