// SPDX-License-Identifier: Apache-2.0
#include <devrt/toolchain/files.hpp>
#include <devrt/toolchain/process.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "toolchain_test_util.hpp"

using devrt::ErrorCode;
using namespace devrt::toolchain;
using namespace std::chrono_literals;

TEST_CASE("run_process captures stdout, stderr and the exit status", "[process]") {
  ProcessOptions options;
  options.argv = {"sh", "-c", "echo out; echo err >&2; exit 3"};
  devrt::Result<ProcessResult> result = run_process(options);
  REQUIRE(result.ok());
  CHECK(result->out == "out\n");
  CHECK(result->err == "err\n");
  CHECK(result->exit_code == 3);
  CHECK(!result->succeeded());
  CHECK(result->describe() == "exited with status 3");
  devrt::Status checked = check_process(*result, "the script");
  CHECK(checked.code() == ErrorCode::tool_failed);
  CHECK(contains(checked.message(), "the script: exited with status 3"));
  CHECK(contains(checked.message(), "err"));
}

TEST_CASE("run_process passes input, environment and working directory", "[process]") {
  devrt::Result<TempDir> dir = TempDir::create();
  REQUIRE(dir.ok());
  ProcessOptions options;
  options.argv = {"sh", "-c",
                  "cat; printf ' %s %s' \"$DEVRT_TEST_VALUE\" \"$(pwd)\"; [ -z \"$HOME\" ] && printf ' nohome'"};
  options.input = std::string(200000, 'x'); // larger than a pipe's buffer
  options.env = {"DEVRT_TEST_VALUE=42", "HOME"};
  options.working_directory = dir->path();
  devrt::Result<ProcessResult> result = run_process(options);
  REQUIRE(result.ok());
  CHECK(result->succeeded());
  CHECK(result->out == std::string(200000, 'x') + " 42 " + dir->path() + " nohome");
}

TEST_CASE("run_process reports a missing program and an empty command without running anything", "[process]") {
  ProcessOptions options;
  options.argv = {"devrt-no-such-program-anywhere"};
  devrt::Result<ProcessResult> missing = run_process(options);
  CHECK(missing.status().code() == ErrorCode::unavailable);
  CHECK(contains(missing.status().message(), "tool not found: devrt-no-such-program-anywhere"));
  CHECK(run_process(ProcessOptions{}).status().code() == ErrorCode::invalid_argument);
  options.argv = {"true"};
  options.working_directory = "/devrt/no/such/directory";
  devrt::Result<ProcessResult> bad_cwd = run_process(options);
  REQUIRE(!bad_cwd.ok());
  CHECK(contains(bad_cwd.status().message(), "/devrt/no/such/directory"));
}

TEST_CASE("run_process tells a signal from an exit", "[process]") {
  ProcessOptions options;
  options.argv = {"sh", "-c", "kill -SEGV $$"};
  devrt::Result<ProcessResult> result = run_process(options);
  REQUIRE(result.ok());
  CHECK(result->term_signal == SIGSEGV);
  CHECK(result->describe() == "killed by signal 11 (SIGSEGV)");
}

TEST_CASE("a timeout kills the whole process tree", "[process]") {
  devrt::Result<TempDir> dir = TempDir::create();
  REQUIRE(dir.ok());
  std::string pid_file = dir->relpath("grandchild.pid");
  ProcessOptions options;
  // The grandchild leaves the process group (setsid), so only the tree walk can find it.
  options.argv = {"sh", "-c", "setsid sleep 30 & echo $! > " + pid_file + "; sleep 30"};
  options.timeout = 300ms;
  auto start = std::chrono::steady_clock::now();
  devrt::Result<ProcessResult> result = run_process(options);
  REQUIRE(result.ok());
  CHECK(result->timed_out);
  CHECK(std::chrono::steady_clock::now() - start < 10s);
  CHECK(contains(result->describe(), "timed out after"));
  devrt::Result<std::string> pid_text = read_file(pid_file);
  REQUIRE(pid_text.ok());
  int grandchild = std::atoi(pid_text->c_str());
  REQUIRE(grandchild > 0);
  CHECK(wait_until_gone(grandchild));
}

TEST_CASE("find_program searches PATH", "[process]") {
  devrt::Result<std::string> sh = find_program("sh");
  REQUIRE(sh.ok());
  CHECK(sh->front() == '/');
  CHECK(find_program("/bin/sh").ok());
  CHECK(find_program("devrt-missing-tool").status().code() == ErrorCode::unavailable);
  devrt::Result<std::string> first = find_first_program({"devrt-missing-tool", "sh"});
  REQUIRE(first.ok());
  CHECK(*first == *sh);
  devrt::Result<std::string> none = find_first_program({"devrt-missing-a", "devrt-missing-b"});
  CHECK(contains(none.status().message(), "devrt-missing-a, devrt-missing-b"));
}

TEST_CASE("run_process is safe to call from several threads at once", "[process][concurrency]") {
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &good] {
      for (int i = 0; i < 10; ++i) {
        ProcessOptions options;
        options.argv = {"sh", "-c", "echo $0", std::to_string(t * 100 + i)};
        devrt::Result<ProcessResult> result = run_process(options);
        if (result.ok() && result->out == std::to_string(t * 100 + i) + "\n") good.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(good.load() == 40);
}
