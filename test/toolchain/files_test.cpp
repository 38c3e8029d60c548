// SPDX-License-Identifier: Apache-2.0
#include <devrt/toolchain/files.hpp>
#include <devrt/toolchain/process.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "toolchain_test_util.hpp"

using devrt::ErrorCode;
using namespace devrt::toolchain;
using namespace std::chrono_literals;

TEST_CASE("a TempDir is removed with its contents unless kept", "[files]") {
  std::string path;
  {
    devrt::Result<TempDir> dir = TempDir::create("devrt-test-");
    REQUIRE(dir.ok());
    path = dir->path();
    CHECK(std::filesystem::path(path).filename().string().rfind("devrt-test-", 0) == 0);
    std::filesystem::create_directories(dir->relpath("a/b"));
    REQUIRE(write_file(dir->relpath("a/b/file.txt"), "hello").ok());
    CHECK(std::filesystem::exists(path));
  }
  CHECK(!std::filesystem::exists(path));
  {
    devrt::Result<TempDir> dir = TempDir::create();
    REQUIRE(dir.ok());
    path = dir->path();
    dir->keep();
  }
  CHECK(std::filesystem::exists(path));
  std::filesystem::remove_all(path);
  ::setenv("DEVRT_KEEP_TEMPDIR", "1", 1);
  {
    devrt::Result<TempDir> dir = TempDir::create();
    REQUIRE(dir.ok());
    path = dir->path();
    CHECK(dir->kept());
  }
  ::unsetenv("DEVRT_KEEP_TEMPDIR");
  CHECK(std::filesystem::exists(path));
  std::filesystem::remove_all(path);
  CHECK(TempDir::create("bad/prefix").status().code() == ErrorCode::invalid_argument);
}

TEST_CASE("a file lock excludes another process until released", "[files]") {
  devrt::Result<TempDir> dir = TempDir::create();
  REQUIRE(dir.ok());
  std::string lock_path = dir->relpath("lock");
  devrt::Result<FileLock> held = FileLock::acquire(lock_path);
  REQUIRE(held.ok());

  // Another process: try_acquire must fail while the lock is held; acquire must then wait for it.
  pid_t child = ::fork();
  if (child == 0) {
    devrt::Result<FileLock> attempt = FileLock::try_acquire(lock_path);
    if (attempt.ok() || attempt.status().code() != ErrorCode::unavailable) ::_exit(10);
    auto start = std::chrono::steady_clock::now();
    devrt::Result<FileLock> waited = FileLock::acquire(lock_path);
    if (!waited.ok()) ::_exit(11);
    ::_exit(std::chrono::steady_clock::now() - start >= 150ms ? 0 : 12);
  }
  std::this_thread::sleep_for(300ms);
  held->release();
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);

  // Within one process, a second lock on the file is refused too (flock is per open file).
  devrt::Result<FileLock> first = FileLock::try_acquire(lock_path);
  REQUIRE(first.ok());
  devrt::Result<FileLock> second = FileLock::try_acquire(lock_path);
  CHECK(second.status().code() == ErrorCode::unavailable);
  CHECK(contains(second.status().message(), "held by another owner"));
  CHECK(FileLock::acquire("/devrt/no/such/dir/lock").status().code() == ErrorCode::invalid_argument);
}

TEST_CASE("is_source_path tells paths from code", "[files]") {
  CHECK(is_source_path("/bin/sh"));        // exists
  CHECK(is_source_path("kernel.cu"));      // a source suffix
  CHECK(is_source_path("  lib/model.o ")); // spaces around
  CHECK(is_source_path("module.ll"));
  CHECK(!is_source_path("int main() {}\n"));
  CHECK(!is_source_path("define void @f() {\n  ret void\n}"));
  CHECK(!is_source_path("not-a-source"));
  CHECK(!is_source_path(""));
}

TEST_CASE("read_file and write_file round-trip bytes and report missing files", "[files]") {
  devrt::Result<TempDir> dir = TempDir::create();
  REQUIRE(dir.ok());
  std::string bytes(100000, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7);
  REQUIRE(write_file(dir->relpath("blob"), bytes).ok());
  devrt::Result<std::string> back = read_file(dir->relpath("blob"));
  REQUIRE(back.ok());
  CHECK(*back == bytes);
  CHECK(read_file(dir->relpath("missing")).status().code() == ErrorCode::not_found);
}
