// SPDX-License-Identifier: Apache-2.0
#include <devrt/toolchain/files.hpp>
#include <devrt/toolchain/pool.hpp>
#include <devrt/toolchain/process.hpp>

#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>

#include <unistd.h>

#include "toolchain_test_util.hpp"

using devrt::ErrorCode;
using namespace devrt::toolchain;
using namespace std::chrono_literals;

namespace {

PoolOptions pool_options(std::size_t workers, std::size_t max_jobs = 0, std::chrono::milliseconds timeout = {}) {
  PoolOptions options;
  options.workers = workers;
  options.max_jobs_per_worker = max_jobs;
  options.default_timeout = timeout;
  return options;
}

devrt::Status square(std::string_view input, std::string& output) {
  long value = std::strtol(std::string(input).c_str(), nullptr, 10);
  output = std::to_string(value * value);
  return devrt::Status();
}
devrt::Status report_pid(std::string_view, std::string& output) {
  output = std::to_string(::getpid());
  return devrt::Status();
}
devrt::Status sleep_forever(std::string_view, std::string&) {
  std::this_thread::sleep_for(60s);
  return devrt::Status();
}
// Starts a grandchild in its own session (as a compiler driver might), writes its pid to the
// file named by `input`, then hangs.
devrt::Status spawn_and_hang(std::string_view input, std::string&) {
  pid_t child = ::fork();
  if (child == 0) {
    ::setsid();
    ::execlp("sleep", "sleep", "60", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  devrt::Status written = write_file(std::string(input), std::to_string(child));
  if (!written.ok()) return written;
  std::this_thread::sleep_for(60s);
  return devrt::Status();
}
devrt::Status crash(std::string_view, std::string&) {
  std::abort(); // a signal even under ASan, which turns SIGSEGV into its own report
}
devrt::Status exit_three(std::string_view, std::string&) { ::_exit(3); }
devrt::Status fail_normally(std::string_view input, std::string&) {
  return devrt::make_error(ErrorCode::invalid_argument, "cannot handle '", input, "'");
}

} // namespace

TEST_CASE("a pool runs many short jobs and returns results in job order", "[pool]") {
  devrt::Result<ProcessPool> pool = ProcessPool::create(pool_options(3));
  REQUIRE(pool.ok());
  std::vector<Job> jobs;
  for (int i = 0; i < 300; ++i) jobs.push_back(Job{&square, std::to_string(i), {}});
  std::vector<JobResult> results = pool->run(jobs);
  REQUIRE(results.size() == jobs.size());
  for (int i = 0; i < 300; ++i) {
    CHECK(results[i].state == JobState::succeeded);
    CHECK(results[i].output == std::to_string(i * i));
  }
  PoolStats stats = pool->stats();
  CHECK(stats.workers_started == 3);
  CHECK(stats.jobs_run == 300);
  CHECK(stats.workers_lost == 0);
}

TEST_CASE("a pool tells timeout, crash, exit and normal failure apart, and keeps going", "[pool]") {
  devrt::Result<TempDir> dir = TempDir::create();
  REQUIRE(dir.ok());
  std::string pid_file = dir->relpath("grandchild.pid");
  devrt::Result<ProcessPool> pool = ProcessPool::create(pool_options(2, 0, 20s));
  REQUIRE(pool.ok());
  std::vector<Job> jobs = {
      Job{&sleep_forever, "", 300ms},
      Job{&crash, "", {}},
      Job{&exit_three, "", {}},
      Job{&fail_normally, "bad input", {}},
      Job{&spawn_and_hang, pid_file, 500ms},
      Job{&square, "7", {}},
      Job{nullptr, "", {}},
  };
  auto start = std::chrono::steady_clock::now();
  std::vector<JobResult> results = pool->run(jobs);
  CHECK(std::chrono::steady_clock::now() - start < 15s);

  CHECK(results[0].state == JobState::timed_out);
  CHECK(results[0].elapsed >= 300ms);
  CHECK(contains(results[0].status.message(), "timed out after 300 ms"));
  CHECK(results[1].state == JobState::crashed);
  CHECK(results[1].term_signal == SIGABRT);
  CHECK(contains(results[1].status.message(), "SIGABRT"));
  CHECK(results[2].state == JobState::exited);
  CHECK(results[2].exit_code == 3);
  CHECK(results[3].state == JobState::failed);
  CHECK(results[3].status.code() == ErrorCode::invalid_argument);
  CHECK(results[3].status.message() == "cannot handle 'bad input'");
  CHECK(results[4].state == JobState::timed_out);
  CHECK(results[5].state == JobState::succeeded);
  CHECK(results[5].output == "49");
  CHECK(results[6].state == JobState::not_run);
  CHECK(results[6].status.code() == ErrorCode::invalid_argument);

  // The timed-out job's own child, in another session, was killed with it.
  devrt::Result<std::string> pid_text = read_file(pid_file);
  REQUIRE(pid_text.ok());
  CHECK(wait_until_gone(std::atoi(pid_text->c_str())));
  CHECK(pool->stats().workers_lost == 4); // two timeouts, a crash and an exit
  // The pool still works after losing workers.
  JobResult again = pool->run_one(Job{&square, "12", {}});
  CHECK(again.output == "144");
}

TEST_CASE("a worker is recycled after max_jobs_per_worker jobs", "[pool]") {
  devrt::Result<ProcessPool> pool = ProcessPool::create(pool_options(1, 3));
  REQUIRE(pool.ok());
  std::vector<Job> jobs(9, Job{&report_pid, "", {}});
  std::vector<JobResult> results = pool->run(jobs);
  std::set<std::string> pids;
  for (int i = 0; i < 9; ++i) {
    REQUIRE(results[i].state == JobState::succeeded);
    pids.insert(results[i].output);
    if (i % 3 != 0) CHECK(results[i].output == results[i - 1].output); // same worker within a group of 3
  }
  CHECK(pids.size() == 3);
  CHECK(pids.count(std::to_string(::getpid())) == 0); // never in the caller's process
  CHECK(pool->stats().workers_recycled == 3);
  CHECK(pool->stats().workers_started == 3);
}

TEST_CASE("job_state_name names every state", "[pool]") {
  CHECK(job_state_name(JobState::timed_out) == "timed_out");
  CHECK(job_state_name(JobState::crashed) == "crashed");
  CHECK(job_state_name(JobState::not_run) == "not_run");
}
