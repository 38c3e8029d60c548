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

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <devrt/backend/registry.hpp>
#include <devrt/devrt.hpp>
#include <devrt/plugin.hpp>

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

// A directory of this process's own (mode 0700): /tmp itself is writable by every user, and the
// loader refuses plugins there.
const std::filesystem::path& private_directory() {
  static const std::filesystem::path directory = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "devrt-plugin-test-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    return std::filesystem::path(pattern);
  }();
  return directory;
}

std::string write_temp(const std::string& name, const std::string& bytes) {
  std::filesystem::path path = private_directory() / name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

std::string command_output(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  ::pclose(pipe);
  return out;
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
  expect_refused(write_temp("libdevrt_random.so", random_bytes), ErrorCode::invalid_argument,
                 "refused before dlopen: not an ELF file");
  expect_refused(write_temp("libdevrt_empty.so", ""), ErrorCode::invalid_argument, "the file is empty (0 bytes)");
  expect_refused(write_temp("libdevrt_short.so", "\x7f"
                                                 "ELF\x02\x01"),
                 ErrorCode::invalid_argument, "shorter than an ELF header");
  // A 32-bit ARM ELF (what arm-none-eabi produces): refused by its class before dlopen sees it.
  std::string arm(4096, '\0');
  arm.replace(0, 7,
              "\x7f"
              "ELF\x01\x01\x01");
  arm[16] = 3;  // ET_DYN
  arm[18] = 40; // EM_ARM
  expect_refused(write_temp("libdevrt_arm.so", arm), ErrorCode::invalid_argument,
                 "it is a 32-bit ELF file and this process is 64-bit");
  expect_refused(fault_path("no_entry"), ErrorCode::invalid_argument, "has no devrt_plugin_entry");
  // Built for ABI 2 (before tables had a context): refused, naming both versions and why.
  expect_refused(fault_path("abi_version"), ErrorCode::abi_mismatch,
                 "speaks backend ABI version 2, this devrt speaks 4 (its table-level functions take no context");
  expect_refused(fault_path("table_size"), ErrorCode::abi_mismatch, "16 bytes");
  expect_refused(fault_path("bad_table"), ErrorCode::invalid_argument, "invalid backend name");
}

TEST_CASE("a plugin's second implementation of a taken kind stands by beside the first", "[plugins]") {
  // half_group's second backend implements the cpu kind, which the built-in cpu backend serves.
  devrt::Result<PluginLoad> half = devrt::load_plugin(fault_path("half_group"));
  INFO(half.status().message());
  REQUIRE(half.ok());
  devrt::BackendRef second = devrt::Registry::global().find("half_second");
  REQUIRE(second);
  CHECK(devrt::Registry::global().find(devrt::DeviceKind::cpu).name() == "cpu"); // registered and available first
  devrt::Status standing = devrt::Registry::global().standing_by(second);
  CHECK(standing.code() == ErrorCode::unavailable);
  CHECK_THAT(std::string(standing.message()), Catch::Contains("stands by") && Catch::Contains("served by 'cpu'"));
  CHECK(devrt::Registry::global().standing_by(devrt::Registry::global().find("cpu")).ok());
  // Everything on the kind still goes to the serving implementation.
  devrt::Result<devrt::Buffer> buffer = devrt::Buffer::allocate(devrt::kHostDevice, 64);
  CHECK(buffer.ok());
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
    devrt::Status status = twin.copy(0, 0, 0, desc);
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

TEST_CASE("plugins that another user could have replaced are refused, with the reason", "[plugins][trust]") {
  namespace fs = std::filesystem;
  fs::path directory = private_directory() / "trust";
  fs::create_directories(directory);
  fs::permissions(directory, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                 fs::perms::others_read | fs::perms::others_exec);
  fs::path plugin = directory / "libdevrt_trusted_copy.so";
  fs::copy_file(std::string(DEVRT_TEST_PLUGIN_DIR) + "/libdevrt_example.so", plugin,
                fs::copy_options::overwrite_existing);
  auto expect_distrusted = [&](const std::string& reason) {
    expect_refused(plugin.string(), ErrorCode::invalid_argument, reason);
    bool listed = false;
    static_cast<void>(devrt::load_all_backends());
    for (const devrt::PluginFailure& failure : devrt::plugin_failures()) {
      listed = listed || (failure.path == plugin.string() && failure.reason.find(reason) != std::string::npos);
    }
    CHECK(listed); // the failure list (devrt-info shows it) says why
  };

  // A file anyone may write.
  REQUIRE(::chmod(plugin.c_str(), 0666) == 0);
  auto saved = ::getenv("DEVRT_PLUGIN_PATH");
  std::string saved_path = saved != nullptr ? saved : "";
  REQUIRE(::setenv("DEVRT_PLUGIN_PATH", directory.c_str(), 1) == 0);
  expect_distrusted("is writable by other users (mode 0666)");
  // A directory anyone may write (the file could be swapped).
  REQUIRE(::chmod(plugin.c_str(), 0755) == 0);
  REQUIRE(::chmod(directory.c_str(), 0777) == 0);
  expect_distrusted("directory " + directory.string() + " is writable by other users (mode 0777)");
  REQUIRE(::chmod(directory.c_str(), 0755) == 0);
  // A file that belongs to another user (needs root to make).
  if (::geteuid() == 0) {
    REQUIRE(::chown(plugin.c_str(), 12345, 12345) == 0);
    expect_distrusted("belongs to uid 12345, neither root nor this user");
  } else {
    WARN("skip: making a file of another user needs root");
  }
  REQUIRE(::setenv("DEVRT_PLUGIN_PATH", saved_path.c_str(), 1) == 0);
  fs::remove(plugin);
}

TEST_CASE("relative search path entries are refused and listed", "[plugins][trust]") {
  auto saved = ::getenv("DEVRT_PLUGIN_PATH");
  std::string saved_path = saved != nullptr ? saved : "";
  REQUIRE(::setenv("DEVRT_PLUGIN_PATH", "relative/plugins", 1) == 0);
  for (const std::string& directory : devrt::plugin_search_path()) CHECK(directory.front() == '/');
  static_cast<void>(devrt::load_all_backends());
  bool listed = false;
  for (const devrt::PluginFailure& failure : devrt::plugin_failures()) {
    listed = listed || (failure.path == "relative/plugins" && failure.reason.find("is relative") != std::string::npos);
  }
  CHECK(listed);
  REQUIRE(::setenv("DEVRT_PLUGIN_PATH", saved_path.c_str(), 1) == 0);
}

TEST_CASE("a set-user-ID program ignores DEVRT_PLUGIN_PATH", "[plugins][trust]") {
  if (::geteuid() != 0) {
    WARN("skip: making a set-user-ID program of another user needs root");
    return;
  }
  namespace fs = std::filesystem;
  fs::path directory = private_directory() / "setuid";
  fs::create_directories(directory);
  REQUIRE(::chmod(directory.c_str(), 0755) == 0);
  REQUIRE(::chmod(private_directory().c_str(), 0755) == 0);
  fs::path program = directory / "search-path";
  fs::copy_file(DEVRT_TEST_SEARCH_PATH_EXE, program, fs::copy_options::overwrite_existing);
  const std::string run = "DEVRT_PLUGIN_PATH=/devrt-test-marker " + program.string();
  // The plain copy honours the variable: the check below is meaningful.
  CHECK_THAT(command_output(run), Catch::Contains("/devrt-test-marker"));
  // Owned by nobody and set-user-ID: run by root, the process is set-user-ID (AT_SECURE).
  REQUIRE(::chown(program.c_str(), 65534, 65534) == 0);
  REQUIRE(::chmod(program.c_str(), 04755) == 0);
  std::string output = command_output(run);
  INFO(output);
  CHECK_FALSE(output.empty());
  CHECK_THAT(output, !Catch::Contains("/devrt-test-marker"));
  REQUIRE(::chmod(private_directory().c_str(), 0700) == 0);
}
