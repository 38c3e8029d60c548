// SPDX-License-Identifier: Apache-2.0
// A pool of worker processes running jobs concurrently: each job has a timeout, a timed-out
// job's whole process tree is killed, a worker is recycled after N jobs, and a job that crashes
// its worker, exits it, times out or fails normally is reported as such (TVM's PopenWorker and
// PopenPoolExecutor). Part of devrt_toolchain.
//
// Workers are fork()ed from the calling process when first needed, so a job is a plain function
// of this program, run in isolation: a crash, a hang or a leak in it cannot harm the caller. As
// with any fork-based pool, create and use it before starting threads that hold locks a job needs.
#ifndef DEVRT_TOOLCHAIN_POOL_HPP
#define DEVRT_TOOLCHAIN_POOL_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <devrt/status.hpp>

namespace devrt::toolchain {

// A job's function, run in a worker process: reads `input`, writes `output`, returns ok or an
// error (a normal failure). It may also exit, crash or hang; the pool tells which.
using JobFunction = Status (*)(std::string_view input, std::string& output);

struct Job {
  JobFunction function = nullptr;
  std::string input;
  std::chrono::milliseconds timeout{0}; // 0: the pool's default_timeout
};

enum class JobState : std::uint8_t {
  succeeded, // the function returned ok; `output` holds what it wrote
  failed,    // the function returned an error; `status` is that error
  exited,    // the worker exited during the job (exit_code)
  crashed,   // the worker was killed by a signal during the job (term_signal)
  timed_out, // the job ran past its timeout; its worker and every process it started were killed
  not_run,   // the job was malformed (no function) or no worker could be started; `status` says why
};

// "succeeded", "timed_out", ...
std::string_view job_state_name(JobState state) noexcept;

struct JobResult {
  JobState state = JobState::not_run;
  std::string output;
  Status status; // ok for succeeded; otherwise what happened, in words
  int exit_code = 0;
  int term_signal = 0;
  std::chrono::nanoseconds elapsed{0};
};

struct PoolOptions {
  std::size_t workers = 0;                      // 0: the number of CPUs
  std::size_t max_jobs_per_worker = 0;          // 0: no limit; else a worker is replaced after this many jobs
  std::chrono::milliseconds default_timeout{0}; // 0: none
};

struct PoolStats {
  std::size_t workers_started = 0;
  std::size_t workers_recycled = 0; // retired after max_jobs_per_worker
  std::size_t workers_lost = 0;     // killed on timeout, crashed or exited
  std::size_t jobs_run = 0;
};

// Owns its worker processes and ends them when destroyed. run() is thread-safe (batches from
// several threads run one after another); move-only.
class ProcessPool {
public:
  static Result<ProcessPool> create(const PoolOptions& options = {}) noexcept;
  ProcessPool(ProcessPool&&) noexcept;
  ProcessPool& operator=(ProcessPool&&) noexcept;
  ~ProcessPool();

  // Runs every job, up to `workers` at a time, and returns their results in job order.
  std::vector<JobResult> run(std::span<const Job> jobs) noexcept;
  JobResult run_one(const Job& job) noexcept;

  PoolStats stats() const noexcept;
  std::size_t worker_count() const noexcept;

private:
  struct State;
  explicit ProcessPool(std::unique_ptr<State> state) noexcept;
  std::unique_ptr<State> state_;
};

} // namespace devrt::toolchain

#endif // DEVRT_TOOLCHAIN_POOL_HPP
