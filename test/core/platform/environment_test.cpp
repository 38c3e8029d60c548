// SPDX-License-Identifier: Apache-2.0
// The one rule per kind of environment variable (docs/environment.md), tried on every variable of
// each kind in the table the readers check names against, and the one rule for what a library
// variable may name.
#include <devrt/backend/detail/host_copy.hpp>
#include <devrt/devrt.hpp>
#include <devrt/log.hpp>
#include <devrt/memory_stats.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "support/dynamic_library.hpp"
#include "support/environment.hpp"

namespace {

using devrt::detail::EnvKind;
using devrt::detail::EnvVariable;
using devrt::detail::kEnvironmentVariables;

struct Warnings {
  std::vector<std::string> messages;
  Warnings() { devrt::set_log_sink(&capture, this); }
  ~Warnings() { devrt::set_log_sink(nullptr); }
  Warnings(const Warnings&) = delete;
  Warnings& operator=(const Warnings&) = delete;
  static void capture(devrt::LogLevel level, std::string_view message, void* user) {
    if (level == devrt::LogLevel::warning) static_cast<Warnings*>(user)->messages.emplace_back(message);
  }
};

// Sets `name` for one scope, restoring what was there.
struct ScopedVariable {
  std::string name;
  std::string saved;
  bool was_set;
  ScopedVariable(const char* variable, const std::string& value) : name(variable) {
    const char* old = std::getenv(variable);
    was_set = old != nullptr;
    if (was_set) saved = old;
    ::setenv(variable, value.c_str(), 1);
  }
  ~ScopedVariable() {
    if (was_set) {
      ::setenv(name.c_str(), saved.c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;
};

std::vector<const EnvVariable*> of_kind(EnvKind kind) {
  std::vector<const EnvVariable*> found;
  for (const EnvVariable& variable : kEnvironmentVariables) {
    if (variable.kind == kind) found.push_back(&variable);
  }
  return found;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

} // namespace

TEST_CASE("every number variable refuses a bad value the same way, naming it and the default used", "[environment]") {
  const std::vector<const EnvVariable*> numbers = of_kind(EnvKind::number);
  REQUIRE(numbers.size() >= 5);
  constexpr std::uint64_t kFallback = 777;
  for (const EnvVariable* variable : numbers) {
    INFO(variable->name);
    std::vector<std::string> bad = {"12x", "-1", " 5", "5 ", "0x10", "1e3", "99999999999999999999999"};
    if (variable->max < UINT64_MAX) bad.push_back(std::to_string(variable->max + 1));
    if (variable->min > 0) bad.push_back(std::to_string(variable->min - 1));
    for (const std::string& value : bad) {
      INFO("value '" << value << "'");
      Warnings warnings;
      ScopedVariable set(variable->name, value);
      CHECK(devrt::detail::read_number_env_entry(*variable, kFallback) == kFallback);
      REQUIRE(warnings.messages.size() == 1);
      const std::string& message = warnings.messages.front();
      CHECK(contains(message, std::string(variable->name) + "=" + value));
      CHECK(contains(message, "from " + std::to_string(variable->min) + " to " + std::to_string(variable->max)));
      CHECK(contains(message, "using 777"));
    }
    for (std::uint64_t good : {variable->min, variable->max}) {
      Warnings warnings;
      ScopedVariable set(variable->name, std::to_string(good));
      CHECK(devrt::detail::read_number_env_entry(*variable, kFallback) == good);
      CHECK(warnings.messages.empty());
    }
    Warnings warnings;
    ScopedVariable empty(variable->name, "");
    CHECK(devrt::detail::read_number_env_entry(*variable, kFallback) == kFallback);
    CHECK(warnings.messages.empty());
  }
}

TEST_CASE("every boolean variable refuses a bad value the same way", "[environment]") {
  for (const EnvVariable* variable : of_kind(EnvKind::boolean)) {
    INFO(variable->name);
    for (bool fallback : {false, true}) {
      Warnings warnings;
      ScopedVariable set(variable->name, "maybe");
      CHECK(devrt::detail::read_boolean_env_named(variable->name, fallback) == fallback);
      REQUIRE(warnings.messages.size() == 1);
      CHECK(contains(warnings.messages.front(), std::string(variable->name) + "=maybe is not a boolean"));
    }
    ScopedVariable set(variable->name, "off");
    CHECK_FALSE(devrt::detail::read_boolean_env_named(variable->name, true));
  }
}

TEST_CASE("a path variable is used only when absolute", "[environment]") {
  {
    Warnings warnings;
    ScopedVariable set("TMPDIR", "relative/tmp");
    CHECK(devrt::detail::read_path_env("TMPDIR") == nullptr);
    REQUIRE(warnings.messages.size() == 1);
    CHECK(contains(warnings.messages.front(), "TMPDIR=relative/tmp is not an absolute path; ignored"));
  }
  ScopedVariable set("TMPDIR", "/var/tmp");
  CHECK(std::string(devrt::detail::read_path_env("TMPDIR")) == "/var/tmp");
}

namespace {
constexpr const char* kMissingNames[] = {"libdevrt-no-such-library.so.9"};
constexpr devrt::detail::VendorLibrary kMissing{"test library", kMissingNames, "DEVRT_SODIUM_LIBRARY",
                                                "install the test library"};
} // namespace

TEST_CASE("a library variable names an absolute path or a bare library name, nothing else", "[environment]") {
  SECTION("unset: the library's names, each refusal in the message with the install hint") {
    ScopedVariable set("DEVRT_SODIUM_LIBRARY", "");
    devrt::detail::DynamicLibrary library;
    devrt::Status status = library.open(kMissing);
    CHECK(status.code() == devrt::ErrorCode::unavailable);
    CHECK(contains(std::string(status.message()), "no test library: libdevrt-no-such-library.so.9: "));
    CHECK(contains(std::string(status.message()),
                   "(install the test library, or name the library in DEVRT_SODIUM_LIBRARY)"));
  }
  SECTION("a relative path is refused, and nothing is opened") {
    ScopedVariable set("DEVRT_SODIUM_LIBRARY", "lib/libm.so.6");
    devrt::detail::DynamicLibrary library;
    devrt::Status status = library.open(kMissing);
    CHECK(status.code() == devrt::ErrorCode::unavailable);
    CHECK(contains(std::string(status.message()), "DEVRT_SODIUM_LIBRARY=lib/libm.so.6 is a relative path"));
    CHECK_FALSE(library.is_open());
  }
  SECTION("a bare name goes through the dynamic loader's search, and nothing else is tried") {
    ScopedVariable set("DEVRT_SODIUM_LIBRARY", "libm.so.6");
    devrt::detail::DynamicLibrary library;
    CHECK(library.open(kMissing).ok());
    CHECK(library.path() == "libm.so.6");
  }
  SECTION("an absolute path that does not load names the variable and the loader's reason") {
    ScopedVariable set("DEVRT_SODIUM_LIBRARY", "/nonexistent/libx.so");
    devrt::detail::DynamicLibrary library;
    devrt::Status status = library.open(kMissing);
    CHECK(contains(std::string(status.message()), "no test library: DEVRT_SODIUM_LIBRARY=/nonexistent/libx.so: "));
    CHECK(contains(std::string(status.message()), "cannot open shared object file"));
  }
}

// The readers' consumers, each reading its variable once per process: this test binary is the
// first and only to ask for them, so the variable set here is the one they read.
TEST_CASE("DEVRT_NT_COPY_THRESHOLD: a bad value is named once, with the threshold used instead", "[environment]") {
  Warnings warnings;
  ScopedVariable set("DEVRT_NT_COPY_THRESHOLD", "8MiB");
  const std::size_t threshold = devrt::detail::large_copy_threshold();
  CHECK(devrt::detail::large_copy_threshold() == threshold);
#if defined(__x86_64__)
  REQUIRE(warnings.messages.size() == 1);
  CHECK(contains(warnings.messages.front(), "DEVRT_NT_COPY_THRESHOLD=8MiB is not a whole number from 0 to "));
  CHECK(contains(warnings.messages.front(), "; using " + std::to_string(threshold)));
#else
  CHECK(warnings.messages.empty()); // no streaming copies here: the variable is not read
#endif
}

TEST_CASE("DEVRT_BUFFER_CACHE_LIMIT: a bad value is named once, whatever the devices", "[environment]") {
  Warnings warnings;
  ScopedVariable set("DEVRT_BUFFER_CACHE_LIMIT", "-1");
  devrt::Result<devrt::PoolStats> before = devrt::buffer_cache_stats(devrt::kHostDevice);
  REQUIRE(before.ok());
  CHECK(before->cache_limit_bytes == std::size_t{256} << 20);
  {
    devrt::Result<devrt::Buffer> buffer = devrt::Buffer::allocate(devrt::kHostDevice, 4096);
    REQUIRE(buffer.ok());
  }
  devrt::Result<devrt::PoolStats> after = devrt::buffer_cache_stats(devrt::kHostDevice);
  REQUIRE(after.ok());
  CHECK(after->cache_limit_bytes == std::size_t{256} << 20);
  REQUIRE(warnings.messages.size() == 1);
  CHECK(contains(warnings.messages.front(), "DEVRT_BUFFER_CACHE_LIMIT=-1 is not a whole number from 0 to "));
  CHECK(contains(warnings.messages.front(), "; using 268435456"));
}
