// SPDX-License-Identifier: Apache-2.0
// The plugin loader: load_backend/load_plugin outcomes, and the fault matrix. Every refused
// plugin leaves Registry::global() exactly as it was. Runs with DEVRT_BACKEND_AUTOLOAD=0 and
// DEVRT_PLUGIN_PATH=<test/plugins build dir> (test/meson.build).
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <devrt/plugin.hpp>
#include <devrt/registry.hpp>

using devrt::ErrorCode;
using devrt::PluginLoad;

namespace {

std::vector<std::string> registry_names() {
  std::vector<std::string> names;
  devrt::Registry& registry = devrt::Registry::global();
  for (std::size_t i = 0; i < registry.size(); ++i) names.emplace_back(registry.at(i).name());
  return names;
}

std::string fault_path(const char* fault) {
  return std::string(DEVRT_TEST_PLUGIN_DIR) + "/libdevrt_fault_" + fault + ".so";
}

std::string write_temp(const std::string& name, const std::string& bytes) {
  std::filesystem::path path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

// Loads `path`, expects failure with `code` and `text` (and the path) in the message, and an
// unchanged registry.
void expect_refused(const std::string& path, ErrorCode code, const std::string& text) {
  INFO(path);
  std::vector<std::string> before = registry_names();
  devrt::Result<PluginLoad> result = devrt::load_plugin(path);
  REQUIRE_FALSE(result.ok());
  INFO(result.status().message());
  CHECK(result.status().code() == code);
  CHECK_THAT(std::string(result.status().message()), Catch::Contains(text) && Catch::Contains(path));
  CHECK(registry_names() == before);
}

} // namespace

TEST_CASE("broken plugins are refused with their cause and change nothing", "[plugins]") {
  expect_refused("/nonexistent/libdevrt_gone.so", ErrorCode::invalid_argument, "No such file");
  std::string random_bytes(4096, '\0');
  for (std::size_t i = 0; i < random_bytes.size(); ++i) random_bytes[i] = static_cast<char>(i * 2654435761u >> 13);
  expect_refused(write_temp("libdevrt_random.so", random_bytes), ErrorCode::invalid_argument, "dlopen failed");
  // A 32-bit ARM ELF (what arm-none-eabi produces): the dynamic loader refuses its class.
  std::string arm(4096, '\0');
  arm.replace(0, 7,
              "\x7f"
              "ELF\x01\x01\x01");
  arm[16] = 3;  // ET_DYN
  arm[18] = 40; // EM_ARM
  expect_refused(write_temp("libdevrt_arm.so", arm), ErrorCode::invalid_argument, "wrong ELF class");
  expect_refused(fault_path("no_entry"), ErrorCode::invalid_argument, "has no devrt_plugin_entry");
  expect_refused(fault_path("abi_version"), ErrorCode::abi_mismatch, "ABI version 42");
  expect_refused(fault_path("table_size"), ErrorCode::abi_mismatch, "16 bytes");
  expect_refused(fault_path("bad_table"), ErrorCode::invalid_argument, "invalid backend name");
  // A plugin's backend whose kind is taken: refused, naming the backend that has it.
  expect_refused(fault_path("half_group"), ErrorCode::already_exists,
                 "claims device kind cpu, already served by backend 'cpu'");
  CHECK_FALSE(devrt::Registry::global().find("half_first"));
}

TEST_CASE("a second plugin with a taken backend name is refused", "[plugins]") {
  devrt::Result<PluginLoad> twin = devrt::load_plugin(fault_path("twin"));
  INFO(twin.status().message());
  REQUIRE(twin.ok());
  CHECK(*twin == PluginLoad::loaded);
  CHECK(devrt::Registry::global().find("twin"));
  CHECK(*devrt::load_plugin(fault_path("twin")) == PluginLoad::already_loaded);
  expect_refused(fault_path("duplicate"), ErrorCode::already_exists, "already registered");
}

TEST_CASE("every status code a plugin returns arrives with its code and reason", "[plugins][abi]") {
  REQUIRE(devrt::load_plugin(fault_path("twin")).ok());
  devrt::BackendRef twin = devrt::Registry::global().find("twin");
  REQUIRE(twin);
  for (std::int32_t code = DEVRT_STATUS_INVALID_ARGUMENT; code <= DEVRT_STATUS_LAST + 1; ++code) {
    devrt_copy_desc desc{};
    desc.nbytes = static_cast<std::size_t>(code);
    devrt::Status status = twin.copy(0, desc);
    INFO("code " << code << ": " << status.message());
    if (code <= DEVRT_STATUS_LAST) {
      CHECK(status.code() == static_cast<ErrorCode>(code));
      CHECK_THAT(std::string(status.message()), Catch::Contains("twin returns code " + std::to_string(code)));
    } else {
      CHECK(status.code() == ErrorCode::internal);
      CHECK_THAT(std::string(status.message()), Catch::Contains("unknown status"));
    }
  }
}

TEST_CASE("load_backend finds, loads once, and tells built-in from missing", "[plugins]") {
  devrt::Result<PluginLoad> missing = devrt::load_backend("nosuch");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == ErrorCode::not_found);
  CHECK_THAT(std::string(missing.status().message()),
             Catch::Contains("libdevrt_nosuch.so") && Catch::Contains(DEVRT_TEST_PLUGIN_DIR));
  CHECK(*devrt::load_backend("cpu") == PluginLoad::built_in);

  devrt::Result<PluginLoad> example = devrt::load_backend("example");
  INFO(example.status().message());
  REQUIRE(example.ok());
  CHECK(*example == PluginLoad::loaded);
  CHECK(devrt::is_loaded("example"));
  CHECK(*devrt::load_backend("example") == PluginLoad::already_loaded);
  bool listed = false;
  for (const devrt::LoadedPlugin& plugin : devrt::loaded_plugins()) {
    listed |= plugin.path.find("libdevrt_example.so") != std::string::npos && plugin.backends.size() == 1 &&
              plugin.backends[0] == "example";
  }
  CHECK(listed);
  CHECK(devrt::device_exists({devrt::DeviceKind::ext_dev, 0}));
  std::vector<std::string> path = devrt::plugin_search_path();
  REQUIRE(path.size() >= 2);
  CHECK(path.front() == DEVRT_TEST_PLUGIN_DIR);
}

TEST_CASE("eight threads loading one plugin load it once", "[plugins][concurrency]") {
  std::atomic<int> loaded{0}, already{0}, failed{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      devrt::Result<PluginLoad> result = devrt::load_backend("example");
      if (!result.ok()) {
        ++failed;
      } else if (*result == PluginLoad::loaded) {
        ++loaded;
      } else {
        ++already;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(failed == 0);
  CHECK(loaded <= 1);
  CHECK(loaded + already == 8);
  std::size_t examples = 0;
  for (const std::string& name : registry_names()) examples += name == "example" ? 1 : 0;
  CHECK(examples == 1);
}
