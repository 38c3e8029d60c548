// SPDX-License-Identifier: Apache-2.0
// Running external programs: one command with a timeout and captured output, finding programs
// on PATH, and killing a whole process tree. Part of devrt_toolchain (hosted platforms only).
#ifndef DEVRT_TOOLCHAIN_PROCESS_HPP
#define DEVRT_TOOLCHAIN_PROCESS_HPP

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include <devrt/status.hpp>

namespace devrt::toolchain {

// What to run. argv[0] without a '/' is looked up on PATH (the child's PATH when `env` sets one).
struct ProcessOptions {
  std::vector<std::string> argv;
  // "NAME=value" entries that replace or extend the inherited environment ("NAME" alone unsets it).
  std::vector<std::string> env;
  bool inherit_environment = true;
  std::string working_directory; // empty: the caller's
  std::string input;             // written to the child's stdin, which is then closed
  // 0: no limit. On expiry the child and every process it started are killed (SIGKILL).
  std::chrono::milliseconds timeout{0};
};

// How a process ended and what it printed. A plain value.
struct ProcessResult {
  int exit_code = -1;  // valid when the process exited (term_signal == 0 and not timed_out)
  int term_signal = 0; // the signal that ended it, or 0
  bool timed_out = false;
  std::string out;
  std::string err;
  std::chrono::nanoseconds elapsed{0};

  bool succeeded() const noexcept { return !timed_out && term_signal == 0 && exit_code == 0; }
  // "exited with status 2", "killed by signal 11 (SIGSEGV)", "timed out after 200 ms".
  std::string describe() const;
};

// Runs a command to completion (or its timeout), capturing stdout and stderr. The error cases
// are the ones where nothing ran: `invalid_argument` for an empty argv, `unavailable` ("tool not
// found") for a program not on PATH, `internal` when the OS refuses to start it. A program that
// fails is a successful call with a failed ProcessResult. Thread-safe.
Result<ProcessResult> run_process(const ProcessOptions& options) noexcept;

// Turns a finished process into a Status: ok when it succeeded, else `tool_failed` naming `what`,
// how it ended, and its stderr then stdout (the tool's own words). Thread-safe.
Status check_process(const ProcessResult& result, std::string_view what) noexcept;

// Shorthand: runs argv (with an optional timeout) and returns its stdout when it succeeded, else
// check_process's error. Thread-safe.
Result<std::string> run_and_capture(std::vector<std::string> argv, std::chrono::milliseconds timeout = {}) noexcept;

// The absolute path of `name` on PATH (or `name` itself when it holds a '/' and is executable);
// `unavailable` "tool not found: NAME (searched PATH)" otherwise. Thread-safe.
Result<std::string> find_program(std::string_view name) noexcept;

// The first of `names` found on PATH; `unavailable` listing every candidate otherwise.
Result<std::string> find_first_program(const std::vector<std::string>& names) noexcept;

// Sends SIGKILL to `pid`, to every process descending from it (read from /proc, with the tree
// stopped first so that it cannot fork away) and to its process group when it leads one. Does
// not reap `pid`. Thread-safe.
Status kill_process_tree(int pid) noexcept;

} // namespace devrt::toolchain

#endif // DEVRT_TOOLCHAIN_PROCESS_HPP
